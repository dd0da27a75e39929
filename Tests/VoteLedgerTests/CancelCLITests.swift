import Foundation
import Testing

/// `vote place cancel` (FORMAT.md §11.30): a place called off before its voting opens is an event of its own,
/// decided by the contract; afterwards every command on the place is refused, its status is cancelled and its
/// tally counts nothing; what the rules refuse writes nothing.
@Suite struct CancelCLITests {
    @Test func aPlaceCancelledBeforeItsVotingOpensRefusesEverythingAfter() throws {
        let election = try TestElection()
        let opens = try election.place()
        try election.ok(["candidate", "register", "--place", "1", "--name", "Ada Park"])
        let token = try election.authorize("member-1")

        let answer = try #require(
            try json(
                try election.ok(["place", "cancel", "--place", "1", "--reason", "  Merged with place 2  ", "--json"]))
                as? [String: Any])
        #expect(answer["status"] as? String == "cancelled" && answer["reason"] as? String == "Merged with place 2")
        #expect(answer["place"] as? Int == 1 && (answer["event_hash"] as? String)?.count == 64, "\(answer)")
        let shown = try election.ok(["place", "show", "1"])
        #expect(shown.contains("place 1: Board (cancelled)") && shown.contains("(Merged with place 2)"), "\(shown)")
        let listed = try election.ok(["place", "list", "--status", "cancelled"])
        #expect(listed.contains("Board"), "\(listed)")

        // Every command on the place is refused, and writes nothing.
        let before = try election.fingerprint()
        for command in [
            ["voter", "authorize", "--place", "1", "--voter", "member-2"],
            ["candidate", "register", "--place", "1", "--name", "Bo Lee"],
            ["place", "amend", "--place", "1", "--name", "Board 2"],
            ["voter", "withdraw", "--place", "1", "--identity", "member-1"],
        ] {
            let refused = try election.vote(command)
            #expect(refused.status == 1 && refused.err == "vote: place 1 is cancelled\n", "\(command): \(refused.err)")
        }
        let twice = try election.vote(["place", "cancel", "--place", "1"])
        #expect(twice.err == "vote: place 1 cannot be cancelled: it is already cancelled\n", "\(twice.err)")
        let unknown = try election.vote(["place", "cancel", "--place", "2"])
        #expect(unknown.status != 0 && unknown.err.contains("place 2 does not exist"), "\(unknown.err)")
        #expect(try election.fingerprint() == before)

        election.advance(to: opens.addingTimeInterval(60))
        let vote = try election.vote(["cast", "--place", "1", "--candidate", "1", "--token", token])
        #expect(vote.status == 1 && vote.err == "vote: place 1 is cancelled\n", "\(vote.err)")
        let tally = try #require(try json(try election.ok(["tally", "--place", "1", "--json"])) as? [String: Any])
        #expect(tally["status"] as? String == "cancelled")
        #expect((tally["turnout"] as? [String: Any])?["voted"] as? Int == 0, "\(tally)")
        #expect(try election.ok(["tally", "--place", "1"]).contains("cancelled: before its voting opened"))
        #expect(try election.ok(["log"]).contains("place 1 cancelled before its voting opened: Merged with place 2"))

        let verify = try #require(try json(try election.ok(["verify", "--json"])) as? [String: Any])
        #expect(verify["ok"] as? Bool == true)
        let python = try IndependentVerifierTests.python([election.ledger])
        #expect(python.status == 0, "\(python.text)")
    }

    @Test func aPlaceWhoseVotingHasOpenedIsNotCancelled() throws {
        let election = try TestElection()
        let opens = try election.place()
        election.advance(to: opens.addingTimeInterval(60))
        let before = try election.fingerprint()
        let late = try election.vote(["place", "cancel", "--place", "1", "--reason", "too late"])
        #expect(late.status == 1 && late.err == "vote: place 1 cannot be cancelled: its voting has opened\n")
        let long = try election.vote([
            "place", "cancel", "--place", "1", "--reason", String(repeating: "r", count: 501),
        ])
        #expect(long.status == 1, "\(long.err)")
        #expect(try election.fingerprint() == before)
    }
}
