import Crypto
import CryptoExtras
import LedgerCrypto
import Testing

@testable import BlindRSA

/// The protocol with a generated 3072-bit key, and everything it must refuse.
@Suite struct BlindRSATests {
    /// One generated place key and a second, unrelated one (generation takes a moment; the tests share them).
    static let placeKey = try! BlindRSAPrivateKey()
    static let otherPlaceKey = try! BlindRSAPrivateKey()
    static let vectorKey = try! RFC9474Vector.all[0].privateKey()

    /// A credential issued and finalized the way the booth will: prepare, blind, sign blind, finalize.
    static func issue(
        _ message: [UInt8], key: BlindRSAPrivateKey = placeKey
    ) throws -> (
        prepared: [UInt8], signature: [UInt8]
    ) {
        let prepared = try key.publicKey.prepare(message)
        let blinding = try key.publicKey.blind(prepared)
        return (prepared, try key.publicKey.finalize(key.blindSign(blinding.blindedMessage), blinding: blinding))
    }

    static func flipping(_ bytes: [UInt8], at index: Int) -> [UInt8] {
        var copy = bytes
        copy[index] ^= 0x01
        return copy
    }

    // MARK: Keys

    @Test func generatedKeyHasA3072BitModulusAndRoundTrips() throws {
        let key = Self.placeKey
        #expect(key.publicKey.modulusBits == 3072)
        #expect(key.publicKey.modulusByteCount == 384)
        #expect(key.variant == .sha384PSSRandomized)
        let reloaded = try BlindRSAPrivateKey(derRepresentation: key.derRepresentation)
        #expect(reloaded.publicKey.derRepresentation == key.publicKey.derRepresentation)
        let (prepared, signature) = try Self.issue(Array("a credential".utf8), key: reloaded)
        #expect(key.publicKey.isValidSignature(signature, for: prepared))
    }

    @Test func keysBelow3072BitsAreRefused() throws {
        #expect(throws: BlindRSAError.self) { try BlindRSAPrivateKey(bits: 2048) }
        // A 2048-bit key made elsewhere is refused at import too, private or public half.
        let small = try Self.smallKeyDER()
        let error = #expect(throws: BlindRSAError.self) { try BlindRSAPublicKey(derRepresentation: small.public) }
        #expect(error?.kind == .invalidKey)
        #expect(error?.message == "a blind-signing key needs a modulus of at least 3072 bits, not 2048")
        #expect(throws: BlindRSAError.self) { try BlindRSAPrivateKey(derRepresentation: small.private) }
    }

    /// A 2048-bit key in DER (private PKCS #1, public SubjectPublicKeyInfo), made with CryptoExtras directly,
    /// since this module refuses to generate one.
    static func smallKeyDER() throws -> (private: [UInt8], public: [UInt8]) {
        let key = try _RSA.BlindSigning.PrivateKey<SHA384>(keySize: .bits2048)
        return (Array(key.derRepresentation), Array(key.publicKey.derRepresentation))
    }

