import LedgerCrypto
import TestSupport
import Testing

// MARK: - RFC 8032 vectors

/// One Ed25519 test vector from RFC 8032 §7.1: secret key (the 32-byte seed), public key, message and signature,
/// all hex exactly as printed in the RFC (line breaks kept where the RFC wraps).
struct Ed25519Vector: Sendable, CustomTestStringConvertible {
    let name: String
    let secretKeyHex: String
    let publicKeyHex: String
    let messageHex: String
    let signatureHex: String

    var testDescription: String { name }

    /// The four vectors decoded to bytes.
    struct Decoded {
        let seed: [UInt8]
        let publicKey: [UInt8]
        let message: [UInt8]
        let signature: [UInt8]
    }

    func decoded() throws -> Decoded {
        Decoded(
            seed: try bytes(fromHex: secretKeyHex), publicKey: try bytes(fromHex: publicKeyHex),
            message: try bytes(fromHex: messageHex), signature: try bytes(fromHex: signatureHex))
    }
}

/// RFC 8032 §7.1, "Test Vectors for Ed25519": TEST 1, TEST 2, TEST 3 and TEST 1024.
enum RFC8032Vectors {
    static let test1 = Ed25519Vector(
        name: "RFC 8032 TEST 1 (empty message)",
        secretKeyHex: "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
        publicKeyHex: "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a",
        messageHex: "",
        signatureHex: """
            e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155
            5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b
            """)

    static let test2 = Ed25519Vector(
        name: "RFC 8032 TEST 2 (1-byte message)",
        secretKeyHex: "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
        publicKeyHex: "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c",
        messageHex: "72",
        signatureHex: """
            92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da
            085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00
            """)

    static let test3 = Ed25519Vector(
        name: "RFC 8032 TEST 3 (2-byte message)",
        secretKeyHex: "c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
        publicKeyHex: "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025",
        messageHex: "af82",
        signatureHex: """
            6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac
            18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a
            """)

    static let test1024 = Ed25519Vector(
        name: "RFC 8032 TEST 1024 (1023-byte message)",
        secretKeyHex: "f5e5767cf153319517630f226876b86c8160cc583bc013744c6bf255f5cc0ee5",
        publicKeyHex: "278117fc144c72340f67d0f2316e8386ceffbf2b2428c9c51fef7c597f1d426e",
        messageHex: """
            08b8b2b733424243760fe426a4b54908632110a66c2f6591eabd3345e3e4eb98
            fa6e264bf09efe12ee50f8f54e9f77b1e355f6c50544e23fb1433ddf73be84d8
            79de7c0046dc4996d9e773f4bc9efe5738829adb26c81b37c93a1b270b20329d
            658675fc6ea534e0810a4432826bf58c941efb65d57a338bbd2e26640f89ffbc
            1a858efcb8550ee3a5e1998bd177e93a7363c344fe6b199ee5d02e82d522c4fe
            ba15452f80288a821a579116ec6dad2b3b310da903401aa62100ab5d1a36553e
            06203b33890cc9b832f79ef80560ccb9a39ce767967ed628c6ad573cb116dbef
            efd75499da96bd68a8a97b928a8bbc103b6621fcde2beca1231d206be6cd9ec7
            aff6f6c94fcd7204ed3455c68c83f4a41da4af2b74ef5c53f1d8ac70bdcb7ed1
            85ce81bd84359d44254d95629e9855a94a7c1958d1f8ada5d0532ed8a5aa3fb2
            d17ba70eb6248e594e1a2297acbbb39d502f1a8c6eb6f1ce22b3de1a1f40cc24
            554119a831a9aad6079cad88425de6bde1a9187ebb6092cf67bf2b13fd65f270
            88d78b7e883c8759d2c4f5c65adb7553878ad575f9fad878e80a0c9ba63bcbcc
            2732e69485bbc9c90bfbd62481d9089beccf80cfe2df16a2cf65bd92dd597b07
            07e0917af48bbb75fed413d238f5555a7a569d80c3414a8d0859dc65a46128ba
            b27af87a71314f318c782b23ebfe808b82b0ce26401d2e22f04d83d1255dc51a
            ddd3b75a2b1ae0784504df543af8969be3ea7082ff7fc9888c144da2af58429e
            c96031dbcad3dad9af0dcbaaaf268cb8fcffead94f3c7ca495e056a9b47acdb7
            51fb73e666c6c655ade8297297d07ad1ba5e43f1bca32301651339e22904cc8c
            42f58c30c04aafdb038dda0847dd988dcda6f3bfd15c4b4c4525004aa06eeff8
            ca61783aacec57fb3d1f92b0fe2fd1a85f6724517b65e614ad6808d6f6ee34df
            f7310fdc82aebfd904b01e1dc54b2927094b2db68d6f903b68401adebf5a7e08
            d78ff4ef5d63653a65040cf9bfd4aca7984a74d37145986780fc0b16ac451649
            de6188a7dbdf191f64b5fc5e2ab47b57f7f7276cd419c17a3ca8e1b939ae49e4
            88acba6b965610b5480109c8b17b80e1b7b750dfc7598d5d5011fd2dcc5600a3
            2ef5b52a1ecc820e308aa342721aac0943bf6686b64b2579376504ccc493d97e
            6aed3fb0f9cd71a43dd497f01f17c0e2cb3797aa2a2f256656168e6c496afc5f
            b93246f6b1116398a346f1a641f3b041e989f7914f90cc2c7fff357876e506b5
            0d334ba77c225bc307ba537152f3f1610e4eafe595f6d9d90d11faa933a15ef1
            369546868a7f3a45a96768d40fd9d03412c091c6315cf4fde7cb68606937380d
            b2eaaa707b4c4185c32eddcdd306705e4dc1ffc872eeee475a64dfac86aba41c
            0618983f8741c5ef68d3a101e8a3b8cac60c905c15fc910840b94c00a0b9d0
            """,
        signatureHex: """
            0aab4c900501b3e24d7cdf4663326a3a87df5e4843b2cbdb67cbf6e460fec350
            aa5371b1508f9f4528ecea23c436d94b5e8fcd4f681e30a6ac00a9704a188a03
            """)

