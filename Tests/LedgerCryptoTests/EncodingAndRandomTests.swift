import LedgerCrypto
import Testing

@Suite("SecureRandom")
struct SecureRandomTests {
    /// `bytes(n)` returns exactly `n` bytes, including zero.
    @Test(arguments: [0, 1, 16, 32, 33, 1000, 65_536])
    func returnsRequestedCount(count: Int) throws {
        #expect(try SecureRandom.bytes(count).count == count)
    }

    /// Two 32-byte draws differ (a collision has probability 2^-256), and neither is all zeros.
    @Test func callsDiffer() throws {
        let first = try SecureRandom.bytes(32)
        let second = try SecureRandom.bytes(32)
        #expect(first != second)
        #expect(first != [UInt8](repeating: 0, count: 32))
        #expect(second != [UInt8](repeating: 0, count: 32))
    }

    /// A large draw uses every byte value, so the buffer is really filled (not, say, only its first part).
    @Test func largeDrawCoversAllByteValues() throws {
        let sample = try SecureRandom.bytes(65_536)
        #expect(Set(sample).count == 256)
        #expect(sample.suffix(64).contains { $0 != 0 })
    }
}

@Suite("Hex")
struct HexTests {
    /// Encoding is lowercase, two digits per byte, leading zeros kept.
    @Test func encodesLowercase() {
        #expect(Hex.encode([]) == "")
        #expect(Hex.encode([0x00, 0x01, 0x0a, 0x10, 0xab, 0xff]) == "00010a10abff")
        #expect(Hex.encode([0xde, 0xad, 0xbe, 0xef][...]) == "deadbeef")
    }

    /// Every byte value survives encode then decode, and decoding accepts either case.
    @Test func roundTrip() throws {
        let all = (0...255).map { UInt8($0) }
        let encoded = Hex.encode(all)
        #expect(encoded.count == 512)
        #expect(Hex.decode(encoded) == all)
        #expect(Hex.decode(encoded.uppercased()) == all)
        #expect(Hex.decode("DeAdBeEf") == [0xde, 0xad, 0xbe, 0xef])
        #expect(Hex.decode("") == [])
    }

    /// Odd lengths are rejected.
    @Test(arguments: ["0", "abc", "00000", String(repeating: "a", count: 63)])
    func rejectsOddLength(text: String) {
        #expect(Hex.decode(text) == nil)
    }

    /// Any character outside 0-9, a-f, A-F is rejected, wherever it appears.
    @Test(arguments: ["zz", "0g", "g0", "12 4", " 0", "0x12", "+1", "-1", "1\t", "ab:cd", "é", "٣٣", "００"])
    func rejectsNonHex(text: String) {
        #expect(Hex.decode(text) == nil)
    }
}

@Suite("Digest")
struct DigestTests {
    /// Only exactly 32 bytes make a digest: 31 and 33 (and other lengths) give `nil`.
    @Test(arguments: [0, 1, 31, 33, 64])
    func rejectsWrongLength(count: Int) {
        #expect(Digest(bytes: [UInt8](repeating: 0xab, count: count)) == nil)
    }

    /// 32 bytes round-trip through `bytes`, `hex` and `init(hex:)`, from any collection type.
    @Test func acceptsThirtyTwoBytes() throws {
        let raw = (0..<32).map { UInt8($0 * 7 + 1) }
        let digest = try #require(Digest(bytes: raw))
        #expect(digest.bytes == raw)
        #expect(digest.hex == Hex.encode(raw))
        #expect(digest.description == digest.hex)
        #expect(Digest(hex: digest.hex) == digest)
        #expect(Digest(hex: digest.hex.uppercased()) == digest)
        #expect(Digest(bytes: raw[...]) == digest)
        #expect(Digest(bytes: raw.reversed().reversed()) == digest)
    }

    /// `init(hex:)` needs exactly 64 hex digits.
    @Test func hexOfWrongLengthIsRejected() {
        let hex = String(repeating: "ab", count: 32)
        #expect(Digest(hex: hex) != nil)
        #expect(Digest(hex: String(hex.dropLast(2))) == nil)
        #expect(Digest(hex: hex + "ab") == nil)
        #expect(Digest(hex: String(hex.dropLast())) == nil)
        #expect(Digest(hex: String(hex.dropLast()) + "g") == nil)
    }

    /// `zero` is 32 zero bytes.
    @Test func zero() {
        #expect(Digest.zero.bytes == [UInt8](repeating: 0, count: 32))
        #expect(Digest.zero.hex == String(repeating: "0", count: 64))
    }

    /// Equality and hashing see every byte, and ordering is lexicographic by bytes (not by the words the digest is
    /// stored in).
    @Test func equalityHashingAndOrdering() throws {
        var rawA = [UInt8](repeating: 0, count: 32)
        var rawB = rawA
        rawA[0] = 0x01  // a is greater in its first byte ...
        rawB[7] = 0xff  // ... b in a later byte of the same 8-byte word
        let a = try #require(Digest(bytes: rawA))
        let b = try #require(Digest(bytes: rawB))
        #expect(b < a)
        #expect(!(a < b))
        #expect(Digest.zero < b)
        for index in 0..<32 {
            var raw = [UInt8](repeating: 0, count: 32)
            raw[index] = 1
            let digest = try #require(Digest(bytes: raw))
            #expect(digest != Digest.zero, "byte \(index)")
            #expect(Digest.zero < digest, "byte \(index)")
        }
        #expect(Set([a, b, try #require(Digest(bytes: rawA))]).count == 2)
    }
}
