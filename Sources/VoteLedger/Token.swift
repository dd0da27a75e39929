public import LedgerCrypto

/// A voting token: 160 random bits shown as 32 base32 characters in groups of four, so a person can read
/// and type it. Only its SHA-256 is stored; the token itself is printed once and never logged.
public struct VotingToken: Sendable {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    /// The canonical form: 32 upper-case base32 characters, no separators.
    private let canonical: String

    /// A new random token.
    public static func generate() throws -> VotingToken {
        try generate(count: 1)[0]
    }

    /// `count` new random tokens, from one call to the random generator (bulk authorisation).
    public static func generate(count: Int) throws -> [VotingToken] {
        let bytes = try SecureRandom.bytes(20 * count)
        return (0..<count).map { index in
            var chars: [UInt8] = []
            chars.reserveCapacity(32)
            var buffer: UInt32 = 0
            var bits = 0
            for byte in bytes[(20 * index)..<(20 * index + 20)] {
                buffer = buffer << 8 | UInt32(byte)
                bits += 8
                while bits >= 5 {
                    chars.append(alphabet[Int((buffer >> UInt32(bits - 5)) & 31)])
                    bits -= 5
                }
            }
            return VotingToken(canonical: String(decoding: chars, as: UTF8.self))
        }
    }

    private init(canonical: String) { self.canonical = canonical }

    /// Parses a token as typed: ASCII case, dashes and spaces do not matter. `nil` if it cannot be a token
    /// (the caller must not echo the input). One pass over the bytes: a bulk cast parses a million of them,
    /// and only ASCII letters fold (Unicode case mapping would take "ı" for "I" and "ß" for "SS").
    public init?(typed text: String) { self.init(typedBytes: text.utf8) }

    /// A token typed inside a longer line, as `init?(typed:)` reads it.
    public init?(typed text: Substring) { self.init(typedBytes: text.utf8) }

    /// A token typed inside a line read as bytes (a bulk file's), as `init?(typed:)` reads it.
    public init?(typed bytes: UnsafeBufferPointer<UInt8>) { self.init(typedBytes: bytes) }

    /// Generic only inside this module, where each call is specialised (a public generic would walk the
    /// bytes through witness tables: it took a third of a bulk cast). The canonical form is written
    /// straight into the string's storage.
    private init?(typedBytes: some Sequence<UInt8>) {
        var valid = true
        let canonical = String(unsafeUninitializedCapacity: 32) { chars in
            var count = 0
            for byte in typedBytes {
                let char: UInt8
                switch byte {
                case UInt8(ascii: "-"), UInt8(ascii: " "): continue
                case UInt8(ascii: "a")...UInt8(ascii: "z"): char = byte - 32
                case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "2")...UInt8(ascii: "7"): char = byte
                default:
                    valid = false
                    return 0
                }
                guard count < 32 else {
                    valid = false
                    return 0
                }
                chars[count] = char
                count += 1
            }
            valid = count == 32
            return count
        }
        guard valid else { return nil }
        self.canonical = canonical
    }

    /// The token grouped for people: "ABCD-EFGH-…".
    public var display: String {
        var out: [UInt8] = []
        out.reserveCapacity(39)
        for (index, char) in canonical.utf8.enumerated() {
            if index > 0, index % 4 == 0 { out.append(UInt8(ascii: "-")) }
            out.append(char)
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// What the ledger records: SHA-256 of the canonical form.
    public var hash: Digest { SHA256.hash(canonical.utf8) }
}
