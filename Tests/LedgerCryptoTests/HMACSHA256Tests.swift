import LedgerCrypto
import Testing

// MARK: - RFC 4231 vectors

/// One HMAC-SHA-256 test case from RFC 4231 §4: key and data as given there, with the full 32-byte MAC.
struct HMACVector: Sendable, CustomTestStringConvertible {
    let name: String
    let keyHex: String
    let dataHex: String
    let macHex: String

    var testDescription: String { name }
}

/// RFC 4231 §4.2–§4.8, HMAC-SHA-256 results. Test Case 5 is left out: it checks output truncated to 128 bits,
/// which this API does not offer. Keys and data are hex, exactly as printed in the RFC.
enum RFC4231Vectors {
    static let all: [HMACVector] = [
        HMACVector(
            name: "RFC 4231 Test Case 1",
            keyHex: "0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b",  // 20 bytes
            dataHex: "4869205468657265",  // "Hi There"
            macHex: "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
        HMACVector(
            name: "RFC 4231 Test Case 2 (key shorter than the output)",
            keyHex: "4a656665",  // "Jefe"
            dataHex: "7768617420646f2079612077616e7420666f72206e6f7468696e673f",  // "what do ya want for nothing?"
            macHex: "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
        HMACVector(
            name: "RFC 4231 Test Case 3 (combined key and data longer than 64 bytes)",
            keyHex: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",  // 20 bytes
            dataHex: """
                dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd
                dddddddddddddddd
                """,  // 50 bytes of 0xdd
            macHex: "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"),
        HMACVector(
            name: "RFC 4231 Test Case 4 (combined key and data longer than 64 bytes)",
            keyHex: "0102030405060708090a0b0c0d0e0f10111213141516171819",  // 25 bytes
            dataHex: """
                cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd
                cdcdcdcdcdcdcdcd
                """,  // 50 bytes of 0xcd
            macHex: "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"),
        HMACVector(
            name: "RFC 4231 Test Case 6 (key larger than the 64-byte block)",
            keyHex: String(repeating: "aa", count: 131),  // 131 bytes of 0xaa
            // "Test Using Larger Than Block-Size Key - Hash Key First"
            dataHex: """
                54657374205573696e67204c6172676572205468616e20426c6f636b2d53697a65204b6579202d20486173
                68204b6579204669727374
                """,
            macHex: "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
        HMACVector(
            name: "RFC 4231 Test Case 7 (key and data larger than the block)",
            keyHex: String(repeating: "aa", count: 131),  // 131 bytes of 0xaa
            // "This is a test using a larger than block-size key and a larger than block-size data. The key needs to
            // be hashed before being used by the HMAC algorithm."
            dataHex: """
                5468697320697320612074657374207573696e672061206c6172676572207468616e20626c6f636b2d73697a
                65206b657920616e642061206c6172676572207468616e20626c6f636b2d73697a6520646174612e20546865
                206b6579206e6565647320746f20626520686173686564206265666f7265206265696e672075736564206279
                2074686520484d414320616c676f726974686d2e
                """,
            macHex: "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"),
    ]
}

@Suite("HMAC-SHA256")
struct HMACSHA256Tests {
    // MARK: Published vectors

    /// Each RFC 4231 HMAC-SHA-256 case (1, 2, 3, 4, 6, 7) produces the published 32-byte MAC.
    @Test(arguments: RFC4231Vectors.all)
    func rfc4231(vector: HMACVector) throws {
        let key = try bytes(fromHex: vector.keyHex)
        let data = try bytes(fromHex: vector.dataHex)
        let expected = try bytes(fromHex: vector.macHex)
        let mac = HMACSHA256.authenticationCode(for: data, key: key)
        #expect(mac.bytes == expected)
        #expect(mac.hex == vector.macHex)
    }

    /// The text messages of cases 1, 2, 6 and 7 spelled as strings decode to the hex above, so the hex was typed in
    /// correctly (a second, independent transcription of the RFC).
    @Test func rfc4231TextMessagesMatchTheirHex() throws {
        let vectors = RFC4231Vectors.all
        #expect(try bytes(fromHex: vectors[0].dataHex) == utf8("Hi There"))
        #expect(try bytes(fromHex: vectors[1].keyHex) == utf8("Jefe"))
        #expect(try bytes(fromHex: vectors[1].dataHex) == utf8("what do ya want for nothing?"))
        #expect(try bytes(fromHex: vectors[2].dataHex) == [UInt8](repeating: 0xdd, count: 50))
        #expect(try bytes(fromHex: vectors[3].keyHex) == Array(1...25))
        #expect(try bytes(fromHex: vectors[3].dataHex) == [UInt8](repeating: 0xcd, count: 50))
        #expect(
            try bytes(fromHex: vectors[4].dataHex) == utf8("Test Using Larger Than Block-Size Key - Hash Key First"))
        #expect(
            try bytes(fromHex: vectors[5].dataHex)
                == utf8(
                    "This is a test using a larger than block-size key and a larger than block-size data. "
                        + "The key needs to be hashed before being used by the HMAC algorithm."))
    }

    // MARK: Edge cases

    /// An empty key and an empty message still give the standard HMAC (not OpenSSL's "reuse the previous key").
    /// Expected value computed independently with Python: `hmac.new(b"", b"", hashlib.sha256).hexdigest()`.
    @Test func emptyKeyAndMessage() {
        let expected = "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad"
        #expect(HMACSHA256.authenticationCode(for: [], key: []).hex == expected)
        // Again after a keyed call on the same thread, so no state can leak from one call into the next.
        _ = HMACSHA256.authenticationCode(for: utf8("x"), key: utf8("some other key"))
        #expect(HMACSHA256.authenticationCode(for: [], key: []).hex == expected)
    }

    /// Different keys give different tags for the same message (the key is actually used).
    @Test func keyChangesTheTag() {
        let message = utf8("voter-0001")
        #expect(
            HMACSHA256.authenticationCode(for: message, key: utf8("key A"))
                != HMACSHA256.authenticationCode(for: message, key: utf8("key B")))
    }
}
