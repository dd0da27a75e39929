import Foundation
import Testing
import VoteLedger

/// The check character of a token on the CLI: `vote cast`, `status` and `receipt` say in one line that a token
/// was mistyped, not that it is unknown, and write nothing; a token of 32 characters (issued before the check
/// character) still votes.
@Suite struct TokenCheckCLITests {
    @Test func mistypedTokenIsToldApartOnTheCommandLine() throws {
        let election = try TestElection()
        let opens = try election.place()
        try election.ok(["candidate", "register", "--place", "1", "--name", "Alice"])
        let issued = try election.authorize("member-1")
        let old = try election.authorize("member-2")
        election.advance(to: opens)
        var typo = Array(try #require(VotingToken(typed: issued)).compact)
        typo.swapAt(5, 6)
        if typo[5] == typo[6] { typo[5] = typo[5] == "A" ? "B" : "A" }
        let unknown = try VotingToken.generate().display
        [String(typo), unknown].forEach(SecretsLog.record)

        let before = try election.fingerprint()
        for command in [["cast", "--candidate", "1"], ["status"], ["receipt"]] {
            let mistyped = try election.vote(command + ["--place", "1", "--token", String(typo)])
            #expect(
                mistyped.status == 1 && mistyped.out.isEmpty
                    && mistyped.err
                        == "vote: the token is mistyped: its check character does not match (compare it with the letter)\n",
                "\(command): \(mistyped.err)")
            let notKnown = try election.vote(command + ["--place", "1", "--token", unknown])
            #expect(notKnown.status == 1 && !notKnown.err.contains("mistyped"), "\(command): \(notKnown.err)")
        }
        #expect(try election.fingerprint() == before)

        // The token as printed votes; so does one typed without its check character (the form before it).
        try election.ok(["cast", "--place", "1", "--candidate", "1", "--token", issued])
        let withoutCheck = String(try #require(VotingToken(typed: old)).compact.prefix(32))
        try election.ok(["cast", "--place", "1", "--candidate", "1", "--token", withoutCheck])
        #expect(try election.ok(["status", "--place", "1", "--token", withoutCheck]) == "voted\n")
    }
}
