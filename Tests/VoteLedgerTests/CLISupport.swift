import Foundation
import TestSupport
import Testing

/// Runs the built `vote` binary (it sits beside the test bundle in the build directory).
enum VoteCLI {
    typealias Result = ProgramRun

    static let path = builtProgram("vote")

    /// Whether `vote-serve`, which `vote serve` and `vote admin-token` run, was built beside `vote`: the core-only
    /// build (`VOTE_WITHOUT_SERVER=1`, CI's sanitizer passes) leaves it out, and the tests of those commands with it.
    static let serverBuilt = FileManager.default.isExecutableFile(
        atPath: (path as NSString).deletingLastPathComponent + "/vote-serve")

    /// The environment `vote` runs with in tests, plus `extra`.
    static func environment(_ extra: [String: String] = [:]) -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "VOTE_LEDGER")
        env.removeValue(forKey: "VOTE_PASSPHRASE")
        // Remembered heads go to a throwaway state directory, never the user's.
        env["VOTE_STATE_DIR"] = NSTemporaryDirectory() + "vote-test-state"
        for (key, value) in extra { env[key] = value }
        return env
    }

    /// Starts `vote` with `arguments` (in `directory`, else this process's working directory); the caller waits.
    static func start(
        _ arguments: [String], environment: [String: String] = [:], directory: String? = nil
    ) throws -> (Process, Pipe, Pipe) {
        try startProgram(path, arguments, environment: VoteCLI.environment(environment), directory: directory)
    }

    /// Runs `vote` to completion.
    @discardableResult
    static func run(
        _ arguments: [String], environment: [String: String] = [:], directory: String? = nil
    ) throws -> Result {
        try runToCompletion(path, arguments, environment: VoteCLI.environment(environment), directory: directory)
    }

    static func finish(_ process: Process, _ out: Pipe, _ err: Pipe) -> Result { finishProgram(process, out, err) }
}

/// A temporary ledger directory driven through the CLI.
final class TestElection {
    let root: String
    let ledger: String

    init() throws {
        var template = Array("/tmp/vote-test-XXXXXX".utf8CString)
        precondition(template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) } != nil)
        root = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        ledger = root + "/ledger"
        let created = try vote(["init", "--name", "Test Union", "--no-passphrase"])
        precondition(created.status == 0, created.err)
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    /// How far ahead of the real clock this election's clock runs, in ms. It only grows (see `advance(to:)`).
    private(set) var clockOffset: Int64 = 0

    /// The environment every `vote` run of this election gets: its clock (honoured by debug builds only).
    var environment: [String: String] { ["VOTE_TEST_CLOCK_OFFSET_MS": String(clockOffset)] }

    /// Now on this election's clock.
    var now: Date { Date().addingTimeInterval(Double(clockOffset) / 1000) }

    /// Moves this election's clock just past `date` (a time on that clock), as if the test had slept until
    /// then. Nothing sleeps, so no window opens or closes because the machine is slow.
    func advance(to date: Date) {
        let needed = Int64(((date.timeIntervalSinceNow) * 1000).rounded(.up)) + 1
        clockOffset = max(clockOffset, needed)
    }

    /// Starts `vote` against this ledger, on this election's clock; the caller waits.
    func start(_ arguments: [String]) throws -> (Process, Pipe, Pipe) {
        try VoteCLI.start(arguments + ["--ledger", ledger], environment: environment)
    }

    /// Runs `vote` against this ledger, on this election's clock.
    @discardableResult
    func vote(_ arguments: [String]) throws -> VoteCLI.Result {
        try VoteCLI.run(arguments + ["--ledger", ledger], environment: environment)
    }

    /// Runs `vote`, requiring success; returns stdout.
    @discardableResult
    func ok(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let result = try vote(arguments)
        #expect(
            result.status == 0, "vote \(arguments.joined(separator: " ")): \(result.err)",
            sourceLocation: sourceLocation)
        return result.out
    }

    /// Creates a place whose registration is open now for `registration` seconds, then voting for `voting`
    /// seconds, on this election's clock. Returns when voting opens (pass it to `advance(to:)`).
    func place(
        name: String = "Board", registration: Int = 3600, voting: Int = 3600, extra: [String] = []
    ) throws -> Date {
        let start = now
        let opensAt = start.addingTimeInterval(Double(registration))
        let closesAt = opensAt.addingTimeInterval(Double(voting))
        try ok(
            [
                "place", "create", "--name", name, "--registration", "\(iso(start))/\(iso(opensAt))",
                "--voting", "\(iso(opensAt))/\(iso(closesAt))",
            ] + extra)
        return opensAt
    }

    private func iso(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }

    /// Authorises `identity` and returns the printed token (recorded for the CI secrets grep).
    func authorize(_ identity: String, place: Int = 1) throws -> String {
        let token = try ok(["voter", "authorize", "--place", String(place), "--voter", identity])
            .trimmingCharacters(in: .whitespacesAndNewlines)
        SecretsLog.record(token)
        return token
    }

    /// The ledger's key directory (the default: beside the ledger).
    var keys: String { ledger + ".keys" }

    /// Bytes of every file that holds ledger facts (segments and key material), to prove nothing was written.
    func fingerprint() throws -> [String: Data] {
        var files: [String: Data] = [:]
        for name in try FileManager.default.contentsOfDirectory(atPath: ledger)
        where name.hasSuffix(".vlseg") || name.hasPrefix("authority") {
            files[name] = FileManager.default.contents(atPath: ledger + "/" + name)
        }
        for name in try FileManager.default.contentsOfDirectory(atPath: keys) {
            files["keys/" + name] = FileManager.default.contents(atPath: keys + "/" + name)
        }
        return files
    }

    func write(_ name: String, _ text: String) -> String {
        let path = root + "/" + name
        precondition(FileManager.default.createFile(atPath: path, contents: Data(text.utf8)))
        return path
    }
}

/// Decodes a JSON document printed by `vote --json`.
func json(_ text: String) throws -> Any {
    try JSONSerialization.jsonObject(with: Data(text.utf8))
}

/// Deletes the ledger directory at `path` and its default key directory beside it (`LEDGER.keys`).
func removeLedger(_ path: String) {
    for directory in [path, path + ".keys"] { try? FileManager.default.removeItem(atPath: directory) }
}