    @Test func garbageKeysAreRefused() {
        for bytes in [[], [0x30, 0x03, 0x02, 0x01, 0x01], Array(repeating: 0xff, count: 600)] as [[UInt8]] {
            #expect(throws: BlindRSAError(.invalidKey, "the blind-signing public key is not a DER RSA public key")) {
                try BlindRSAPublicKey(derRepresentation: bytes)
            }
            #expect(throws: BlindRSAError(.invalidKey, "the blind-signing key is not a DER RSA private key")) {
                try BlindRSAPrivateKey(derRepresentation: bytes)
            }
        }
    }

    @Test func numbersThatDoNotBelongTogetherAreRefused() throws {
        let vector = RFC9474Vector.all[0]
        var d = vector.bytes(vector.d)
        d[d.count - 1] ^= 0x02  // still odd, no longer the inverse of e
        #expect(throws: BlindRSAError.self) {
            try BlindRSAPrivateKey(
                n: vector.bytes(vector.n), e: vector.bytes(vector.e), d: d, p: vector.bytes(vector.p),
                q: vector.bytes(vector.q), variant: vector.variant)
        }
    }

    // MARK: Round trip

    @Test func aFinalizedSignatureVerifiesAndTwoBlindingsShareNothing() throws {
        let publicKey = Self.placeKey.publicKey
        let message = Array("the same credential twice".utf8)
        let first = try publicKey.blind(publicKey.prepare(message))
        let second = try publicKey.blind(publicKey.prepare(message))
        #expect(first.preparedMessage != second.preparedMessage)  // fresh prefixes
        #expect(first.blindedMessage != second.blindedMessage)
        for blinding in [first, second] {
            let signature = try publicKey.finalize(Self.placeKey.blindSign(blinding.blindedMessage), blinding: blinding)
            #expect(signature.count == 384)
            #expect(publicKey.isValidSignature(signature, for: blinding.preparedMessage))
        }
    }

    // MARK: What must be refused

    @Test func aSignatureUnderAnotherKeyIsRefused() throws {
        let (prepared, signature) = try Self.issue(Array("credential".utf8), key: Self.otherPlaceKey)
        #expect(Self.otherPlaceKey.publicKey.isValidSignature(signature, for: prepared))
        #expect(!Self.placeKey.publicKey.isValidSignature(signature, for: prepared))
    }

    @Test func aFlippedByteIsRefused() throws {
        let (prepared, signature) = try Self.issue(Array("credential".utf8))
        let publicKey = Self.placeKey.publicKey
        for index in [0, 1, 191, 383] {
            #expect(!publicKey.isValidSignature(Self.flipping(signature, at: index), for: prepared))
        }
        for index in [0, 31, 32, prepared.count - 1] {  // the prefix and the message
            #expect(!publicKey.isValidSignature(signature, for: Self.flipping(prepared, at: index)))
        }
    }

    @Test func aWrongMessageOrLengthIsRefused() throws {
        let (prepared, signature) = try Self.issue(Array("credential".utf8))
        let publicKey = Self.placeKey.publicKey
        #expect(!publicKey.isValidSignature(signature, for: Array(prepared.dropFirst(32))))  // no prefix
        #expect(!publicKey.isValidSignature(signature, for: Array(prepared.prefix(32)) + Array("credentiaL".utf8)))
        #expect(!publicKey.isValidSignature(signature, for: []))
        #expect(!publicKey.isValidSignature(Array(signature.dropLast()), for: prepared))
        #expect(!publicKey.isValidSignature(signature + [0], for: prepared))
        #expect(!publicKey.isValidSignature([], for: prepared))
    }

    @Test func aSignatureOfAnotherVariantIsRefused() throws {
        // The vector key with the PSS and the PSSZERO variant: each variant's signature fails under the other.
        let pss = RFC9474Vector.all[0]
        let pssZero = RFC9474Vector.all[1]
        let underPSSZero = try pssZero.privateKey().publicKey
        let underPSS = try pss.privateKey().publicKey
        #expect(!underPSSZero.isValidSignature(pss.bytes(pss.sig), for: pss.bytes(pss.prepared_msg)))
        #expect(!underPSS.isValidSignature(pssZero.bytes(pssZero.sig), for: pssZero.bytes(pssZero.prepared_msg)))
    }

    @Test func blindSignRefusesWrongLengthsAndValuesNotBelowTheModulus() throws {
        let key = Self.placeKey
        for length in [0, 383, 385] {
            let error = #expect(throws: BlindRSAError.self) { try key.blindSign(Array(repeating: 1, count: length)) }
            #expect(error?.kind == .invalidInput)
            #expect(error?.message == "the blinded message must be 384 bytes, got \(length)")
        }
        #expect(throws: BlindRSAError(.invalidInput, "the blinded message is not below the key's modulus")) {
            try key.blindSign(Array(repeating: 0xff, count: 384))
        }
    }

    @Test func finalizeRefusesABlindSignatureThatIsNotTheSigners() throws {
        let publicKey = Self.placeKey.publicKey
        let blinding = try publicKey.blind(publicKey.prepare(Array("credential".utf8)))
        let blindSignature = try Self.placeKey.blindSign(blinding.blindedMessage)
        let refused = BlindRSAError(
            .invalidSignature, "the blind signature does not give a valid signature under this key")
        #expect(throws: refused) { try publicKey.finalize(Self.flipping(blindSignature, at: 200), blinding: blinding) }
        // Signed by another place's key (whose modulus has the same length). A blinded message is below this
        // key's modulus but, about half the time, not below the other's, which then refuses to sign it: blind
        // afresh until the other key signs.
        var signedByOther: (blinding: BlindRSABlinding, signature: [UInt8])?
        while signedByOther == nil {
            let fresh = try publicKey.blind(publicKey.prepare(Array("credential".utf8)))
            if let signature = try? Self.otherPlaceKey.blindSign(fresh.blindedMessage) {
                signedByOther = (fresh, signature)
            }
        }
        #expect(throws: refused) {
            try publicKey.finalize(signedByOther!.signature, blinding: signedByOther!.blinding)
        }
        // Signed for another voter's blinded message.
        let otherBlinding = try publicKey.blind(publicKey.prepare(Array("credential".utf8)))
        #expect(throws: refused) {
            try publicKey.finalize(Self.placeKey.blindSign(otherBlinding.blindedMessage), blinding: blinding)
        }
        #expect(throws: BlindRSAError(.invalidInput, "the blind signature must be 384 bytes, got 10")) {
            try publicKey.finalize(Array(repeating: 7, count: 10), blinding: blinding)
        }
    }
}
