import Foundation
import LedgerCrypto
import Testing

@testable import BlindRSA

/// One object of `Vectors/rfc9474/rfc9474.json` (RFC 9474 Appendix A; see the README beside it), hex decoded.
struct RFC9474Vector: Decodable, Sendable, CustomTestStringConvertible {
    let name: String
    let p: String
    let q: String
    let n: String
    let e: String
    let d: String
    let msg: String
    let msg_prefix: String
    let prepared_msg: String
    let salt: String
    let encoded_msg: String?
    let inv: String
    let blinded_msg: String
    let blind_sig: String
    let sig: String

    var testDescription: String { name }

    /// The variant the vector names.
    var variant: BlindRSAVariant { BlindRSAVariant(rawValue: name)! }

    func bytes(_ hex: String) -> [UInt8] { Hex.decode(hex)! }

    func privateKey() throws -> BlindRSAPrivateKey {
        try BlindRSAPrivateKey(
            n: bytes(n), e: bytes(e), d: bytes(d), p: bytes(p), q: bytes(q), variant: variant)
    }

    /// `Vectors/rfc9474`, found next to this source file so the tests run from any working directory.
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("Vectors/rfc9474")

    static let all: [RFC9474Vector] = try! JSONDecoder().decode(
        [RFC9474Vector].self, from: Data(contentsOf: directory.appendingPathComponent("rfc9474.json")))
}

/// The published RFC 9474 vectors, all four variants, through this module's API over CryptoExtras.
///
/// Compared exactly: the key (built from n, e, d, p, q; its public half round-trips through DER), Prepare's
/// output with the vector's prefix (`prepared_msg`), BlindSign's output for the vector's `blinded_msg`
/// (`blind_sig`), and Verify of the vector's `sig` over `prepared_msg`; for the two PSSZERO variants also the
/// signature that Finalize returns after our own blinding, since without a salt the signature of a prepared
/// message is unique.
///
/// Not comparable through CryptoExtras' public API, and why: `encoded_msg` is never returned, and it and
/// `blinded_msg` depend on the EMSA-PSS salt, which CryptoExtras draws inside `blind` (BoringSSL's
/// `RSA_padding_add_PKCS1_PSS_mgf1` takes a salt length and draws the salt itself); `blinded_msg` depends also
/// on the blinding factor, which `blind` draws too; `inv` is that factor's inverse, and
/// `BlindingInverse` has no public initializer, so Finalize cannot be fed the vector's `inv` and `blind_sig` to
/// reproduce `sig` for the PSS variants. For those, the test checks the lengths of what Blind returns, runs the
/// whole protocol with fresh randomness and verifies the result. The browser implementation
/// (`Sources/VoteServer/Web/blind.js`, `Tests/web/test_blind_vectors.py`) takes the salt and `inv` as inputs
/// and is compared on every one of these values.
@Suite struct RFC9474VectorTests {
    @Test func theFileHoldsTheFourVariants() {
        #expect(RFC9474Vector.all.map(\.variant) == BlindRSAVariant.allCases)
    }

    @Test(arguments: RFC9474Vector.all)
    func keyFromTheVectorNumbers(vector: RFC9474Vector) throws {
        let key = try vector.privateKey()
        #expect(key.publicKey.modulusBits == 4096)
        let der = key.publicKey.derRepresentation
        let imported = try BlindRSAPublicKey(derRepresentation: der, variant: vector.variant)
        #expect(imported.derRepresentation == der)
        let reloaded = try BlindRSAPrivateKey(derRepresentation: key.derRepresentation, variant: vector.variant)
        #expect(reloaded.publicKey.derRepresentation == der)
    }

    @Test(arguments: RFC9474Vector.all)
    func prepare(vector: RFC9474Vector) throws {
        let publicKey = try vector.privateKey().publicKey
        let prepared = publicKey.prepare(vector.bytes(vector.msg), prefix: vector.bytes(vector.msg_prefix))
        #expect(Hex.encode(prepared) == vector.prepared_msg)
        // The random Prepare: a fresh prefix of the variant's length, then the message.
        let random = try publicKey.prepare(vector.bytes(vector.msg))
        #expect(random.count == vector.prepared_msg.count / 2)
        #expect(Array(random.dropFirst(vector.variant.prefixByteCount)) == vector.bytes(vector.msg))
    }

    @Test(arguments: RFC9474Vector.all)
    func blindSign(vector: RFC9474Vector) throws {
        let key = try vector.privateKey()
        #expect(Hex.encode(try key.blindSign(vector.bytes(vector.blinded_msg))) == vector.blind_sig)
    }

    @Test(arguments: RFC9474Vector.all)
    func verify(vector: RFC9474Vector) throws {
        let publicKey = try vector.privateKey().publicKey
        #expect(publicKey.isValidSignature(vector.bytes(vector.sig), for: vector.bytes(vector.prepared_msg)))
    }

    @Test(arguments: RFC9474Vector.all)
    func blindAndFinalizeWithFreshRandomness(vector: RFC9474Vector) throws {
        let key = try vector.privateKey()
        let publicKey = key.publicKey
        let prepared = vector.bytes(vector.prepared_msg)
        let blinding = try publicKey.blind(prepared)
        #expect(blinding.blindedMessage.count == vector.blinded_msg.count / 2)
        #expect(Hex.encode(blinding.blindedMessage) != vector.blinded_msg)  // a fresh factor, not the vector's
        let signature = try publicKey.finalize(key.blindSign(blinding.blindedMessage), blinding: blinding)
        #expect(publicKey.isValidSignature(signature, for: prepared))
        if vector.salt.isEmpty {
            #expect(Hex.encode(signature) == vector.sig)
        }
    }
}
