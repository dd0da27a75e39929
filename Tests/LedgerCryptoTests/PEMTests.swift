import Foundation
import Testing

@testable import LedgerCrypto

// MARK: - PEM fixtures

/// A text argument with a short name for test output (PEM documents span several lines).
struct LabelledText: Sendable, CustomTestStringConvertible {
    let label: String
    let text: String

    var testDescription: String { label }
}

/// Published and externally generated PEM documents the API must read.
enum PEMFixtures {
    /// RFC 8410 §10.3, "Example Ed25519 Private Key" (unencrypted PKCS #8).
    static let rfc8410PrivateKey = """
        -----BEGIN PRIVATE KEY-----
        MC4CAQAwBQYDK2VwBCIEINTuctv5E1hK1bbY8fdp+K06/nwoy/HU++CXqI9EdVhC
        -----END PRIVATE KEY-----

        """
    /// The seed inside `rfc8410PrivateKey` (the OCTET STRING in its CurvePrivateKey).
    static let rfc8410Seed = "d4ee72dbf913584ad5b6d8f1f769f8ad3afe7c28cbf1d4fbe097a88f44755842"

    /// RFC 8410 §10.1, "Example Ed25519 Public Key" (SubjectPublicKeyInfo); the public half of the key above.
    static let rfc8410PublicKey = """
        -----BEGIN PUBLIC KEY-----
        MCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE=
        -----END PUBLIC KEY-----

        """
    static let rfc8410PublicKeyRaw = "19bf44096984cdfe8541bac167dc3b96c85086aa30b6b6cb0c5c38ad703166e1"

    /// The RFC 8032 TEST 1 key encrypted by the OpenSSL 3.0 command line, not by the code under test:
    /// `openssl pkcs8 -topk8 -v2 aes-256-cbc -passout pass:'ledger test passphrase'` (PBES2, PBKDF2-HMAC-SHA256).
    static let opensslEncryptedTest1Key = """
        -----BEGIN ENCRYPTED PRIVATE KEY-----
        MIGbMFcGCSqGSIb3DQEFDTBKMCkGCSqGSIb3DQEFDDAcBAjF4ifNXDAQWAICCAAw
        DAYIKoZIhvcNAgkFADAdBglghkgBZQMEASoEEItRbhOvg9wfBhLHjel912IEQIvL
        MVvhdDPUa/hPUKVIXhPfpy0IejPBSDPKJ0clMUg8jO5kMqh+BVUbeWAsFST7ja8+
        HR203zNrpZ/dEZbHspU=
        -----END ENCRYPTED PRIVATE KEY-----

        """
    static let opensslEncryptedTest1Passphrase = "ledger test passphrase"

    /// An X25519 (not Ed25519) private key, seed 00 01 … 1f, written by Python `cryptography` as PKCS #8.
    static let x25519PrivateKey = """
        -----BEGIN PRIVATE KEY-----
        MC4CAQAwBQYDK2VuBCIEIAABAgMEBQYHCAkKCwwNDg8QERITFBUWFxgZGhscHR4f
        -----END PRIVATE KEY-----

        """
    /// The public half of `x25519PrivateKey`, as SubjectPublicKeyInfo.
    static let x25519PublicKey = """
        -----BEGIN PUBLIC KEY-----
        MCowBQYDK2VuAyEAj0DFrbaPJWJK5bIU6nZ6bslNgp09e14a0bpvPiE4KF8=
        -----END PUBLIC KEY-----

        """

    /// Text that is not a key: no PEM framing, framing around non-base64, framing around valid base64 of junk, and
    /// a real key with its base64 damaged.
    static let garbage = [
        LabelledText(label: "empty string", text: ""),
        LabelledText(label: "plain text", text: "not a pem document"),
        LabelledText(
            label: "private framing, not base64",
            text: "-----BEGIN PRIVATE KEY-----\n!!!! not base64 !!!!\n-----END PRIVATE KEY-----\n"),
        LabelledText(
            label: "private framing, base64 of junk",
            text: "-----BEGIN PRIVATE KEY-----\naGVsbG8gd29ybGQ=\n-----END PRIVATE KEY-----\n"),
        LabelledText(
            label: "public framing, base64 of junk",
            text: "-----BEGIN PUBLIC KEY-----\naGVsbG8gd29ybGQ=\n-----END PUBLIC KEY-----\n"),
        LabelledText(
            label: "RFC 8410 private key, truncated base64",
            text: "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEINTuctv5E1hK1bbY8fdp+K06/nwoy/HU++CXqI9EdV\n"
                + "-----END PRIVATE KEY-----\n"),
    ]
}

