import Foundation
import Testing

/// `vote voter withdraw` (FORMAT.md §11.29): a correction to the roll is an event of its own, decided by the
/// contract; the withdrawn voter's token stops voting, the turnout no longer counts the voter, and what the rules
/// refuse writes nothing.
@Suite struct WithdrawCLITests {
    @Test func aVoterWhoHasNotVotedIsWithdrawnAndTheirTokenNoLongerVotes() throws {
        let election = try TestElection()
        let opens = try election.place()
        try election.ok(["candidate", "register", "--place", "1", "--name", "Ada Park"])
        let first = try election.authorize("member-1")
        _ = try election.authorize("member-2")
        let third = try election.authorize("member-3")

        // Before voting opens: member-3 is withdrawn; the place then has two authorised voters.
        let answer = try #require(
            try json(try election.ok(["voter", "withdraw", "--place", "1", "--identity", "MEMBER-3", "--json"]))
                as? [String: Any])
        #expect(answer["place"] as? Int == 1 && answer["weight"] as? Int == 1 && answer["authorized"] as? Int == 2)
        #expect((answer["event_hash"] as? String)?.count == 64, "\(answer)")
        #expect(try election.ok(["place", "show", "1"]).contains("withdrawn     1 voter no longer authorised"))

        // Refusals: twice, never authorised, a bad identity; each writes nothing.
        let before = try election.fingerprint()
        let twice = try election.vote(["voter", "withdraw", "--place", "1", "--identity", "member-3"])
        #expect(
            twice.status == 1
                && twice.err == "vote: the voter cannot be withdrawn from place 1: the voter is already withdrawn\n",
            "\(twice.err)")
        let unknown = try election.vote(["voter", "withdraw", "--place", "1", "--identity", "member-9"])
        #expect(unknown.status == 1 && unknown.err.contains("the voter is not authorised there"), "\(unknown.err)")
        let nowhere = try election.vote(["voter", "withdraw", "--place", "2", "--identity", "member-1"])
        #expect(nowhere.status != 0 && nowhere.err.contains("place 2 does not exist"), "\(nowhere.err)")
        let malformed = try election.vote(["voter", "withdraw", "--place", "1", "--identity", "no@such@id"])
        #expect(malformed.status == 1 && malformed.err.hasPrefix("vote: voter identity must be"))
        #expect(try election.fingerprint() == before)

        // Voting open: the withdrawn token is refused like an unauthorised one; a voter who voted stays.
        election.advance(to: opens.addingTimeInterval(60))
        let refused = try election.vote(["cast", "--place", "1", "--candidate", "1", "--token", third])
        #expect(refused.status == 1 && refused.err == "vote: this token is not authorised to vote in place 1\n")
        #expect(try election.vote(["status", "--place", "1", "--token", third]).status == 1)
        try election.ok(["cast", "--place", "1", "--candidate", "1", "--token", first])
        let voted = try election.vote(["voter", "withdraw", "--place", "1", "--identity", "member-1"])
        #expect(voted.status == 1 && voted.err.contains("the voter has voted"), "\(voted.err)")

        let tally = try #require(try json(try election.ok(["tally", "--place", "1", "--json"])) as? [String: Any])
        let turnout = try #require(tally["turnout"] as? [String: Any])
        #expect(tally["withdrawn"] as? Int == 1 && turnout["authorized"] as? Int == 2 && turnout["voted"] as? Int == 1)
        #expect(try election.ok(["tally", "--place", "1"]).contains("withdrawn: 1 voter no longer authorised"))
        #expect(try election.ok(["log"]).contains("voter withdrawn in place 1"))

        // Once voting has ended, nobody is withdrawn.
        election.advance(to: opens.addingTimeInterval(2 * 3600))
        let late = try election.vote(["voter", "withdraw", "--place", "1", "--identity", "member-2"])
        #expect(late.status == 1 && late.err.contains("its voting has ended"), "\(late.err)")

        let verify = try #require(try json(try election.ok(["verify", "--json"])) as? [String: Any])
        #expect(verify["ok"] as? Bool == true)
        let python = try IndependentVerifierTests.python([election.ledger])
        #expect(python.status == 0, "\(python.text)")
    }
}
