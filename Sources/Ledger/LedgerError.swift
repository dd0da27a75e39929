/// Why a ledger operation failed, in one line a person can act on. Never carries secrets.
public enum LedgerError: Error, Equatable, CustomStringConvertible {
    /// The path holds no ledger (missing, not a directory, no segments, not a ledger file).
    case notALedger(path: String, reason: String)
    /// Another process holds the writer lock.
    case busy(pid: Int32?)
    /// A block before the tail is unreadable or fails a check: tampering or media damage. Never repaired.
    case damaged(height: UInt64, file: String, offset: UInt64, reason: String)
    /// The authority key is missing, unreadable, unprotected or not this ledger's key.
    case key(String)
    /// The authority key is encrypted and no passphrase was given (a caller may ask for one and try again).
    case passphraseRequired(String)
    /// The ledger directory, or a file in it, is open to someone other than its writer: writable by group or
    /// others, owned by another user, or a symbolic link (which the store never follows).
    case unprotected(String)
    /// An operating-system call failed (the message names the file and the call).
    case io(String)
    /// A write found the disk (or the user's quota) full: it may succeed once space is freed. The message
    /// names the file and the call.
    case noSpace(String)
    /// The caller asked for something the format does not allow (too large, reserved type, …).
    case invalidRequest(String)
    /// Another writer of a store that several processes write (PostgreSQL) appended first: nothing of this
    /// block was written. (`BlockAppender.write(deciding:)` decides under the head, so a writer that uses it never
    /// sees this; a plain `append` can.)
    case headMoved(String)
    /// A store that keeps the voter roll beside the chain (PostgreSQL's `vote_roll`) holds a row for a key the
    /// block changes that is not what the chain gives: the row was changed outside the ledger. Nothing of the
    /// block was written; the writer writes the block's other commands without the one that changes `key`
    /// (its `previous` and `entry` are what the writer expected and meant to write).
    case rollDisagrees(key: RollChange, String)

    public var description: String {
        switch self {
        case .notALedger(let path, let reason): return "\(path): not a ledger: \(reason)"
        case .busy(let pid):
            return pid.map { "ledger is in use by process \($0)" } ?? "ledger is in use by another process"
        case .damaged(let height, let file, let offset, let reason):
            return "block \(height): \(reason) (\(file), byte offset \(offset))"
        case .key(let message), .passphraseRequired(let message), .unprotected(let message), .io(let message),
            .noSpace(let message), .invalidRequest(let message), .headMoved(let message),
            .rollDisagrees(_, let message):
            return message
        }
    }
}