    static let all = [test1, test2, test3, test1024]
}

@Suite("Ed25519")
struct Ed25519Tests {
    // MARK: Published vectors

    /// The vectors were transcribed with the lengths RFC 8032 states (32-byte keys, 64-byte signatures, and
    /// messages of 0, 1, 2 and 1023 bytes), so a dropped or doubled hex pair cannot go unnoticed.
    @Test func vectorLengthsMatchTheRFC() throws {
        let lengths = try RFC8032Vectors.all.map { try $0.decoded().message.count }
        #expect(lengths == [0, 1, 2, 1023])
        for vector in RFC8032Vectors.all {
            let decoded = try vector.decoded()
            #expect(decoded.seed.count == 32, "\(vector.name)")
            #expect(decoded.publicKey.count == 32, "\(vector.name)")
            #expect(decoded.signature.count == 64, "\(vector.name)")
        }
    }

    /// Importing the RFC secret key derives exactly the RFC public key, and the seed reads back unchanged.
    @Test(arguments: RFC8032Vectors.all)
    func derivesPublicKeyFromSeed(vector: Ed25519Vector) throws {
        let decoded = try vector.decoded()
        let key = try Ed25519PrivateKey(seed: decoded.seed)
        #expect(key.publicKey.rawRepresentation == decoded.publicKey)
        #expect(try key.seed == decoded.seed)
    }

    /// Signing the RFC message gives the RFC signature byte for byte (Ed25519 signing is deterministic).
    @Test(arguments: RFC8032Vectors.all)
    func signsExactlyAsPublished(vector: Ed25519Vector) throws {
        let decoded = try vector.decoded()
        let key = try Ed25519PrivateKey(seed: decoded.seed)
        let signature = try key.signature(for: decoded.message)
        #expect(signature == decoded.signature)
        // Signing twice gives the same bytes.
        #expect(try key.signature(for: decoded.message) == signature)
    }

    /// The RFC signature verifies under the RFC public key, imported from raw bytes alone (no private key involved),
    /// and under the public key derived from the seed.
    @Test(arguments: RFC8032Vectors.all)
    func verifiesPublishedSignature(vector: Ed25519Vector) throws {
        let decoded = try vector.decoded()
        let publicKey = try Ed25519PublicKey(rawRepresentation: decoded.publicKey)
        let acceptedByImported = publicKey.isValidSignature(decoded.signature, for: decoded.message)
        #expect(acceptedByImported, "RFC public key imported from raw bytes")
        let derived = try Ed25519PrivateKey(seed: decoded.seed).publicKey
        #expect(derived == publicKey)
        let acceptedByDerived = derived.isValidSignature(decoded.signature, for: decoded.message)
        #expect(acceptedByDerived, "public key derived from the RFC seed")
    }

    // MARK: Tampering

    /// Flipping any single bit of the message (first, last, middle and seeded random positions) makes the published
    /// signature fail; for the empty message of TEST 1, appending any byte does.
    @Test(arguments: RFC8032Vectors.all)
    func tamperedMessageFails(vector: Ed25519Vector) throws {
        let decoded = try vector.decoded()
        let publicKey = try Ed25519PublicKey(rawRepresentation: decoded.publicKey)
        let bitCount = decoded.message.count * 8
        guard bitCount > 0 else {
            for extra: UInt8 in [0x00, 0x01, 0xff] {
                #expect(!publicKey.isValidSignature(decoded.signature, for: [extra]), "appended \(extra)")
            }
            return
        }
        var rng = SplitMix64(seed: UInt64(bitCount))
        var positions: Set<Int> = [0, 7, bitCount / 2, bitCount - 1]
        for _ in 0..<12 { positions.insert(Int.random(in: 0..<bitCount, using: &rng)) }
        for bit in positions.sorted() {
            let accepted = publicKey.isValidSignature(decoded.signature, for: flippingBit(bit, of: decoded.message))
            #expect(!accepted, "message bit \(bit) flipped")
        }
        // Truncating or extending the message fails too.
        let acceptedTruncated = publicKey.isValidSignature(decoded.signature, for: decoded.message.dropLast())
        #expect(!acceptedTruncated, "message truncated by one byte")
        let acceptedExtended = publicKey.isValidSignature(decoded.signature, for: decoded.message + [0])
        #expect(!acceptedExtended, "message extended by one byte")
    }

