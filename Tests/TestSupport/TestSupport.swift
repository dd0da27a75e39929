public import Foundation

// What every test target shares: running programs, finding the built ones, scratch directories, a seeded
// generator. One copy here instead of one per test target.

/// What a program run to completion left: its exit status and everything it wrote.
public struct ProgramRun: Sendable {
    public var status: Int32
    public var out: String
    public var err: String

    public init(status: Int32, out: String, err: String) {
        self.status = status
        self.out = out
        self.err = err
    }
}

/// Runs the program at `executable` with `arguments` to completion (with `environment`, else this process's;
/// in `directory`, else this process's working directory): status, stdout, stderr.
@discardableResult
public func runToCompletion(
    _ executable: String, _ arguments: [String], environment: [String: String]? = nil, directory: String? = nil
) throws -> ProgramRun {
    let (process, out, err) = try startProgram(executable, arguments, environment: environment, directory: directory)
    return finishProgram(process, out, err)
}

/// Starts the program at `executable`, its output piped; `finishProgram` waits for it.
public func startProgram(
    _ executable: String, _ arguments: [String], environment: [String: String]? = nil, directory: String? = nil
) throws -> (Process, Pipe, Pipe) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let environment { process.environment = environment }
    if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    return (process, out, err)
}

/// Reads a started program's output to its end and waits for it to exit.
public func finishProgram(_ process: Process, _ out: Pipe, _ err: Pipe) -> ProgramRun {
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    let errData = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return ProgramRun(
        status: process.terminationStatus, out: String(decoding: outData, as: UTF8.self),
        err: String(decoding: errData, as: UTF8.self))
}

/// Runs `command` with /bin/sh (mounting a tmpfs, say): its exit status and its output and errors together.
public func shell(_ command: String) -> (status: Int32, output: String) {
    guard let run = try? runToCompletion("/bin/sh", ["-c", command + " 2>&1"]) else {
        return (-1, "cannot run /bin/sh")
    }
    return (run.status, run.out.trimmingCharacters(in: .whitespacesAndNewlines))
}

/// The path of the program `name` this package built (`vote`, `ledger-tool`): it sits beside the test bundle,
/// or a directory or two above it.
public func builtProgram(_ name: String) -> String {
    var directory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
    while !FileManager.default.fileExists(atPath: directory.appendingPathComponent(name).path), directory.path != "/" {
        directory = directory.deletingLastPathComponent()
    }
    return directory.appendingPathComponent(name).path
}

/// A fresh directory under the system temporary directory, removed when the value goes away.
public final class TemporaryDirectory {
    public let path: String

    public init() { path = makeTemporaryDirectory() }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    /// A path inside the directory.
    public func child(_ name: String) -> String { path + "/" + name }
}

/// A fresh directory under the system temporary directory, for the caller to remove.
public func makeTemporaryDirectory() -> String {
    var template = Array((NSTemporaryDirectory() + "vote-test-XXXXXX").utf8CString)
    let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
    precondition(made != nil, "cannot create a temporary directory")
    return String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// SplitMix64 (Steele, Lea and Flood, 2014): a tiny generator with a fixed seed, so every run checks the same
/// sequences and a failure names the seed that reproduces it.
public struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform integer in `range`.
    public mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &self) }

    /// `true` with probability `percent` / 100.
    public mutating func chance(_ percent: Int) -> Bool { int(0...99) < percent }

    /// A uniform element of a non-empty array.
    public mutating func pick<T>(_ elements: [T]) -> T { elements[int(0...elements.count - 1)] }
}

/// The calling thread's nice value (on Linux the thread's own; `who` 0 is the calling thread).
public func currentThreadNice() -> Int32 { getpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0) }
