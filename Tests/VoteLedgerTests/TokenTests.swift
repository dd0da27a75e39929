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
    ])
    func typedFormsReadAsTheToken(_ typed: String) throws {
        let token = try #require(VotingToken(typed: typed))
        #expect(token.display == "ABCD-EFGH-IJKL-MNOP-QRST-UVWX-YZ23-4567")
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
}
