import Foundation
import TestSupport
import Testing

/// `Tools/anonymity-sets` (issue 37: how far the public ledger's order narrows down who cast an anonymous ballot)
/// checked by `Tools/anonymity-sets-test` against a brute force written apart from it: random sequences, a
/// simulated day of 30 voters against a real `vote serve` (this build's), the worst case, where every ballot
/// follows its own issuance and must get a set of 1, and an embargoed copy whose ballots are all withheld. About
/// 35 seconds.
@Suite struct AnonymitySetsToolTests {
    @Test(.enabled(if: VoteCLI.serverBuilt, "vote-serve is not built (VOTE_WITHOUT_SERVER=1)"))
    func anonymitySetsAgreeWithBruteForce() throws {
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../../Tools/anonymity-sets-test").standardized.path
        let run = try runToCompletion(
            "/usr/bin/env", ["python3", script], environment: VoteCLI.environment(["VOTE_BIN": VoteCLI.path]))
        #expect(run.status == 0, "\(run.out)\(run.err)")
        #expect(run.err.hasSuffix("ok\n"))
    }
}
