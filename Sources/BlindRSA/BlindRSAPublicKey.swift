import Crypto
import CryptoExtras
import Foundation
import LedgerCrypto

// MARK: - Variant

/// The four named variants of RFC 9474 §5. Anonymous places use `sha384PSSRandomized`, the one the RFC
/// recommends; the other three exist so the RFC's vectors for all four can be checked.
public enum BlindRSAVariant: String, Sendable, CaseIterable {
    /// RSABSSA-SHA384-PSS-Randomized: a 48-byte salt and a 32-byte random prefix before the message.
    case sha384PSSRandomized = "RSABSSA-SHA384-PSS-Randomized"
    /// RSABSSA-SHA384-PSSZERO-Randomized: no salt, a 32-byte random prefix.
    case sha384PSSZeroRandomized = "RSABSSA-SHA384-PSSZERO-Randomized"
    /// RSABSSA-SHA384-PSS-Deterministic: a 48-byte salt, the message as it is.
    case sha384PSSDeterministic = "RSABSSA-SHA384-PSS-Deterministic"
    /// RSABSSA-SHA384-PSSZERO-Deterministic: no salt, the message as it is.
    case sha384PSSZeroDeterministic = "RSABSSA-SHA384-PSSZERO-Deterministic"

    /// Bytes of random prefix that Prepare puts before the message (RFC 9474 §4.1).
    public var prefixByteCount: Int {
        switch self {
        case .sha384PSSRandomized, .sha384PSSZeroRandomized: 32
        case .sha384PSSDeterministic, .sha384PSSZeroDeterministic: 0
        }
    }

    /// CryptoExtras' parameters with this variant's EMSA-PSS options (SHA-384, MGF1-SHA-384, salt length) and
    /// always the identity preparation. CryptoExtras only uses the preparation in its `prepare`, which draws the
    /// prefix itself and returns a type nothing else can build; this module does Prepare itself (one line,
    /// `prepare(_:prefix:)`), so a prepared message that arrives as bytes (a credential cast in a vote, a
    /// vector) becomes CryptoExtras' `PreparedMessage` through the identity preparation, unchanged.
    var parameters: _RSA.BlindSigning.Parameters<SHA384> {
        switch self {
        case .sha384PSSRandomized, .sha384PSSDeterministic: .RSABSSA_SHA384_PSS_Deterministic
        case .sha384PSSZeroRandomized, .sha384PSSZeroDeterministic: .RSABSSA_SHA384_PSSZERO_Deterministic
        }
    }
}

// MARK: - Public key: the voter's side and verification

/// The public half of a place's blind-signing key. The voter's device uses it for Prepare, Blind and Finalize
/// (RFC 9474 §4.1, §4.2, §4.4); replay uses it to verify a cast credential's signature (§4.5), which is an
/// ordinary RSASSA-PSS signature over the prepared message.
public struct BlindRSAPublicKey: Sendable {
    let key: _RSA.BlindSigning.PublicKey<SHA384>
    /// The RFC 9474 variant this key is used with.
    public let variant: BlindRSAVariant

    init(_ key: _RSA.BlindSigning.PublicKey<SHA384>, variant: BlindRSAVariant) {
        self.key = key
        self.variant = variant
    }

    /// Imports a DER SubjectPublicKeyInfo (the form `derRepresentation` writes and WebCrypto imports as "spki").
    /// A modulus below `BlindRSAPrivateKey.minimumBits` is refused.
    public init(
        derRepresentation der: [UInt8], variant: BlindRSAVariant = .sha384PSSRandomized
    )
        throws(BlindRSAError)
    {
        let key: _RSA.BlindSigning.PublicKey<SHA384>
        do {
            key = try _RSA.BlindSigning.PublicKey(derRepresentation: der, parameters: variant.parameters)
        } catch {
            throw BlindRSAError(.invalidKey, "the blind-signing public key is not a DER RSA public key")
        }
        try BlindRSAPrivateKey.checkSize(key.keySizeInBits)
        self.init(key, variant: variant)
    }

    /// The key as DER SubjectPublicKeyInfo (algorithm rsaEncryption).
    public var derRepresentation: [UInt8] { Array(key.derRepresentation) }

    /// Bits in the modulus.
    public var modulusBits: Int { key.keySizeInBits }

    /// Bytes in the modulus: the length of every blinded message, blind signature and signature.
    public var modulusByteCount: Int { (modulusBits + 7) / 8 }

