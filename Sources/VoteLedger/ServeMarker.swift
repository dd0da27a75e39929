import Foundation
import Ledger

/// The `serve` file a running `vote serve` keeps in the ledger directory: its process id and address. A CLI
/// write command reads it before it waits for the writer lock, so it fails at once with one line saying
/// which server holds the ledger, instead of waiting 10 seconds for a lock that will not be released.
public enum ServeMarker {
    static let fileName = "serve"

    /// Records that process `pid` serves the ledger at `path` on `address` (after it holds the writer lock).
    public static func write(ledger path: String, pid: Int32, address: String) throws {
        try ElectionLedger.wrap {
            try ProtectedFile.replace(path + "/" + fileName, contents: Array("pid \(pid)\naddress \(address)\n".utf8))
        }
    }

    /// Removes the marker (on shutdown, after the ledger is closed).
    public static func remove(ledger path: String) {
        unlink(path + "/" + fileName)
    }

    /// Throws `.busy` naming the server if a live `vote serve` holds the ledger at `path`. A marker left by
    /// a server that died (SIGKILL) names a process that no longer exists and is ignored: its lock is gone.
    public static func check(ledger path: String) throws {
        guard let bytes = ProtectedFile.read(path + "/" + fileName) else { return }
        var pid: Int32?
        var address = "an unknown address"
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            if line.hasPrefix("pid ") { pid = Int32(line.dropFirst(4)) }
            if line.hasPrefix("address ") { address = String(line.dropFirst(8)) }
        }
        guard let pid, pid > 0, pid != getpid(), kill(pid, 0) == 0 || errno == EPERM else { return }
        throw VoteError(
            .busy(holder: pid),
            "the ledger is served by vote serve (pid \(pid)) at \(address); use its HTTP API, or stop it first")
    }
}
