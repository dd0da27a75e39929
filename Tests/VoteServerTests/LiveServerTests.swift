import FileDriver
import Foundation
import Hummingbird
import HummingbirdTesting
import TestSupport
import Testing
import VoteLedger

/// Runs the built `vote` binary (it sits beside the test bundle in the build directory).
enum VoteBinary {
    static let path = builtProgram("vote")

    static func environment(clockOffset: Int64) -> [String: String] {
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "VOTE_LEDGER")
        env.removeValue(forKey: "VOTE_PASSPHRASE")
        env["VOTE_STATE_DIR"] = NSTemporaryDirectory() + "vote-serve-test-state"
        env["VOTE_TEST_CLOCK_OFFSET_MS"] = String(clockOffset)
        return env
    }

    /// Runs `vote` to completion: status, stdout, stderr.
    @discardableResult
    static func run(_ arguments: [String], clockOffset: Int64 = 0) throws -> ProgramRun {
        try runToCompletion(path, arguments, environment: environment(clockOffset: clockOffset))
    }
}

/// A `vote` program that serves on an ephemeral loopback port (`vote serve`, `vote witness serve`): started
/// with its standard error (the access log) and its standard output drained as they come, so a busy server
/// never blocks on a full pipe, once its first line ("listening on …", the signal: no sleep) has come.
final class ServedProgram {
    let process = Process()
    /// The first line of standard output.
    let firstLine: String
    private let out = Pipe()
    private let err = Pipe()
    let errors = Collected()
    /// Standard output, its first line included.
    let output = Collected()

    init(_ arguments: [String], clockOffset: Int64) throws {
        process.executableURL = URL(fileURLWithPath: VoteBinary.path)
        process.arguments = arguments
        process.environment = VoteBinary.environment(clockOffset: clockOffset)
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let errors = errors
        let errReader = err.fileHandleForReading
        Thread.detachNewThread {
            while true {
                let chunk = errReader.availableData
                if chunk.isEmpty { break }
                errors.append(chunk)
            }
            errors.finish()
        }
        var line = Data()
        let reader = out.fileHandleForReading
        while !line.contains(10) {
            let chunk = reader.availableData
            if chunk.isEmpty {
                process.waitUntilExit()
                throw VoteError(
                    .io,
                    "vote \(arguments.prefix(2).joined(separator: " ")) exited before listening: \(errors.waitForEnd())"
                )
            }
            line.append(chunk)
        }
        output.append(line)
        let output = output
        Thread.detachNewThread {
            while true {
                let chunk = reader.availableData
                if chunk.isEmpty { break }
                output.append(chunk)
            }
            output.finish()
        }
        firstLine = String(decoding: line.prefix { $0 != 10 }, as: UTF8.self)
    }

    /// Sends `signal` (none: it was sent already), then waits for the exit; the status and standard error.
    func stop(sending signal: Int32?) -> (status: Int32, err: String) {
        if let signal { kill(process.processIdentifier, signal) }
        process.waitUntilExit()
        return (process.terminationStatus, errors.waitForEnd())
    }
}

/// A real `vote serve` process on an ephemeral loopback port.
final class ServeProcess {
    let program: ServedProgram
    var process: Process { program.process }
    let port: Int
    /// `http`, or `https` when it serves TLS.
    let scheme: String

    /// Starts `vote serve` on `ledger` with its clock `clockOffset` ms ahead and `arguments` besides the
    /// test's own, and waits for its "listening on" line (no sleep: the line is the signal).
    convenience init(ledger: String, clockOffset: Int64, adminTokenFile: String, arguments: [String] = []) throws {
        try self.init(
            location: ["--ledger", ledger], clockOffset: clockOffset, adminTokenFile: adminTokenFile,
            arguments: arguments)
    }

    /// Starts `vote serve` on the ledger `location` names (`--ledger DIR`, or `--store URL --keys DIR`), as
    /// `init(ledger:…)`.
    init(location: [String], clockOffset: Int64, adminTokenFile: String, arguments: [String] = []) throws {
        // An hour's idle and head timeouts: these tests are not about them (HostileClientTests is), and a test task
        // that a loaded machine leaves waiting for half a minute must not find its keep-alive connection closed.
        program = try ServedProgram(
            [
                "serve", "--listen", "127.0.0.1:0", "--admin-token-file", adminTokenFile, "--idle-timeout", "3600",
                "--head-timeout", "3600",
            ] + location + arguments, clockOffset: clockOffset)
        let text = program.firstLine
        guard let range = text.range(of: "://127.0.0.1:"), let listening = text.range(of: "listening on "),
            let port = Int(text[range.upperBound...].prefix { $0.isNumber })
        else { throw VoteError(.io, "unexpected first line from vote serve: \(text)") }
        self.port = port
        scheme = String(text[listening.upperBound..<range.lowerBound])
    }

    /// Waits until the server's standard error contains `text` (or it has ended).
    func waitForError(containing text: String) { program.errors.wait(containing: text) }

