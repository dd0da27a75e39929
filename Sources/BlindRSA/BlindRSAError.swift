/// A failure of an RSA blind-signature operation. The message names the operation and what was wrong with its
/// input, in one line; it never contains key material, a credential or a blinding factor.
public struct BlindRSAError: Error, Equatable, CustomStringConvertible {
    /// What went wrong, for callers that branch on it (the server maps `invalidInput` to 400).
    public enum Kind: Sendable, Equatable {
        /// Key bytes that are not an RSA key of this kind, or a modulus below `BlindRSAPrivateKey.minimumBits`.
        case invalidKey
        /// A blinded message, blind signature or message the operation cannot take (wrong length, not below the
        /// modulus, not coprime with it).
        case invalidInput
        /// A signature that does not verify: a finalized signature under the wrong key or for the wrong
        /// message, or the signer's own blind signature failing its check.
        case invalidSignature
        /// An operation that should not fail (random bytes, key generation).
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
}
