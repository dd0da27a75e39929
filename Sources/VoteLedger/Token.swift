public import LedgerCrypto

/// A voting token: 160 random bits shown as 32 base32 characters and one check character, in groups of four, so
/// a person can read and type it and a typo is told apart from an unknown token. Only the SHA-256 of the 32
/// random characters is stored; the token itself is printed once and never logged.
///
/// The check character (README, "Voting tokens") makes the 33 characters, read as elements of GF(32), a word of
/// a code that catches any single substitution and any swap of two neighbours. It is a function of the other 32,
/// so it adds no secret and takes none away. A token of 32 characters (issued before the check character) is
/// read as before, unchecked.
public struct VotingToken: Sendable {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    /// The canonical form: 32 upper-case base32 characters, no separators, no check character.
    private let canonical: String

    /// Why a typed text is not a token.
    public enum Problem: Error, Sendable, Equatable {
        /// Not 32 or 33 letters A-Z and digits 2-7.
        case malformed
        /// 33 such characters whose check character does not match: a typo, not an unknown token.
        case mistyped
    }

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

    /// Parses a token as typed: ASCII case, dashes and spaces do not matter. `nil` if it cannot be a token or its
    /// check character does not match (the caller must not echo the input). One pass over the bytes: a bulk
    /// cast parses a million of them, and only ASCII letters fold (Unicode case mapping would take "ı" for "I"
    /// and "ß" for "SS").
    public init?(typed text: String) { self.init(typedBytes: text.utf8) }

    /// A token typed inside a longer line, as `init?(typed:)` reads it.
    public init?(typed text: Substring) { self.init(typedBytes: text.utf8) }

    /// A token typed inside a line read as bytes (a bulk file's), as `init?(typed:)` reads it.
    public init?(typed bytes: UnsafeBufferPointer<UInt8>) { self.init(typedBytes: bytes) }

    /// A token as typed, or why it is not one: a mistyped token is told apart from a malformed one.
    public static func parse(_ text: some StringProtocol) -> Result<VotingToken, Problem> {
        var problem = Problem.malformed
        guard let token = VotingToken(typedBytes: text.utf8, problem: &problem) else { return .failure(problem) }
        return .success(token)
    }

    private init?(typedBytes: some Sequence<UInt8>) {
        var problem = Problem.malformed
        self.init(typedBytes: typedBytes, problem: &problem)
    }

    /// Generic only inside this module, where each call is specialised (a public generic would walk the
    /// bytes through witness tables: it took a third of a bulk cast). The canonical form is written
    /// straight into the string's storage; a 33rd character is the check character, checked and dropped.
    private init?(typedBytes: some Sequence<UInt8>, problem: inout Problem) {
        var valid = true
        var mistyped = false
        let canonical = String(unsafeUninitializedCapacity: 33) { chars in
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
                guard count < 33 else {
                    valid = false
                    return 0
                }
                chars[count] = char
                count += 1
            }
            guard count == 32 || count == 33 else {
                valid = false
                return 0
            }
            if count == 33 {
                mistyped = VotingToken.checkCharacter(chars[..<32]) != chars[32]
            }
            return 32
        }
        guard valid, !mistyped else {
            problem = mistyped ? .mistyped : .malformed
            return nil
        }
        self.canonical = canonical
    }

    /// The check character of 32 base32 characters: with each character its value v (A = 0 … Z = 25,
    /// 2 = 26 … 7 = 31) in GF(32) = GF(2)[x]/(x⁵ + x² + 1), s = (…((v₁·x + v₂)·x + v₃)…)·x + v₃₂ (Horner's rule),
    /// and the check character is the one of value s·x. Then Horner's rule over all 33 characters gives 0.
    private static func checkCharacter(_ chars: some Sequence<UInt8>) -> UInt8 {
        var sum: UInt8 = 0
        for char in chars {
            let value = char >= UInt8(ascii: "A") ? char - UInt8(ascii: "A") : char - UInt8(ascii: "2") + 26
            sum = timesX(sum) ^ value
        }
        return alphabet[Int(timesX(sum))]
    }

    /// `value` · x in GF(32) with the reduction polynomial x⁵ + x² + 1 (0b100101).
    private static func timesX(_ value: UInt8) -> UInt8 {
        let shifted = value << 1
        return shifted & 0b10_0000 == 0 ? shifted : shifted ^ 0b10_0101
    }

    /// The token grouped for people, check character last: "ABCD-EFGH-…-WXYZ-K".
    public var display: String {
        var out: [UInt8] = []
        out.reserveCapacity(41)
        for (index, char) in canonical.utf8.enumerated() {
            if index > 0, index % 4 == 0 { out.append(UInt8(ascii: "-")) }
            out.append(char)
        }
        out.append(UInt8(ascii: "-"))
        out.append(VotingToken.checkCharacter(canonical.utf8))
        return String(decoding: out, as: UTF8.self)
    }

    /// The token as one word (32 characters and the check character), as a voting link carries it.
    public var compact: String { canonical + String(UnicodeScalar(VotingToken.checkCharacter(canonical.utf8))) }

    /// What the ledger records: SHA-256 of the canonical form.
    public var hash: Digest { SHA256.hash(canonical.utf8) }
}