@Suite("PEM")
struct PEMTests {
    /// A passphrase distinctive enough that finding it in an error message cannot be a coincidence.
    static let passphrase = utf8("Zebra-Quokka-7731")
    static let wrongPassphrase = utf8("Marmot-Ibex-0420")

    // MARK: Private keys

    /// An unencrypted PKCS #8 PEM reloads to the same seed and public key, and is the standard encoding (the
    /// RFC 8032 TEST 1 key written by Python `cryptography` gives the identical document).
    @Test func unencryptedPrivateKeyRoundTrip() throws {
        let seed = try bytes(fromHex: RFC8032Vectors.test1.secretKeyHex)
        let key = try Ed25519PrivateKey(seed: seed)
        let pem = try key.pem()
        #expect(
            pem == """
                -----BEGIN PRIVATE KEY-----
                MC4CAQAwBQYDK2VwBCIEIJ1hsZ3v/VpguoRK9JLsLMREScVpezJpGXA7rAMcrn9g
                -----END PRIVATE KEY-----

                """)
        let reloaded = try Ed25519PrivateKey(pem: pem)
        #expect(try reloaded.seed == seed)
        #expect(reloaded.publicKey == key.publicKey)
        // A passphrase given for an unencrypted key is simply not needed.
        #expect(try Ed25519PrivateKey(pem: pem, passphrase: Self.passphrase).seed == seed)
    }

    /// A passphrase-encrypted PEM is an `ENCRYPTED PRIVATE KEY` that does not expose the seed, and reloads with the
    /// passphrase to the same seed and public key; it also still signs the RFC 8032 TEST 1 signature.
    @Test func encryptedPrivateKeyRoundTrip() throws {
        let vector = try RFC8032Vectors.test1.decoded()
        let key = try Ed25519PrivateKey(seed: vector.seed)
        let pem = try key.pem(passphrase: Self.passphrase)
        #expect(pem.hasPrefix("-----BEGIN ENCRYPTED PRIVATE KEY-----\n"))
        #expect(pem.hasSuffix("-----END ENCRYPTED PRIVATE KEY-----\n"))
        #expect(!pem.contains("BEGIN PRIVATE KEY"))
        // The base64 of the plaintext PKCS #8 body must not appear.
        #expect(!pem.contains("MC4CAQAwBQYDK2VwBCIEIJ1hsZ3v"))
        // Fresh salt and IV: encrypting twice gives different documents.
        #expect(try key.pem(passphrase: Self.passphrase, cost: .cheap) != pem)

        let reloaded = try Ed25519PrivateKey(pem: pem, passphrase: Self.passphrase)
        #expect(try reloaded.seed == vector.seed)
        #expect(reloaded.publicKey == key.publicKey)
        #expect(try reloaded.signature(for: vector.message) == vector.signature)
    }

    /// An encrypted key is PBES2 with scrypt at N = 2^14, r = 8, p = 5 and AES-256-CBC, read from the
    /// document's own DER, not PBKDF2 as keys were written before.
    @Test func encryptedKeyUsesScrypt() throws {
        let pem = try Ed25519PrivateKey().pem(passphrase: Self.passphrase)
        #expect(KeyDerivation(pem: pem) == .scrypt(saltBytes: 16, n: 1 << 14, r: 8, p: 5))
        #expect(Ed25519PrivateKey.ScryptCost.standard.n == 1 << 14)
    }

    /// A key written the old way (PBES2 with PBKDF2-HMAC-SHA256 at OpenSSL's default 2,048 iterations, as the
    /// previous `pem(passphrase:)` wrote them and as the OpenSSL fixture is) still reads.
    @Test func readsKeyWrittenTheOldWay() throws {
        #expect(KeyDerivation(pem: PEMFixtures.opensslEncryptedTest1Key) == .pbkdf2(saltBytes: 8, iterations: 2048))
        let key = try Ed25519PrivateKey(
            pem: PEMFixtures.opensslEncryptedTest1Key, passphrase: utf8(PEMFixtures.opensslEncryptedTest1Passphrase))
        #expect(try key.seed == bytes(fromHex: RFC8032Vectors.test1.secretKeyHex))
    }

    /// An encrypted key written by the OpenSSL command line decrypts to the RFC 8032 TEST 1 key.
    @Test func readsKeyEncryptedByOpenSSL() throws {
        let key = try Ed25519PrivateKey(
            pem: PEMFixtures.opensslEncryptedTest1Key, passphrase: utf8(PEMFixtures.opensslEncryptedTest1Passphrase))
        #expect(try key.seed == bytes(fromHex: RFC8032Vectors.test1.secretKeyHex))
        #expect(key.publicKey.rawRepresentation == (try bytes(fromHex: RFC8032Vectors.test1.publicKeyHex)))
    }

    /// The RFC 8410 example private key loads to its seed and to the public key of the RFC 8410 public example.
    @Test func readsRFC8410PrivateKey() throws {
        let key = try Ed25519PrivateKey(pem: PEMFixtures.rfc8410PrivateKey)
        #expect(try key.seed == bytes(fromHex: PEMFixtures.rfc8410Seed))
        #expect(key.publicKey.rawRepresentation == (try bytes(fromHex: PEMFixtures.rfc8410PublicKeyRaw)))
    }

    /// The wrong passphrase fails with `.wrongPassphrase`; the message says the passphrase is wrong and contains
    /// neither the passphrase tried nor the right one.
    @Test func wrongPassphraseIsReported() throws {
        let key = try Ed25519PrivateKey(seed: bytes(fromHex: RFC8032Vectors.test2.secretKeyHex))
        let pem = try key.pem(passphrase: Self.passphrase, cost: .cheap)
        for attempt in [Self.wrongPassphrase, Array(Self.passphrase.dropLast()) + [0x38], utf8("x")] {
            let error = #expect(throws: CryptoError.self) {
                try Ed25519PrivateKey(pem: pem, passphrase: attempt)
            }
            let thrown = try #require(error)
            #expect(thrown.kind == .wrongPassphrase)
            #expect(thrown.message.contains("passphrase"))
            #expect(thrown.message.contains("does not decrypt"))
            for secret in [attempt, Self.passphrase] {
                let text = String(decoding: secret, as: UTF8.self)
                #expect(!thrown.message.contains(text))
                #expect(!thrown.description.contains(text))
                #expect(!String(describing: thrown).contains(text))
            }
        }
    }

    /// The OpenSSL-encrypted fixture with a wrong passphrase is also `.wrongPassphrase`, not `.invalidKey`.
    @Test func wrongPassphraseOnExternalKey() {
        let error = #expect(throws: CryptoError.self) {
            try Ed25519PrivateKey(pem: PEMFixtures.opensslEncryptedTest1Key, passphrase: Self.wrongPassphrase)
        }
        #expect(error?.kind == .wrongPassphrase)
    }

    /// An encrypted key loaded without a passphrase fails with `.passphraseRequired` (and never prompts).
    @Test func missingPassphraseIsReported() throws {
        let key = try Ed25519PrivateKey()
        let pem = try key.pem(passphrase: Self.passphrase, cost: .cheap)
        let error = #expect(throws: CryptoError.self) { try Ed25519PrivateKey(pem: pem) }
        #expect(error?.kind == .passphraseRequired)
        #expect(error?.message.contains("passphrase") == true)
        let external = #expect(throws: CryptoError.self) {
            try Ed25519PrivateKey(pem: PEMFixtures.opensslEncryptedTest1Key, passphrase: nil)
        }
        #expect(external?.kind == .passphraseRequired)
    }

    // MARK: Public keys

    /// A public key PEM (`PUBLIC KEY`, SubjectPublicKeyInfo) reloads to the same key, and verifies the same
    /// signatures.
    @Test func publicKeyRoundTrip() throws {
        let vector = try RFC8032Vectors.test3.decoded()
        let publicKey = try Ed25519PrivateKey(seed: vector.seed).publicKey
        let pem = try publicKey.pem
        #expect(pem.hasPrefix("-----BEGIN PUBLIC KEY-----\n"))
        #expect(pem.hasSuffix("-----END PUBLIC KEY-----\n"))
        let reloaded = try Ed25519PublicKey(pem: pem)
        #expect(reloaded == publicKey)
        #expect(reloaded.rawRepresentation == vector.publicKey)
        #expect(reloaded.isValidSignature(vector.signature, for: vector.message))
    }

    /// The RFC 8410 example public key loads to its 32 raw bytes and writes back to the identical document.
    @Test func readsRFC8410PublicKey() throws {
        let publicKey = try Ed25519PublicKey(pem: PEMFixtures.rfc8410PublicKey)
        #expect(publicKey.rawRepresentation == (try bytes(fromHex: PEMFixtures.rfc8410PublicKeyRaw)))
        #expect(try publicKey.pem == PEMFixtures.rfc8410PublicKey)
    }

    // MARK: Invalid input

    /// Text that is not a PEM key fails with `.invalidKey`, for both private and public keys.
    @Test(arguments: PEMFixtures.garbage)
    func garbageIsInvalidKey(garbage: LabelledText) {
        let privateError = #expect(throws: CryptoError.self) { try Ed25519PrivateKey(pem: garbage.text) }
        #expect(privateError?.kind == .invalidKey)
        let publicError = #expect(throws: CryptoError.self) { try Ed25519PublicKey(pem: garbage.text) }
        #expect(publicError?.kind == .invalidKey)
    }

    /// A well-formed key of another algorithm (X25519) is refused with `.invalidKey`.
    @Test func nonEd25519KeyIsInvalidKey() {
        let privateError = #expect(throws: CryptoError.self) {
            try Ed25519PrivateKey(pem: PEMFixtures.x25519PrivateKey)
        }
        #expect(privateError?.kind == .invalidKey)
        #expect(privateError?.message.contains("not an Ed25519 key") == true)
        let publicError = #expect(throws: CryptoError.self) { try Ed25519PublicKey(pem: PEMFixtures.x25519PublicKey) }
        #expect(publicError?.kind == .invalidKey)
        #expect(publicError?.message.contains("not an Ed25519 key") == true)
    }

    /// A private key PEM is not accepted where a public key is expected, and vice versa.
    @Test func privateAndPublicDocumentsAreNotInterchangeable() {
        let asPublic = #expect(throws: CryptoError.self) { try Ed25519PublicKey(pem: PEMFixtures.rfc8410PrivateKey) }
        #expect(asPublic?.kind == .invalidKey)
        let asPrivate = #expect(throws: CryptoError.self) { try Ed25519PrivateKey(pem: PEMFixtures.rfc8410PublicKey) }
        #expect(asPrivate?.kind == .invalidKey)
    }
}

