import Foundation
import VoteLedger

/// The `serve` file a running `vote serve` keeps in the ledger directory: its process id and address, and a
/// lock (flock) the server holds on it for as long as its process lives. A CLI write command checks it before
/// it waits for the writer lock, so it fails at once with one line saying which server holds the ledger,
/// instead of waiting 10 seconds for a lock that will not be released. The kernel drops the lock when the
/// server's process ends, however it ends (SIGKILL too), so a file left behind blocks no one, whichever
/// process now has the pid it names.
public final class ServeMarker: Sendable {
    static let fileName = "serve"

    private let path: String
    private let descriptor: Int32

    /// Records that this process, which holds the writer lock of the ledger at `ledger`, serves it, and locks
    /// the record until the marker goes away. The file appears whole and locked (written under a temporary
    /// name, then renamed), so a CLI writer never finds it unlocked while the server runs.
    public init(ledger: String) throws {
        path = ledger + "/" + ServeMarker.fileName
        let temporary = path + ".tmp"
        unlink(temporary)
        let fd = open(temporary, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw VoteError.system("cannot create \(temporary)", errno: errno) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0, ServeMarker.put("pid \(getpid())\n", fd),
            rename(temporary, path) == 0
        else {
            let code = errno
            close(fd)
            unlink(temporary)
            throw VoteError.system("cannot create \(path)", errno: code)
        }
        descriptor = fd
    }

    deinit { close(descriptor) }

    /// Adds the address the server listens on (once its socket accepts connections).
    public func announce(_ address: String) throws {
        guard ServeMarker.put("pid \(getpid())\naddress \(address)\n", descriptor) else {
            throw VoteError.system("cannot write \(path)", errno: errno)
        }
    }

    /// Removes the marker (on shutdown, after the ledger is closed); the lock goes with the marker.
    public func remove() {
        unlink(path)
    }

    /// Throws `.busy` naming the server if a live `vote serve` holds the ledger at `path`: one that holds the
    /// marker's lock. A marker left by a server that died is not locked and is ignored.
    public static func check(ledger path: String) throws {
        let fd = open(path + "/" + fileName, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        guard flock(fd, LOCK_SH | LOCK_NB) != 0, errno == EWOULDBLOCK else { return }
        var bytes = [UInt8](repeating: 0, count: 4096)
        let count = max(0, pread(fd, &bytes, bytes.count, 0))
        var pid: Int32?
        var address = "an address not yet known"
        for line in String(decoding: bytes[..<count], as: UTF8.self).split(separator: "\n") {
            if line.hasPrefix("pid ") { pid = Int32(line.dropFirst(4)) }
            if line.hasPrefix("address ") { address = String(line.dropFirst(8)) }
        }
        throw VoteError(
            .busy(holder: pid),
            "the ledger is served by vote serve\(pid.map { " (pid \($0))" } ?? "") at \(address); use its HTTP API, or stop it first"
        )
    }

    /// Writes `text` at the start of the file (a record that only grows, so a reader sees a whole line or a
    /// prefix of it); whether all of it was written.
    private static func put(_ text: String, _ fd: Int32) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.count == bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 0) }
    }
}