    /// Flipping a single bit anywhere in the signature (in R, in S, and S's top bit, which would put S out of range)
    /// makes it fail.
    @Test(arguments: RFC8032Vectors.all)
    func tamperedSignatureFails(vector: Ed25519Vector) throws {
        let decoded = try vector.decoded()
        let publicKey = try Ed25519PublicKey(rawRepresentation: decoded.publicKey)
        for bit in [0, 1, 7, 8, 100, 200, 254, 255, 256, 257, 300, 400, 500, 509, 510, 511] {
            let accepted = publicKey.isValidSignature(flippingBit(bit, of: decoded.signature), for: decoded.message)
            #expect(!accepted, "signature bit \(bit) flipped")
        }
    }

    /// A signature of the wrong length (empty, 63, 65 bytes, or the valid one with a byte appended) is rejected
    /// rather than read out of bounds or truncated.
    @Test func wrongLengthSignatureFails() throws {
        let decoded = try RFC8032Vectors.test2.decoded()
        let publicKey = try Ed25519PublicKey(rawRepresentation: decoded.publicKey)
        #expect(!publicKey.isValidSignature([], for: decoded.message))
        #expect(!publicKey.isValidSignature(decoded.signature.dropLast(), for: decoded.message))
        #expect(!publicKey.isValidSignature(decoded.signature + [0], for: decoded.message))
        #expect(!publicKey.isValidSignature([UInt8](repeating: 0, count: 64), for: decoded.message))
    }

    /// A valid signature by one key does not verify under any other key, even for the same message.
    @Test func signatureFromAnotherKeyFails() throws {
        let vectors = try RFC8032Vectors.all.map { try $0.decoded() }
        for (signer, signed) in vectors.enumerated() {
            for (verifier, other) in vectors.enumerated() where verifier != signer {
                let publicKey = try Ed25519PublicKey(rawRepresentation: other.publicKey)
                let accepted = publicKey.isValidSignature(signed.signature, for: signed.message)
                #expect(!accepted, "signature of vector \(signer) checked with the key of vector \(verifier)")
            }
        }
        // The same message signed by two different keys: each signature verifies only under its own key.
        let message = utf8("block header 42")
        let alice = try Ed25519PrivateKey()
        let mallory = try Ed25519PrivateKey()
        let forged = try mallory.signature(for: message)
        #expect(mallory.publicKey.isValidSignature(forged, for: message))
        #expect(!alice.publicKey.isValidSignature(forged, for: message))
    }

    // MARK: Keys

    /// Fresh random keys differ, and each signs and verifies its own messages.
    @Test func randomKeysSignAndVerify() throws {
        let first = try Ed25519PrivateKey()
        let second = try Ed25519PrivateKey()
        #expect(try first.seed != second.seed)
        #expect(first.publicKey != second.publicKey)
        let message = utf8("genesis")
        let signature = try first.signature(for: message)
        #expect(signature.count == 64)
        #expect(first.publicKey.isValidSignature(signature, for: message))
        #expect(first.publicKey.isValidSignature(signature, for: message[...]))  // any Sequence<UInt8>
    }

    /// Raw keys of any length but 32 bytes are refused with `.invalidKey`.
    @Test(arguments: [0, 1, 31, 33, 64])
    func rawKeyOfWrongLengthIsInvalid(length: Int) {
        let raw = [UInt8](repeating: 0x42, count: length)
        let privateError = #expect(throws: CryptoError.self) { try Ed25519PrivateKey(seed: raw) }
        #expect(privateError?.kind == .invalidKey)
        let publicError = #expect(throws: CryptoError.self) { try Ed25519PublicKey(rawRepresentation: raw) }
        #expect(publicError?.kind == .invalidKey)
    }

    /// Public keys compare and hash by their 32 bytes, so they work as dictionary keys.
    @Test func publicKeyEqualityAndHashing() throws {
        let raw = try bytes(fromHex: RFC8032Vectors.test1.publicKeyHex)
        let a = try Ed25519PublicKey(rawRepresentation: raw)
        let b = try Ed25519PublicKey(rawRepresentation: raw)
        let other = try Ed25519PublicKey(rawRepresentation: try bytes(fromHex: RFC8032Vectors.test2.publicKeyHex))
        #expect(a == b)
        #expect(a != other)
        #expect(Set([a, b, other]).count == 2)
    }
}