/// Passphrases OpenSSL would silently cut (NUL bytes, over 1,024 bytes) or cannot use (empty) are
/// refused when writing and reading, so a key written with a passphrase always reads back with it.
@Test func unusablePassphrasesAreRefused() throws {
    let key = try Ed25519PrivateKey()
    for passphrase in [[UInt8](), [0x61, 0x00, 0x62], [UInt8](repeating: 0x61, count: 1025)] {
        #expect(throws: CryptoError.self) { _ = try key.pem(passphrase: passphrase) }
        let pem = try key.pem(passphrase: Array("valid".utf8), cost: .cheap)
        do {
            _ = try Ed25519PrivateKey(pem: pem, passphrase: passphrase)
            Issue.record("a \(passphrase.count)-byte passphrase was accepted")
        } catch {
            #expect(error.kind == .invalidPassphrase)
        }
    }
    let longest = [UInt8](repeating: 0x62, count: 1024)
    let reloaded = try Ed25519PrivateKey(pem: try key.pem(passphrase: longest, cost: .cheap), passphrase: longest)
    #expect(try reloaded.seed == key.seed)
}

// MARK: - Key derivation of an encrypted PEM

extension Ed25519PrivateKey.ScryptCost {
    /// For tests of the PEM code that do not test the work factor: about a thousandth of the standard cost.
    static let cheap = Ed25519PrivateKey.ScryptCost(n: 1 << 10, r: 8, p: 1)
}