    /// Waits until the server's standard output contains `text` (or it has ended), and returns the output so far.
    func waitForOutput(containing text: String) -> String {
        program.output.wait(containing: text)
        return program.output.text
    }

    /// Sends `signal` (none: it was sent already), then waits for the exit. A graceful stop (SIGTERM) must
    /// exit 0. Returns the status and its standard error (the access log).
    func stop(sending signal: Int32? = SIGTERM) -> (status: Int32, err: String) { program.stop(sending: signal) }

    /// A new HTTP connection to the server.
    func client() -> TestClient { ServeProcess.client(port: port) }

    /// A new HTTP connection to the server on `port` that waits as long as a loaded machine may need for an
    /// answer (the test client's own default gives up after 15 s).
    static func client(port: Int) -> TestClient {
        let client = TestClient(host: "127.0.0.1", port: port, configuration: .init(timeout: .seconds(600)))
        client.connect()
        return client
    }
}

/// Bytes a reader thread collects, and the signal that it reached the end.
final class Collected: @unchecked Sendable {
    private let condition = NSCondition()
    private var data = Data()
    private var ended = false

    func append(_ chunk: Data) {
        condition.withLock {
            data.append(chunk)
            condition.broadcast()
        }
    }
    func finish() {
        condition.withLock {
            ended = true
            condition.broadcast()
        }
    }
    /// Waits until what has come so far contains `text`, or the writer has closed its end.
    func wait(containing text: String) {
        condition.withLock {
            while !ended && !String(decoding: data, as: UTF8.self).contains(text) { condition.wait() }
        }
    }
    /// What has come so far.
    var text: String { condition.withLock { String(decoding: data, as: UTF8.self) } }
    /// Everything, once the writer has closed its end.
    func waitForEnd() -> String {
        condition.withLock {
            while !ended { condition.wait() }
            return String(decoding: data, as: UTF8.self)
        }
    }
}

