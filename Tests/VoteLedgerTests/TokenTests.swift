import LedgerCrypto
import Testing
import VoteLedger

/// How a typed token is read: the printed form, any ASCII case, dashes and spaces anywhere; nothing else.
@Suite struct TokenTests {
    static let canonical = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"

    @Test(arguments: [
        "ABCD-EFGH-IJKL-MNOP-QRST-UVWX-YZ23-4567",
        "abcd efgh ijkl mnop qrst uvwx yz23 4567",
        "  abcdEFGHijklMNOPqrstUVWXyz234567 ",
        "A-B-C-D-EFGHIJKLMNOPQRSTUVWXYZ234567",
        // With its check character (README, "Voting tokens"), as printed since it was added.
        "ABCD-EFGH-IJKL-MNOP-QRST-UVWX-YZ23-4567-B", "abcdefghijklmnopqrstuvwxyz234567b",
    ])
    func typedFormsReadAsTheToken(_ typed: String) throws {
        let token = try #require(VotingToken(typed: typed))
        #expect(token.display == "ABCD-EFGH-IJKL-MNOP-QRST-UVWX-YZ23-4567-B")
        #expect(token.compact == Self.canonical + "B")
        #expect(token.hash == SHA256.hash(Array(Self.canonical.utf8)))
        #expect(Self.fromBytes(typed)?.hash == token.hash)
    }

    @Test(arguments: [
        "", "ABCDEFGHIJKLMNOPQRSTUVWXYZ23456", "ABCDEFGHIJKLMNOPQRSTUVWXYZ2345678",
        // Not in base32 (0, 1, 8, 9), another separator, a letter Unicode upper-cases to ASCII ("ı" to "I",
        // "ſ" to "S"), one it upper-cases to two ("ß" to "SS"), a full-width letter.
        "ABCDEFGHIJKLMNOPQRSTUVWXYZ234560", "ABCDEFGHIJKLMNOPQRSTUVWXYZ234561", "ABCDEFGHIJKLMNOPQRSTUVWXYZ234568",
        "ABCD_EFGHIJKLMNOPQRSTUVWXYZ234567", "ABCDEFGHıJKLMNOPQRSTUVWXYZ234567", "ABCDEFGHIJKLMNOPQRſTUVWXYZ234567",
        "ABCDEFGHIJKLMNOPQRßTUVWXYZ23456", "ＡBCDEFGHIJKLMNOPQRSTUVWXYZ234567",
    ])
    func anythingElseIsNotAToken(_ typed: String) {
        #expect(VotingToken(typed: typed) == nil)
        #expect(Self.fromBytes(typed) == nil)
    }

    /// The token as read from the bytes of a line (a bulk cast's).
    static func fromBytes(_ typed: String) -> VotingToken? {
        Array(typed.utf8).withUnsafeBufferPointer { VotingToken(typed: $0) }
    }

    /// A token inside a longer line (a bulk cast's "token,candidate") reads the same.
    @Test func aSubstringReadsTheSame() throws {
        let line = "abcd-efgh-ijkl-mnop-qrst-uvwx-yz23-4567,3"
        let token = try #require(VotingToken(typed: line.prefix { $0 != "," }))
        #expect(token.hash == VotingToken(typed: Self.canonical)?.hash)
    }

    /// Every single substitution and every swap of two neighbours in a printed token is told as a typo (not as
    /// another token and not as a malformed text), for tokens whose characters cover the whole alphabet.
    @Test func everySubstitutionAndAdjacentSwapIsMistyped() throws {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        var tokens = try VotingToken.generate(count: 20)
        tokens.append(try #require(VotingToken(typed: Self.canonical)))
        for token in tokens {
            let chars = Array(token.compact)
            #expect(chars.count == 33 && VotingToken.parse(String(chars)).map(\.hash) == .success(token.hash))
            for position in chars.indices {
                for other in alphabet where other != chars[position] {
                    var typo = chars
                    typo[position] = other
                    #expect(VotingToken.parse(String(typo)).map(\.hash) == .failure(.mistyped))
                }
                if position + 1 < chars.count, chars[position] != chars[position + 1] {
                    var typo = chars
                    typo.swapAt(position, position + 1)
                    #expect(VotingToken.parse(String(typo)).map(\.hash) == .failure(.mistyped))
                }
            }
        }
    }

    /// A text that cannot be a token is malformed, not mistyped; an old token of 32 characters is read unchecked.
    @Test func malformedIsNotMistyped() {
        #expect(VotingToken.parse("ABCD").map(\.hash) == .failure(.malformed))
        #expect(VotingToken.parse(Self.canonical + "B2").map(\.hash) == .failure(.malformed))
        #expect(VotingToken.parse(Self.canonical).map(\.hash) == .success(SHA256.hash(Array(Self.canonical.utf8))))
        #expect(VotingToken(typed: Self.canonical + "C") == nil)
    }
}
