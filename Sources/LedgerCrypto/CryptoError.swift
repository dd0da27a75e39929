internal import COpenSSL

/// A failure inside the crypto layer. The message names the operation that failed and, where OpenSSL
/// gave one, its reason; it never contains key material or a passphrase.
public struct CryptoError: Error, Equatable, CustomStringConvertible {
    /// What went wrong, for callers that branch on it.
    public enum Kind: Sendable, Equatable {
        /// Key bytes or a PEM document that is not a valid Ed25519 key.
        case invalidKey
        /// The private key is encrypted and no passphrase was given.
        case passphraseRequired
        /// The passphrase does not decrypt the private key.
        case wrongPassphrase
        /// A passphrase OpenSSL cannot use faithfully (empty, over 1,024 bytes, or with a NUL byte).
        case invalidPassphrase
        /// OpenSSL failed an operation that should not fail (allocation, signing, random).
        case operationFailed
    }

    /// What went wrong.
    public let kind: Kind
    /// One line a person can read.
    public let message: String

    public var description: String { message }

    init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// Builds an error for `operation`, appending OpenSSL's most recent reason and clearing its queue.
    static func openSSL(_ kind: Kind, _ operation: String) -> CryptoError {
        var reason = ""
        let code = ERR_peek_last_error()
        if code != 0, let text = ERR_reason_error_string(code) {
            reason = ": " + String(cString: text)
        }
        ERR_clear_error()
        return CryptoError(kind, operation + " failed" + reason)
    }
}

/// Frees OpenSSL's state for the calling thread (its error queue), which OpenSSL otherwise frees only as the
/// thread exits. A thread that may still be exiting when the process ends (the ledger writer's, once it has
/// answered its last caller) calls it first, so a leak checker run at exit finds nothing of it.
public func releaseThreadCryptoState() { OPENSSL_thread_stop() }
