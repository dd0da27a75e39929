import Foundation
import Testing

/// `vote place amend` (FORMAT.md §11.28): a correction is an event of its own, decided by the contract, shown in the
/// place and its results; what the rules refuse writes nothing.
@Suite struct AmendCLITests {
    @Test func aPlaceIsCorrectedAndItsVotingExtendedByADay() throws {
        let election = try TestElection()
        let opens = try election.place(name: "Bord", registration: 3600, voting: 3600)
        let token = try election.authorize("member-1")
        try election.ok(["candidate", "register", "--place", "1", "--name", "Ada Park"])

        // Before voting opens: the name corrected, the window moved later (it may also shrink then).
        let renamed = try election.ok(["place", "amend", "--place", "1", "--name", "  Board  ", "--json"])
        let answer = try #require(try JSONSerialization.jsonObject(with: Data(renamed.utf8)) as? [String: Any])
        #expect(answer["name"] as? String == "Board", "\(renamed)")
        #expect(try election.ok(["place", "show", "1"]).contains("amended       1 time after its creation"))

        // Voting open: the end moves a day later; shortening it or moving its start is refused and writes nothing.
        election.advance(to: opens.addingTimeInterval(60))
        let before = try election.fingerprint()
        let shorter = try election.vote(["place", "amend", "--place", "1", "--voting-end", "+5m"])
        #expect(
            shorter.status == 1
                && shorter.err
                    == "vote: place 1 cannot be amended: voting has started, so it may be extended but not shortened\n",
            "\(shorter.err)")
        let moved = try election.vote(["place", "amend", "--place", "1", "--voting", "+1m/+2d"])
        #expect(moved.status == 1 && moved.err.contains("voting has started, so its start stays"), "\(moved.err)")
        let nothing = try election.vote(["place", "amend", "--place", "1", "--name", "Board"])
        #expect(nothing.status == 1 && nothing.err.contains("the amendment changes nothing"), "\(nothing.err)")
        #expect(try election.fingerprint() == before)
        let extended = try election.ok(["place", "amend", "--place", "1", "--voting-end", "+1d"])
        #expect(extended.hasPrefix("amended place 1: Board\n"), "\(extended)")

        // Past the first planned end, a vote still counts: the rules read the amended window.
        election.advance(to: opens.addingTimeInterval(2 * 3600))
        try election.ok(["cast", "--place", "1", "--candidate", "1", "--token", token])
        let tally = try election.ok(["tally", "--place", "1"])
        #expect(tally.contains("amended: 2 times after its creation"), "\(tally)")
        let json = try election.ok(["tally", "--place", "1", "--json"])
        let counted = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(counted["amendments"] as? Int == 2)
        try election.ok(["verify"])

        // Once voting has ended, nothing more is amended.
        election.advance(to: opens.addingTimeInterval(2 * 86_400))
        let late = try election.vote(["place", "amend", "--place", "1", "--description", "late"])
        #expect(late.status == 1 && late.err.contains("its voting has ended"), "\(late.err)")
        let usage = try election.vote(["place", "amend", "--place", "1"])
        #expect(usage.status == 2 && usage.err.contains("give what changes"), "\(usage.err)")
    }
}
