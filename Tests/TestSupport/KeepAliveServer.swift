import Foundation

/// `Tests/keepalive/keepalive_server.py` as a process: a loopback HTTP/1.1 server (over TLS with a certificate)
/// or TCP proxy that logs every connection it accepts, every TLS handshake and every request, so a test can count
/// what a client cost it. See the script for the paths it answers.
public final class KeepAliveServer {
    public let port: Int
    private let process = Process()
    private let logFile: String

    /// Starts the script with `arguments` (`--cert`/`--key`, `--proxy PORT`), its log in `directory`, and waits
    /// for its "listening" line.
    public init(_ arguments: [String] = [], in directory: String) throws {
        logFile = directory + "/keepalive-\(UUID().uuidString).log"
        _ = FileManager.default.createFile(atPath: logFile, contents: nil)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("keepalive/keepalive_server.py").path
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", script, "--log", logFile] + arguments
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        var line = Data()
        while !line.contains(10) {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line += chunk
        }
        let text = String(decoding: line, as: UTF8.self)
        guard text.hasPrefix("listening "), let port = Int(text.dropFirst(10).prefix { $0.isNumber }) else {
            process.terminate()
            throw WaitTimedOut("keepalive_server.py to listen", deadline: .zero, last: text)
        }
        self.port = port
    }

    deinit {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
    }

    /// The lines logged so far.
    public var log: [String] {
        (try? String(contentsOfFile: logFile, encoding: .utf8))?.split(separator: "\n").map(String.init) ?? []
    }

    /// How many logged lines are `line`.
    public func count(_ line: String) -> Int { log.filter { $0 == line }.count }

    /// Asks the proxy to close every connection it holds (SIGUSR1) and waits until it says it has.
    public func closeConnections() throws {
        let before = log.filter { $0.hasPrefix("closed ") }.count
        kill(process.processIdentifier, SIGUSR1)
        try waitForBlocking("the proxy to close its connections", read: { self.log }) {
            $0.filter { $0.hasPrefix("closed ") }.count > before
        }
    }
}