/// The whole election over HTTP against the real binary: the admin creates a place, candidates and voters,
/// voters vote (64 at once, and 64 at once with one token), anyone audits a receipt with `vote audit`.
@Suite(.serialized) struct LiveServerTests {
    /// `vote serve` and `vote admin-token` run `vote-serve` from `vote`'s directory with their arguments, help
    /// included; without it there, `vote serve` says which program it needs, in one line, and exits 1.
    @Test func voteRunsTheServerProgramBesideIt() throws {
        let help = try VoteBinary.run(["serve", "--help"])
        #expect(help.status == 0)
        #expect(help.out.contains("--listen") && help.out.contains("USAGE: vote serve"), "\(help.out)")
        let rotateHelp = try VoteBinary.run(["admin-token", "rotate", "--help"])
        #expect(rotateHelp.out.contains("--admin-token-file"), "\(rotateHelp.out)")

        let alone = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: alone) }
        try FileManager.default.copyItem(atPath: VoteBinary.path, toPath: alone + "/vote")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: alone + "/vote")
        process.arguments = ["serve", "--listen", "127.0.0.1:0", "--ledger", alone + "/ledger"]
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 1)
        #expect(message.hasPrefix("vote: vote serve runs \(alone)/vote-serve, which cannot be started"), "\(message)")
        #expect(message.split(separator: "\n").count == 1)
    }

    /// `vote serve --keys DIR` signs with the key in DIR and keeps the admin token's hash there: nothing secret
    /// in the ledger directory, no default key directory made, and the admin routes take the token it wrote.
    @Test func serveUsesTheKeyDirectoryGiven() async throws {
        let root = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let (ledger, keys, tokenFile) = (root + "/ledger", root + "/vault", root + "/admin-token")
        let created = try VoteBinary.run(["init", "--ledger", ledger, "--keys", keys, "--no-passphrase"])
        #expect(created.status == 0, "\(created.err)")
        let server = try ServeProcess(
            ledger: ledger, clockOffset: 0, adminTokenFile: tokenFile, arguments: ["--keys", keys])
        let admin = try String(contentsOfFile: tokenFile, encoding: .utf8).trimmingCharacters(
            in: .whitespacesAndNewlines)
        SecretsLog.record([admin])
        #expect(FileManager.default.fileExists(atPath: keys + "/admin-token.sha256"))
        #expect(!FileManager.default.fileExists(atPath: ledger + ".keys"))
        #expect(LedgerKeys.secrets(in: ledger).isEmpty)
        let place = try await server.client().post(
            "/api/v1/places", headers: adminHeaders(admin), body: body(placeBody(from: Clock.now())))
        #expect(place.status == .created)
        #expect(server.stop().status == 0)
    }

    @Test func wholeElectionOverHTTP() async throws {
        // Absolute windows an hour apart; each phase starts the server with its clock moved past the boundary.
        let election = try ProcessLedger("Live Union")
        let ledger = election.ledger

        // Phase 1: registration.
        let (admin, tokens) = try await election.register(
            candidates: ["Ada", "Grace"], voters: (1...130).map { "member-\($0)" }
        ) { registration in
            // A CLI write command fails at once, naming the server.
            let refused = try VoteBinary.run(
                ["candidate", "register", "--place", "1", "--name", "X", "--ledger", ledger])
            #expect(refused.status == 4)
            #expect(refused.err.contains("pid \(registration.process.processIdentifier)"))
            #expect(refused.err.contains("127.0.0.1:\(registration.port)"))
        }
        #expect(tokens.count == 130)
        let auth = adminHeaders(admin)

        // Phase 2: voting.
        let voting = try election.serve(offset: hour + 1000)
        let receiptText: String
        do {
            let client = voting.client()
            let first = try await client.post(
                "/api/v1/places/1/votes", headers: jsonHeaders, body: body(["candidate": 1, "token": tokens[0]]))
            #expect(first.status == .created)
            receiptText = object(first.body)["receipt"] as? String ?? ""
            let again = try await client.post(
                "/api/v1/places/1/votes", headers: jsonHeaders, body: body(["candidate": 2, "token": tokens[0]]))
            #expect(again.status == .conflict)
            #expect(errorCode(again.body) == "already_voted")
            try await client.shutdown()
        }
        // 64 concurrent clients, distinct tokens: every one is counted once.
        let port = voting.port
        let distinct = try await castAtOnce(port, tokens[1...64].map { (candidate: 2, token: $0) })
        #expect(distinct.allSatisfy { $0 == .created })
        // 64 concurrent clients, one token: exactly one vote counts.
        let same = try await castAtOnce(port, Array(repeating: (candidate: 1, token: tokens[65]), count: 64))
        #expect(same.filter { $0 == .created }.count == 1)
        #expect(same.filter { $0 == .conflict }.count == 63)

        // The receipt received over HTTP checks out with `vote audit`, while the server runs.
        let receiptFile = election.root + "/vote.tlog-proof"
        try receiptText.write(toFile: receiptFile, atomically: true, encoding: .utf8)
        let audit = try VoteBinary.run(["audit", receiptFile, "--ledger", ledger], clockOffset: hour + 1000)
        #expect(audit.status == 0, "\(audit.err)")
        let voteStopped = voting.stop()
        #expect(voteStopped.status == 0, "\(voteStopped.err)")
        for token in tokens { #expect(!voteStopped.err.contains(token), "a voting token reached the log") }

        // Phase 3: voting has closed; certify and read the tally.
        let closed = try election.serve(offset: 2 * hour + 1000)
        do {
            let client = closed.client()
            let certified = try await client.post("/api/v1/places/1/certify", headers: auth, body: ByteBuffer())
            #expect(certified.status == .ok)
            let tally = object(try await client.get("/api/v1/places/1/tally").body)
            let rows = tally["tally"] as? [[String: Any]] ?? []
            #expect(rows.map { $0["votes"] as? Int } == [2, 64])
            #expect((tally["turnout"] as? [String: Any])?["voted"] as? Int == 66)
            let head = try await client.get("/api/v1/head")
            #expect(String(buffer: head.body ?? ByteBuffer()).hasPrefix("voteledger/"))
            try await client.shutdown()
        }
        // A rotated admin token takes effect at once; the old one is refused.
        let rotated = try VoteBinary.run(["admin-token", "rotate", "--ledger", ledger])
        #expect(rotated.status == 0, "\(rotated.err)")
        let newAdmin = rotated.out.trimmingCharacters(in: .whitespacesAndNewlines)
        SecretsLog.record([newAdmin])
        do {
            let client = closed.client()
            let stale = try await client.post("/api/v1/places/1/certify", headers: auth, body: ByteBuffer())
            #expect(stale.status == .forbidden)
            let fresh = try await client.post(
                "/api/v1/places/1/certify", headers: [.authorization: "Bearer \(newAdmin)"], body: ByteBuffer())
            #expect(errorCode(fresh.body) == "results_already_certified")
            try await client.shutdown()
        }
        let closedStopped = closed.stop()
        #expect(closedStopped.status == 0)
        #expect(!closedStopped.err.contains(newAdmin), "the admin token reached the log")
        #expect(!FileManager.default.fileExists(atPath: ledger + "/serve"))
        let verified = try VoteBinary.run(["verify", "--ledger", ledger], clockOffset: 2 * hour + 1000)
        #expect(verified.status == 0, "\(verified.err)")
    }

    /// Sends every vote to place 1 at once, each from its own client on its own connection; their statuses.
    private func castAtOnce(
        _ port: Int, _ votes: [(candidate: Int, token: String)]
    ) async throws
        -> [HTTPResponse.Status]
    {
        try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
            for vote in votes {
                group.addTask {
                    try await fetch(
                        port, "/api/v1/places/1/votes", .post, headers: jsonHeaders,
                        body: body(["candidate": vote.candidate, "token": vote.token])
                    ).status
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }
}
