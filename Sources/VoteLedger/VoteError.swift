import Election
import Foundation
import Ledger

/// A failure of a `vote` command, with the exit code the CLI documents. The message is one line and
/// never holds a token, identity or passphrase.
public struct VoteError: Error, CustomStringConvertible {
    /// Exit codes: 1 rejected by a rule or not found, 2 usage error, 3 integrity failure, 4 ledger busy.
    public enum Kind: Int32, Sendable {
        case rejected = 1
        case usage = 2
        case integrity = 3
        case busy = 4
    }

    public let kind: Kind
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }

    /// The exit code for this error.
    public var exitCode: Int32 { kind.rawValue }

    static func rejected(_ violation: Violation) -> VoteError { VoteError(.rejected, violation.description) }

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

    /// `errno` as lower-case words ("no such file or directory").
    public static func describe(errno code: Int32) -> String {
        let text = String(cString: strerror(code))
        return text.prefix(1).lowercased() + text.dropFirst()
    }

    /// Maps a store error onto the CLI's exit codes.
    static func from(_ error: LedgerError) -> VoteError {
        switch error {
        case .busy: return VoteError(.busy, error.description)
        case .damaged: return VoteError(.integrity, "integrity failure: \(error)")
        case .notALedger, .key, .unprotected, .io, .invalidRequest: return VoteError(.rejected, error.description)
        }
    }
}
