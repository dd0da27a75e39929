/// A 32-byte hash value (SHA-256 output or HMAC-SHA256 tag), stored inline so hashing millions of leaves
/// allocates nothing.
public struct Digest: Hashable, Sendable, CustomStringConvertible, Comparable {
    /// Number of bytes in a digest.
    public static let byteCount = 32

    /// All zero bytes: the "previous header hash" of a genesis block.
    public static let zero = Digest(words: (0, 0, 0, 0))

    @usableFromInline var words: (UInt64, UInt64, UInt64, UInt64)

    private init(words: (UInt64, UInt64, UInt64, UInt64)) {
        self.words = words
    }

    /// Copies exactly 32 bytes; `nil` for any other length (a proof hash of the wrong size must never match).
    public init?<Bytes: Collection<UInt8>>(bytes: Bytes) {
        guard bytes.count == Digest.byteCount else { return nil }
        self.init(words: (0, 0, 0, 0))
        withUnsafeMutableBytes(of: &words) { raw in
            for (offset, byte) in bytes.enumerated() { raw[offset] = byte }
        }
    }

    /// Reads 32 bytes from `raw`, which must hold at least that many.
    public init(unsafeUninitializedReading raw: UnsafeRawBufferPointer) {
        precondition(raw.count >= Digest.byteCount, "a digest needs 32 bytes")
        self.init(words: (0, 0, 0, 0))
        withUnsafeMutableBytes(of: &words) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: raw[0..<32])) }
    }

    /// Parses 64 hexadecimal characters; `nil` otherwise.
    public init?(hex: String) {
        guard let bytes = Hex.decode(hex) else { return nil }
        self.init(bytes: bytes)
    }

    /// Calls `body` with the 32 bytes of the digest.
    @inlinable
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try Swift.withUnsafeBytes(of: words, body)
    }

    /// The 32 bytes as an array.
    public var bytes: [UInt8] { withUnsafeBytes { Array($0) } }

    /// Lowercase hexadecimal, 64 characters.
    public var hex: String { Hex.encode(bytes) }

    public var description: String { hex }

    public static func == (lhs: Digest, rhs: Digest) -> Bool {
        lhs.words.0 == rhs.words.0 && lhs.words.1 == rhs.words.1 && lhs.words.2 == rhs.words.2
            && lhs.words.3 == rhs.words.3
    }

    /// Byte-wise (lexicographic) order, compared a word at a time.
    public static func < (lhs: Digest, rhs: Digest) -> Bool {
        let l = (lhs.words.0.bigEndian, lhs.words.1.bigEndian, lhs.words.2.bigEndian, lhs.words.3.bigEndian)
        let r = (rhs.words.0.bigEndian, rhs.words.1.bigEndian, rhs.words.2.bigEndian, rhs.words.3.bigEndian)
        return l < r
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(words.0)
        hasher.combine(words.1)
        hasher.combine(words.2)
        hasher.combine(words.3)
    }
}

/// Lowercase hexadecimal encoding, used for digests, keys and ids in files and output.
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// Encodes bytes as lowercase hex.
    public static func encode<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> String {
        var out = [UInt8]()
        out.reserveCapacity(bytes.underestimatedCount * 2)
        for byte in bytes { append(byte, to: &out) }
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends `bytes` as lowercase hex to `out`: a response written as bytes (the server's receipts) gets
    /// its digests without a string per digest. Not generic, so a caller in another module gets no
    /// unspecialised loop.
    public static func append(_ bytes: UnsafeRawBufferPointer, to out: inout [UInt8]) {
        var at = out.count
        out.append(contentsOf: repeatElement(0, count: bytes.count * 2))
        digits.withUnsafeBufferPointer { digits in
            out.withUnsafeMutableBufferPointer { out in
                for byte in bytes {
                    out[at] = digits[Int(byte >> 4)]
                    out[at + 1] = digits[Int(byte & 0x0f)]
                    at += 2
                }
            }
        }
    }

    private static func append(_ byte: UInt8, to out: inout [UInt8]) {
        out.append(digits[Int(byte >> 4)])
        out.append(digits[Int(byte & 0x0f)])
    }

    /// Decodes hex (either case); `nil` on an odd length or a non-hex character.
    public static func decode(_ text: String) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = nibble(utf8[index]), let low = nibble(utf8[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }

    private static func nibble(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return c - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
