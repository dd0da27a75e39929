import Election
import Ledger

/// The ledger vectors of token re-issue (FORMAT.md §11.17): ledgers a verifier must accept, and one per rule
/// it must refuse, appended after the other cases.
extension ElectionVectors {
    /// A voter-token-reissued event as recorded: voter `voter`'s token `old` (by default their own) replaced
    /// by token `new`.
    static func reissue(_ voter: Int, old: Int? = nil, new: Int, place: UInt32 = 1) -> LedgerEvent {
        ElectionEvent.voterTokenReissued(
            place: place, voterTag: tag(voter), oldTokenHash: token(old ?? voter), newTokenHash: token(new)
        ).ledgerEvent
    }

    static var reissueCases: [Case] {
        [
            rule(
                "reissue-then-vote", "valid",
                "nothing: voter 2's token re-issued at 16 s, then voter 2 votes with the new token",
                from: .authorized, setup: { $0.raw(16_000, [reissue(2, new: 12)]) }, at: 30_000
            ) { _ in [ElectionEvent.voteCast(place: 1, candidate: 2, tokenHash: token(12)).ledgerEvent] },
            rule(
                "reissue-twice-while-voting", "valid",
                "nothing: voter 2's token re-issued twice while voting is open (the second replaces the first)",
                from: .voted, at: 35_000
            ) { _ in [reissue(2, new: 12), reissue(2, old: 12, new: 13)] },
            rule(
                "reissue-after-vote", "reissue", "voter 1's token re-issued after voter 1 voted", from: .voted,
                at: 31_000
            ) { _ in [reissue(1, new: 11)] },
            rule(
                "reissue-unknown-voter", "reissue", "a re-issue for voter 9, who was never authorised",
                from: .authorized, at: 16_000
            ) { _ in [reissue(9, new: 19)] },
            rule(
                "vote-with-replaced-token", "reissue", "voter 2 votes with the token replaced by a re-issue at 16 s",
                from: .authorized, setup: { $0.raw(16_000, [reissue(2, new: 12)]) }, at: 30_000
            ) { _ in [vote(2, for: 1)] },
            rule(
                "reissue-other-voters-token", "reissue",
                "a re-issue for voter 1 naming voter 2's token as the one it replaces", from: .authorized, at: 16_000
            ) { _ in [reissue(1, old: 2, new: 11)] },
            rule(
                "reissue-replaced-token-again", "reissue",
                "voter 2's original token named again after a re-issue replaced it (the current one is token 12)",
                from: .authorized, setup: { $0.raw(16_000, [reissue(2, new: 12)]) }, at: 17_000
            ) { _ in [reissue(2, new: 13)] },
            rule(
                "reissue-to-issued-token", "reissue", "voter 2's token re-issued as voter 3's token",
                from: .authorized, at: 16_000
            ) { _ in [reissue(2, new: 3)] },
            rule(
                "authorize-replaced-token", "reissue", "voter 4 authorised with the token a re-issue replaced",
                from: .authorized, setup: { $0.raw(16_000, [reissue(2, new: 12)]) }, at: 17_000
            ) { _ in [authorize(4, token: 2)] },
            rule(
                "reissue-at-voting-end", "reissue", "a re-issue at 40 s, when voting ends", from: .authorized,
                at: 40_000
            ) { _ in [reissue(2, new: 12)] },
            rule(
                "reissue-unknown-place", "reissue", "a re-issue in place 2, which does not exist", from: .authorized,
                at: 16_000
            ) { _ in [reissue(2, new: 12, place: 2)] },
            rule(
                "reissue-truncated-payload", "encoding", "a voter-token-reissued payload missing its last byte",
                from: .authorized, at: 16_000
            ) { _ in [LedgerEvent(type: 0x0108, payload: Array(reissue(2, new: 12).payload.dropLast()))] },
        ]
    }
}
