public import Election
import Foundation
public import Ledger

/// A failure of a VoteLedger operation: what kind of failure it is (`reason`, which a front end maps to its
/// own codes: the CLI to exit codes, a server to HTTP statuses) and one line for a person (`message`). The
/// message never holds a token, identity or passphrase, and nothing decides control flow by its text.
public struct VoteError: Error, CustomStringConvertible {
    /// What kind of failure this is. Front ends switch over it; they never read the message to decide.
    public enum Reason: Equatable, Sendable {
        /// A rule of the election refused the command; nothing was recorded.
        case violation(Violation)
        /// What was asked for does not exist (a file, a receipt, an event).
        case notFound
        /// The ledger, a proof or a head fails a check: tampering or media damage, never repaired. The
        /// block height and the byte offset (in its segment file, or of the event in its block) when known.
        case integrity(block: UInt64?, offset: UInt64?)
        /// Another writer holds the ledger; its process id when known.
        case busy(holder: Int32?)
        /// The ledger's writer has too many commands waiting; nothing was recorded, try again later.
        case overloaded
        /// The authority key is encrypted and no passphrase was given: ask for one and try again.
        case passphraseRequired
        /// Something given is unusable or unsafe and was refused: a key or secret others can read, a
        /// symbolic link, a malformed token or file, a wrong passphrase.
        case refused
        /// The request itself is malformed (options that cannot go together, a time that does not parse).
        case usage
        /// The outcome could not be delivered: standard output or an output file failed.
        case output
        /// An operating-system call failed (the message names the file and the call).
        case io
        /// The disk holding the ledger (or the user's quota) is full: nothing of the command was recorded,
        /// and the writer recovers by itself once space is freed, so the same command may be tried again.
        case noSpace
    }

    /// What kind of failure this is.
    public let reason: Reason
    /// One line a person can act on.
    public let message: String

    public init(_ reason: Reason, _ message: String) {
        self.reason = reason
        self.message = message
    }

    public var description: String { message }

    /// A rule violation, in the contract's own words.
    public init(_ violation: Violation) { self.init(.violation(violation), violation.description) }

    /// Any error as a `VoteError`: itself, a store error or a violation by its type, anything else as an
    /// operating-system failure in words.
    public init(_ error: any Error) {
        switch error {
        case let error as VoteError: self = error
        case let error as LedgerError: self.init(ledger: error)
        case let violation as Violation: self.init(violation)
        default: self.init(.io, VoteError.describe(error))
        }
    }

    /// A store error in the service's terms.
    public init(ledger error: LedgerError) {
        switch error {
        case .busy(let pid): self.init(.busy(holder: pid), error.description)
        case .damaged(let height, _, let offset, _):
            self.init(.integrity(block: height, offset: offset), "integrity failure: \(error)")
        case .passphraseRequired: self.init(.passphraseRequired, error.description)
        case .notALedger: self.init(.notFound, error.description)
        case .key, .unprotected, .invalidRequest: self.init(.refused, error.description)
        case .io, .headMoved, .rollDisagrees: self.init(.io, error.description)
        case .noSpace: self.init(.noSpace, "the disk is full (\(error)); free space and try again")
        }
    }

    /// An error from Foundation (or anything else) in words: the POSIX reason when there is one
    /// ("no space left on device") rather than "NSCocoaErrorDomain Code=640".
    public static func describe(_ error: any Error) -> String {
        var current: NSError? = error as NSError
        while let nsError = current {
            if nsError.domain == NSPOSIXErrorDomain { return describe(errno: Int32(nsError.code)) }
            current = nsError.userInfo[NSUnderlyingErrorKey] as? NSError
        }
        if let cocoa = error as? CocoaError {
            switch cocoa.code {
            case .fileWriteOutOfSpace: return "no space left on device"
            case .fileWriteNoPermission, .fileReadNoPermission: return "permission denied"
            case .fileNoSuchFile, .fileReadNoSuchFile: return "no such file or directory"
            default: return cocoa.localizedDescription
            }
        }
        return "\(error)"
    }

    /// The failure of an operating-system call, `message` naming the file and the call, with `errno`: `.noSpace`
    /// when the disk or the quota is full, else `.io`.
    public static func system(_ message: String, errno code: Int32) -> VoteError {
        let text = "\(message): \(describe(errno: code))"
        return code == ENOSPC || code == EDQUOT ? VoteError(ledger: .noSpace(text)) : VoteError(.io, text)
    }

    /// `errno` as lower-case words ("no such file or directory").
    public static func describe(errno code: Int32) -> String {
        let text = String(cString: strerror(code))
        return text.prefix(1).lowercased() + text.dropFirst()
    }
}
