import LedgerCrypto
import TestSupport
import Testing

// MARK: - FIPS 180-4 vectors

/// SHA-256 examples published by NIST for FIPS 180-4 ("Cryptographic Standards and Guidelines: Examples with
/// Intermediate Values", SHA256.pdf and SHA2_Additional.pdf), message and expected digest.
enum NISTSHA256Vectors {
    /// The empty message.
    static let emptyDigest = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

    /// One-block message "abc" (24 bits).
    static let abc = "abc"
    static let abcDigest = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"

    /// Two-block message of 448 bits.
    static let twoBlock = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"
    static let twoBlockDigest = "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"

    /// One million repetitions of "a".
    static let millionACount = 1_000_000
    static let millionADigest = "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
}

@Suite("SHA-256")
struct SHA256Tests {
    // MARK: Published vectors

    /// The empty message hashes to the FIPS 180-4 value, through both the sequence and raw-buffer entry points.
    @Test func emptyMessage() throws {
        let expected = try bytes(fromHex: NISTSHA256Vectors.emptyDigest)
        #expect(SHA256.hash([UInt8]()).bytes == expected)
        #expect(SHA256.hash(UnsafeRawBufferPointer(start: nil, count: 0)).bytes == expected)
        var hasher = SHA256Hasher()
        #expect(hasher.finalize().bytes == expected)
    }

    /// "abc" hashes to the FIPS 180-4 one-block example.
    @Test func abc() throws {
        let expected = try bytes(fromHex: NISTSHA256Vectors.abcDigest)
        #expect(SHA256.hash(utf8(NISTSHA256Vectors.abc)).bytes == expected)
        #expect(SHA256.hash(NISTSHA256Vectors.abc.utf8).hex == NISTSHA256Vectors.abcDigest)
    }

    /// The 448-bit message hashes to the FIPS 180-4 two-block example (padding spills into a second block).
    @Test func twoBlockMessage() throws {
        let message = utf8(NISTSHA256Vectors.twoBlock)
        #expect(message.count * 8 == 448)
        let expected = try bytes(fromHex: NISTSHA256Vectors.twoBlockDigest)
        #expect(SHA256.hash(message).bytes == expected)
        message.withUnsafeBytes { raw in
            #expect(SHA256.hash(raw).bytes == expected)
        }
    }

    /// One million "a" hashed in one call matches the FIPS 180-4 long-message example.
    @Test func millionAOneShot() throws {
        let message = [UInt8](repeating: UInt8(ascii: "a"), count: NISTSHA256Vectors.millionACount)
        #expect(SHA256.hash(message).hex == NISTSHA256Vectors.millionADigest)
    }

    /// One million "a" fed through `SHA256Hasher` in uneven chunks (including empty ones, single bytes and
    /// pieces that straddle 64-byte block boundaries), through every `update` overload, matches the same digest.
    @Test func millionAIncremental() throws {
        let message = [UInt8](repeating: UInt8(ascii: "a"), count: NISTSHA256Vectors.millionACount)
        let chunkSizes = [1, 63, 0, 64, 65, 127, 3, 1000, 4093, 7, 129, 55, 56, 8191]
        var hasher = SHA256Hasher()
        var offset = 0
        var step = 0
        while offset < message.count {
            let size = min(chunkSizes[step % chunkSizes.count], message.count - offset)
            let chunk = message[offset..<offset + size]
            switch step % 4 {
            case 0:
                hasher.update(chunk)  // contiguous slice
            case 1:
                chunk.withUnsafeBytes { hasher.update($0) }  // raw buffer
            case 2:
                hasher.update(repeatElement(UInt8(ascii: "a"), count: size))  // non-contiguous sequence
            default:
                for byte in chunk { hasher.update(byte: byte) }  // byte at a time
            }
            offset += size
            step += 1
        }
        #expect(step > 100, "the message should be split into many chunks")
        #expect(hasher.finalize().hex == NISTSHA256Vectors.millionADigest)
    }

    // MARK: Incremental equals one-shot

    /// For messages of many lengths split at random points (seeded, so reproducible), feeding the pieces
    /// incrementally gives exactly the one-shot digest.
    @Test(arguments: [0, 1, 55, 56, 63, 64, 65, 119, 128, 1000, 4097, 65_537])
    func incrementalMatchesOneShot(length: Int) {
        var rng = SplitMix64(seed: 0x5EED_0000 &+ UInt64(length))
        let message = (0..<length).map { _ in UInt8.random(in: .min ... .max, using: &rng) }
        let oneShot = SHA256.hash(message)
        for _ in 0..<20 {
            let cutCount = Int.random(in: 0...min(length, 12), using: &rng)
            let cuts = (0..<cutCount).map { _ in Int.random(in: 0...length, using: &rng) }.sorted()
            var hasher = SHA256Hasher()
            var start = 0
            for cut in cuts + [length] {
                hasher.update(message[start..<cut])
                start = cut
            }
            #expect(hasher.finalize() == oneShot, "cuts \(cuts) of a \(length)-byte message")
        }
    }

    /// `update(_ digest:)` feeds exactly the digest's 32 bytes, as Merkle interior nodes rely on.
    @Test func updateWithDigestFeedsItsBytes() {
        let left = SHA256.hash(utf8("left"))
        let right = SHA256.hash(utf8("right"))
        var hasher = SHA256Hasher()
        hasher.update(byte: 0x01)
        hasher.update(left)
        hasher.update(right)
        #expect(hasher.finalize() == SHA256.hash([0x01] + left.bytes + right.bytes))
    }
}