/// The key derivation named in an `ENCRYPTED PRIVATE KEY` document, read straight from its DER (PBES2,
/// RFC 8018): the KDF's object identifier, then its parameters SEQUENCE { salt OCTET STRING, INTEGER… }.
enum KeyDerivation: Equatable {
    case pbkdf2(saltBytes: Int, iterations: UInt64)
    case scrypt(saltBytes: Int, n: UInt64, r: UInt64, p: UInt64)

    /// id-PBKDF2 (1.2.840.113549.1.5.12) and id-scrypt (1.3.6.1.4.1.11591.4.11), DER-encoded.
    static let pbkdf2OID: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x05, 0x0C]
    static let scryptOID: [UInt8] = [0x06, 0x09, 0x2B, 0x06, 0x01, 0x04, 0x01, 0xDA, 0x47, 0x04, 0x0B]

    init?(pem: String) {
        let body = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
        guard let der = Data(base64Encoded: body).map({ [UInt8]($0) }) else { return nil }
        for (oid, count) in [(Self.pbkdf2OID, 1), (Self.scryptOID, 3)] {
            guard let start = (0...(der.count - oid.count)).first(where: { Array(der[$0..<$0 + oid.count]) == oid })
            else { continue }
            // SEQUENCE, short length; then the salt OCTET STRING; then `count` short INTEGERs.
            var at = start + oid.count
            guard der[at] == 0x30, der[at + 2] == 0x04 else { return nil }
            let salt = Int(der[at + 3])
            at += 4 + salt
            var integers: [UInt64] = []
            for _ in 0..<count {
                guard der[at] == 0x02 else { return nil }
                let length = Int(der[at + 1])
                integers.append(der[at + 2..<at + 2 + length].reduce(0) { $0 << 8 | UInt64($1) })
                at += 2 + length
            }
            self =
                count == 1
                ? .pbkdf2(saltBytes: salt, iterations: integers[0])
                : .scrypt(saltBytes: salt, n: integers[0], r: integers[1], p: integers[2])
            return
        }
        return nil
    }
}
