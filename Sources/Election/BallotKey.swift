public import BlindRSA
import LedgerCrypto

/// An anonymous place's ballot key as the rules use it: the public RSA key (RFC 9474,
/// RSABSSA-SHA384-PSS-Randomized) that every anonymous ballot's signature must verify under, parsed once from
/// the DER SubjectPublicKeyInfo the place-created event records.
public struct BallotKey: Equatable, Sendable {
    /// The DER SubjectPublicKeyInfo, as recorded.
    public let der: [UInt8]
    /// The parsed key.
    public let publicKey: BlindRSAPublicKey

    /// Smallest and largest modulus a ballot key may have, in bits (FORMAT.md §11.7).
    public static let modulusBits = 3072...4096
    /// Length of a credential: the RFC 9474 prepared message, a 32-byte random prefix and a 32-byte random message.
    public static let credentialByteCount = 64

    /// Parses `der`; refuses anything but the canonical DER SubjectPublicKeyInfo of an RSA key with public exponent
    /// 65537 and a modulus of 3072 to 4096 bits that passes partial public-key validation (rule 11.7.8, after
    /// NIST SP 800-56B Rev. 2 §6.4.2.2: odd, no prime factor below 752, composite, not a perfect power).
    public init(der: [UInt8]) throws(Violation) {
        guard let key = try? BlindRSAPublicKey(derRepresentation: der), key.derRepresentation == der,
            key.publicExponent == [1, 0, 1],
            RSAPublicKeyCheck.isValid(
                modulus: key.modulus, exponent: key.publicExponent, modulusBits: BallotKey.modulusBits)
        else { throw .invalidBallotKey }
        self.der = der
        publicKey = key
    }

    /// Whether `signature` is this key's RSASSA-PSS signature (SHA-384, MGF1-SHA-384, salt 48) of `credential`,
    /// and the credential is 64 bytes (rule 11.19.4).
    public func verifies(_ signature: [UInt8], for credential: [UInt8]) -> Bool {
        credential.count == BallotKey.credentialByteCount && publicKey.isValidSignature(signature, for: credential)
    }

    /// The name of the key's private half in the key directory: `ballot-` and the first 16 hex digits of
    /// SHA-256 of the DER SubjectPublicKeyInfo, then `.key`.
    public static func fileName(der: [UInt8]) -> String {
        "ballot-" + SHA256.hash(der).hex.prefix(16) + ".key"
    }

    public static func == (lhs: BallotKey, rhs: BallotKey) -> Bool { lhs.der == rhs.der }
}
