import Crypto
import CryptoExtras
import Foundation

/// A place's blind-signing key (RFC 9474): the authority's side. It signs blinded messages without seeing what
/// they hide, so the credential a voter later casts cannot be tied to the voter it was issued to. It lives in
/// the key store beside the authority key, never in the public ledger directory.
public struct BlindRSAPrivateKey: Sendable {
    /// The smallest modulus accepted, generated or imported: RFC 9474 §7.1 asks for at least 2048 bits; the
    /// ledger outlives the election, so anonymous places use 3072.
    public static let minimumBits = 3072

    let key: _RSA.BlindSigning.PrivateKey<SHA384>
    /// The RFC 9474 variant this key is used with.
    public let variant: BlindRSAVariant

    /// Generates a fresh key with a `bits`-bit modulus and public exponent 65537.
    public init(bits: Int = minimumBits, variant: BlindRSAVariant = .sha384PSSRandomized) throws(BlindRSAError) {
        try Self.checkSize(bits)
        do {
            key = try _RSA.BlindSigning.PrivateKey(
                keySize: _RSA.Signing.KeySize(bitCount: bits), parameters: variant.parameters)
        } catch {
            throw BlindRSAError(.operationFailed, "generating a \(bits)-bit blind-signing key failed")
        }
        self.variant = variant
    }

    /// Imports a DER RSA private key (PKCS #1, as `derRepresentation` writes, or PKCS #8).
    public init(
        derRepresentation der: [UInt8], variant: BlindRSAVariant = .sha384PSSRandomized
    )
        throws(BlindRSAError)
    {
        do {
            key = try _RSA.BlindSigning.PrivateKey(derRepresentation: der, parameters: variant.parameters)
        } catch {
            throw BlindRSAError(.invalidKey, "the blind-signing key is not a DER RSA private key")
        }
        try Self.checkSize(key.keySizeInBits)
        self.variant = variant
    }

    /// Imports a key from its numbers (big-endian bytes), as the RFC's vectors give it. BoringSSL checks that
    /// they belong together.
    init(n: [UInt8], e: [UInt8], d: [UInt8], p: [UInt8], q: [UInt8], variant: BlindRSAVariant) throws(BlindRSAError) {
        do {
            key = try _RSA.BlindSigning.PrivateKey(n: n, e: e, d: d, p: p, q: q, parameters: variant.parameters)
        } catch {
            throw BlindRSAError(.invalidKey, "the numbers do not make an RSA private key")
        }
        try Self.checkSize(key.keySizeInBits)
        self.variant = variant
    }

    static func checkSize(_ bits: Int) throws(BlindRSAError) {
        guard bits >= minimumBits else {
            throw BlindRSAError(
                .invalidKey, "a blind-signing key needs a modulus of at least \(minimumBits) bits, not \(bits)")
        }
    }

    /// The key as DER (PKCS #1 RSAPrivateKey), for the key store.
    public var derRepresentation: [UInt8] { Array(key.derRepresentation) }

    /// The public half, which the place-created event publishes.
    public var publicKey: BlindRSAPublicKey { BlindRSAPublicKey(key.publicKey, variant: variant) }

    /// RFC 9474 BlindSign: the raw RSA signature of `blindedMessage`, which must be exactly as long as the modulus
    /// and below it. As the RFC requires (§4.3 steps 3 to 5), the signature is checked against the blinded
    /// message with the public key before it is returned (CryptoExtras does this inside `blindSignature(for:)`):
    /// a faulty signature would leak the private key, so it is an error, never an answer.
    public func blindSign(_ blindedMessage: [UInt8]) throws(BlindRSAError) -> [UInt8] {
        let length = (key.keySizeInBits + 7) / 8
        guard blindedMessage.count == length else {
            throw BlindRSAError(
                .invalidInput, "the blinded message must be \(length) bytes, got \(blindedMessage.count)")
        }
        do {
            return Array(try key.blindSignature(for: blindedMessage).rawRepresentation)
        } catch CryptoKitError.authenticationFailure {
            throw BlindRSAError(.invalidSignature, "the blind signature failed its own check and was withheld")
        } catch {
            throw BlindRSAError(.invalidInput, "the blinded message is not below the key's modulus")
        }
    }
}
