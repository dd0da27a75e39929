import Testing

@testable import LedgerCrypto

/// AES-256-GCM against the published vectors of McGrew and Viega, "The Galois/Counter Mode of Operation (GCM)"
/// (the test cases NIST's GCM validation reuses): test case 14 (no data, no context) and test case 16 (data and
/// context), and what `open` refuses.
@Suite struct AESGCMTests {
    static func hex(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            bytes.append(UInt8(text[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }

    @Test func testCase14() throws {
        let key = [UInt8](repeating: 0, count: 32)
        let box = try AESGCM.seal(
            [UInt8](repeating: 0, count: 16), key: key, context: [], nonce: .init(repeating: 0, count: 12))
        #expect(
            Array(box.dropFirst(12))
                == Self.hex("cea7403d4d606b6e074ec5d3baf39d18" + "d0d1c8a799996bf0265b98b5d48ab919"))
        #expect(AESGCM.open(box, key: key, context: []) == [UInt8](repeating: 0, count: 16))
    }

    @Test func testCase16() throws {
        let key = Self.hex("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308")
        let nonce = Self.hex("cafebabefacedbaddecaf888")
        let plaintext = Self.hex(
            "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39"
        )
        let context = Self.hex("feedfacedeadbeeffeedfacedeadbeefabaddad2")
        let box = try AESGCM.seal(plaintext, key: key, context: context, nonce: nonce)
        #expect(
            Array(box.dropFirst(12))
                == Self.hex(
                    "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662"
                        + "76fc6ece0f4e1768cddf8853bb2d551b"))
        #expect(AESGCM.open(box, key: key, context: context) == plaintext)
        // Another context, a flipped byte anywhere, a box cut short: refused.
        #expect(AESGCM.open(box, key: key, context: []) == nil)
        for position in [0, 12, box.count - 1] {
            var damaged = box
            damaged[position] ^= 1
            #expect(AESGCM.open(damaged, key: key, context: context) == nil)
        }
        #expect(AESGCM.open(Array(box.prefix(27)), key: key, context: context) == nil)
    }
}