    /// The public exponent, big-endian without leading zeros (anonymous places require 65537: 01 00 01).
    public var publicExponent: [UInt8] {
        guard let exponent = try? key.getKeyPrimitives().publicExponent else { return [] }
        return Array(exponent.drop { $0 == 0 })
    }

    /// The modulus, big-endian without leading zeros (what rule 11.7.8's public-key validation examines).
    public var modulus: [UInt8] {
        guard let modulus = try? key.getKeyPrimitives().modulus else { return [] }
        return Array(modulus.drop { $0 == 0 })
    }

    // MARK: Prepare, Blind, Finalize

    /// RFC 9474 Prepare: for the randomized variants, 32 fresh random bytes followed by `message`; for the
    /// deterministic ones, `message` itself. The result is what gets signed and what a verifier checks.
    public func prepare(_ message: [UInt8]) throws(BlindRSAError) -> [UInt8] {
        let prefix: [UInt8]
        do {
            prefix = try SecureRandom.bytes(variant.prefixByteCount)
        } catch {
            throw BlindRSAError(.operationFailed, "drawing the message prefix failed")
        }
        return prepare(message, prefix: prefix)
    }

    /// Prepare with a given prefix: what `prepare(_:)` does once it has its random bytes (and what the vector
    /// tests call with the RFC's `msg_prefix`).
    func prepare(_ message: [UInt8], prefix: [UInt8]) -> [UInt8] {
        precondition(prefix.count == variant.prefixByteCount, "the prefix has the variant's length")
        return prefix + message
    }

    /// RFC 9474 Blind: EMSA-PSS-encodes `preparedMessage` with a fresh salt and multiplies it by a fresh random
    /// factor raised to the public exponent. Send `blindedMessage` to the signer; keep the result (it holds the
    /// inverse of the factor) for `finalize`. CryptoExtras draws the salt and the factor; neither can be given.
    public func blind(_ preparedMessage: [UInt8]) throws(BlindRSAError) -> BlindRSABlinding {
        do {
            let result = try key.blind(key.prepare(preparedMessage))
            return BlindRSABlinding(
                preparedMessage: preparedMessage, blindedMessage: Array(result.blindedMessage),
                inverse: result.inverse)
        } catch {
            throw BlindRSAError(.invalidInput, "blinding the message failed (it is not coprime with the modulus)")
        }
    }

    /// RFC 9474 Finalize: removes the blinding factor from the signer's `blindSignature` and returns the
    /// signature of the prepared message, after checking that it verifies under this key (a signer that
    /// answered with anything else is caught here, before the voter relies on the credential).
    public func finalize(_ blindSignature: [UInt8], blinding: BlindRSABlinding) throws(BlindRSAError) -> [UInt8] {
        guard blindSignature.count == modulusByteCount else {
            throw BlindRSAError(
                .invalidInput, "the blind signature must be \(modulusByteCount) bytes, got \(blindSignature.count)")
        }
        do {
            let signature = try key.finalize(
                _RSA.BlindSigning.BlindSignature(rawRepresentation: blindSignature),
                for: key.prepare(blinding.preparedMessage), blindingInverse: blinding.inverse)
            return Array(signature.rawRepresentation)
        } catch {
            throw BlindRSAError(.invalidSignature, "the blind signature does not give a valid signature under this key")
        }
    }

    // MARK: Verify

    /// RFC 9474 §4.5: whether `signature` is this key's RSASSA-PSS signature (SHA-384, MGF1-SHA-384, the
    /// variant's salt length) of `preparedMessage`. Any other length or bytes give `false`.
    public func isValidSignature(_ signature: [UInt8], for preparedMessage: [UInt8]) -> Bool {
        guard signature.count == modulusByteCount else { return false }
        return key.isValidSignature(
            _RSA.Signing.RSASignature(rawRepresentation: signature), for: key.prepare(preparedMessage))
    }
}

/// What Blind gives the voter's device: the blinded message to send, and (kept inside, never sent) the prepared
/// message and the inverse of the blinding factor that Finalize needs. It lives in memory between the two
/// steps; CryptoExtras gives no way to write the inverse out or read it back.
public struct BlindRSABlinding {
    /// The prepared message the signature will be for.
    public let preparedMessage: [UInt8]
    /// What the signer signs: as long as the modulus, and unlinkable to `preparedMessage` without the inverse.
    public let blindedMessage: [UInt8]
    let inverse: _RSA.BlindSigning.BlindingInverse
}
