import Foundation
import TestSupport
import Testing

/// `Tools/anonymity-sets` (issue 37: how far the public ledger's order narrows down who cast an anonymous ballot)
/// checked by `Tools/anonymity-sets-test` against a brute force written apart from it: random sequences, a
/// simulated day of 30 voters against a real `vote serve` (this build's), the worst case, where every ballot
/// follows its own issuance and must get a set of 1, an embargoed copy whose ballots are all withheld, and a day
/// whose place writes its ballots in batches. About 50 seconds.
@Suite struct AnonymitySetsToolTests {
    static let tools = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../Tools").standardized.path

    @Test(.enabled(if: VoteCLI.serverBuilt, "vote-serve is not built (VOTE_WITHOUT_SERVER=1)"))
    func anonymitySetsAgreeWithBruteForce() throws {
        let run = try runToCompletion(
            "/usr/bin/env", ["python3", Self.tools + "/anonymity-sets-test"],
            environment: VoteCLI.environment(["VOTE_BIN": VoteCLI.path]))
        #expect(run.status == 0, "\(run.out)\(run.err)")
        #expect(run.err.hasSuffix("ok\n"))
    }

    /// The promise of a size rule (FORMAT.md §11.31): a short polling day (`Tools/anonymity-day`, 24 voters over 20
    /// s against a real `vote serve`) in a place that writes its ballots in batches of at least 4 gives every
    /// ballot an anonymity set of at least 4, except the ballots of the place's last block of ballots: the batch
    /// the server writes as voting closes, with whatever is held (the day ends voting just after its last ballot).
    /// The sets are the tool's (checked against a brute force by the test above); the batches are taken here from
    /// the ballots' blocks alone. About 40 seconds.
    @Test(.enabled(if: VoteCLI.serverBuilt, "vote-serve is not built (VOTE_WITHOUT_SERVER=1)"))
    func batchesOfASizeGiveEveryBallotASetOfThatSize() throws {
        let size = 4
        let run = try runToCompletion(
            "/usr/bin/env",
            [
                "python3", Self.tools + "/anonymity-day", "--json", "--voters", "24", "--seed", "4", "--day-seconds",
                "20", "--batch-size", "\(size)",
            ],
            environment: VoteCLI.environment(["VOTE_BIN": VoteCLI.path]))
        try #require(run.status == 0, "\(run.out)\(run.err)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(run.out.utf8)) as? [String: Any])
        let place = try #require((report["places"] as? [[String: Any]])?.first)
        let ballots = try #require(place["per_ballot"] as? [[String: Any]])
        #expect(ballots.count == 24)
        let heights = ballots.compactMap { $0["height"] as? Int }
        let sets = ballots.compactMap { $0["set"] as? Int }
        try #require(heights.count == ballots.count && sets.count == ballots.count)
        let closing = heights.max() ?? 0
        let blocks = Set(heights)
        #expect(blocks.count >= 3, "the day wrote \(blocks.count) blocks of ballots: it tests little")
        for (height, ballotSet) in zip(heights, sets) where height != closing {
            #expect(
                ballotSet >= size, "a ballot at height \(height), outside the closing batch, has a set of \(ballotSet)")
        }
        // Outside the closing batch, every block of ballots holds at least the rule's size.
        for block in blocks where block != closing {
            #expect(heights.filter { $0 == block }.count >= size, "block \(block) holds a batch below \(size)")
        }
        #expect(place["below_batch"] as? Int == 0)
        #expect(place["below_size"] as? Int == 0)
    }
}
