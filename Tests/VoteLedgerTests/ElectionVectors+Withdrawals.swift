import Election
import Ledger

/// The vectors of withdrawing a voter (FORMAT.md §11.29): an election a verifier must accept, where the electorate
/// a certification records shrinks by the withdrawn voter, and one case per rule a withdrawal can break, with the
/// withdrawn voter's later vote.
extension ElectionVectors {
    /// A voter-withdrawn event as recorded: voter `voter` withdrawn from `place` with token `token` (by default
    /// their own) and `weight`.
    static func withdrawn(_ voter: Int, token: Int? = nil, weight: UInt64 = 1, place: UInt32 = 1) -> LedgerEvent {
        ElectionEvent.voterWithdrawn(
            place: place, voterTag: tag(voter), tokenHash: self.token(token ?? voter), weight: weight
        ).ledgerEvent
    }

    /// The base election with voter 3 withdrawn at 25 s, before voting opens.
    static func withdrawThree(_ script: inout Script) throws {
        try script.decide(25_000, [.withdrawVoter(place: 1, voterTag: tag(3), tokenHash: token(3))])
    }

    static var withdrawalCases: [Case] {
        [
            rule(
                "voter-withdrawn", "valid",
                "nothing: voter 3 withdrawn at 25 s, voters 1 and 2 vote at 30 s, and the results certified at 40 s "
                    + "count 2 authorised voters, not 3",
                from: .authorized,
                setup: {
                    try withdrawThree(&$0)
                    try $0.decide(
                        30_000,
                        [
                            .castVote(place: 1, candidate: 1, tokenHash: token(1)),
                            .castVote(place: 1, candidate: 2, tokenHash: token(2)),
                        ])
                }, at: 40_000
            ) { index in
                [
                    ElectionEvent.resultsCertified(
                        CertifiedResults(place: 1, treeSize: index, authorized: 2, voted: 2, votes: [(1, 1), (2, 1)])
                    ).ledgerEvent
                ]
            },
            rule(
                "withdrawn-voter-votes", "voter-withdrawal", "voter 3, withdrawn at 25 s, votes at 31 s",
                from: .authorized, setup: withdrawThree, at: 31_000
            ) { _ in [vote(3, for: 1)] },
            rule(
                "withdraw-voter-who-voted", "voter-withdrawal", "voter 1 withdrawn at 35 s, after voting at 30 s",
                from: .voted, at: 35_000
            ) { _ in [withdrawn(1)] },
            rule(
                "withdraw-voter-unknown-place", "voter-withdrawal",
                "voter 2 withdrawn from place 2, which does not exist",
                from: .authorized, at: 25_000
            ) { _ in [withdrawn(2, place: 2)] },
            rule(
                "withdraw-voter-never-authorised", "voter-withdrawal", "voter 9, never authorised, withdrawn",
                from: .authorized, at: 25_000
            ) { _ in [withdrawn(9)] },
            rule(
                "withdraw-voter-after-voting-ended", "voter-withdrawal", "voter 2 withdrawn at 40 s, when voting ends",
                from: .authorized, at: 40_000
            ) { _ in [withdrawn(2)] },
            rule(
                "withdraw-voter-twice", "voter-withdrawal", "voter 3 withdrawn again at 26 s, withdrawn at 25 s",
                from: .authorized, setup: withdrawThree, at: 26_000
            ) { _ in [withdrawn(3)] },
            rule(
                "withdraw-voter-other-voters-token", "voter-withdrawal",
                "voter 2 withdrawn naming voter 3's token as theirs", from: .authorized, at: 25_000
            ) { _ in [withdrawn(2, token: 3)] },
            rule(
                "withdraw-voter-wrong-weight", "voter-withdrawal",
                "voter 2, authorised with weight 1, withdrawn with weight 2 (the weight is derived)",
                from: .authorized, at: 25_000
            ) { _ in [withdrawn(2, weight: 2)] },
            rule(
                "reauthorize-withdrawn-voter", "voter-withdrawal",
                "voter 3, withdrawn at 25 s, authorised again at 26 s with a new token", from: .authorized,
                setup: withdrawThree, at: 26_000
            ) { _ in [authorize(3, token: 13)] },
        ]
    }
}
