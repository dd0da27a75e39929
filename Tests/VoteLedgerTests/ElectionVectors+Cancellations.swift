import Election
import Ledger

/// The vectors of cancelling a place (FORMAT.md §11.30): a cancelled election a verifier must accept, one case per
/// rule a cancellation can break, and the commands a cancelled place refuses.
extension ElectionVectors {
    /// A place-cancelled event as recorded: `place` cancelled with `reason`.
    static func cancelled(_ reason: String = "Merged with the spring election", place: UInt32 = 1) -> LedgerEvent {
        ElectionEvent.placeCancelled(place: place, reason: reason).ledgerEvent
    }

    /// The base election with place 1 cancelled at 25 s, before its voting opens.
    static func cancelOne(_ script: inout Script) throws {
        try script.decide(25_000, [.cancelPlace(place: 1, reason: " Merged with the spring election ")])
    }

    static var cancellationCases: [Case] {
        [
            rule(
                "place-cancelled", "valid", "nothing: place 1 cancelled at 25 s, before its voting opens at 30 s",
                from: .authorized, at: 25_000
            ) { _ in [cancelled()] },
            rule(
                "cancel-after-voting-opened", "cancellation", "place 1 cancelled at 30 s, when its voting opens",
                from: .authorized, at: 30_000
            ) { _ in [cancelled()] },
            rule(
                "cancel-unknown-place", "cancellation", "place 2, which does not exist, cancelled", from: .authorized,
                at: 25_000
            ) { _ in [cancelled(place: 2)] },
            rule(
                "cancel-twice", "cancellation", "place 1 cancelled again at 26 s, cancelled at 25 s", from: .authorized,
                setup: cancelOne, at: 26_000
            ) { _ in [cancelled()] },
            rule(
                "cancel-reason-untrimmed", "cancellation",
                "place 1 cancelled with the reason \" Merged \" (reasons are stored trimmed)", from: .authorized,
                at: 25_000
            ) { _ in [cancelled(" Merged ")] },
            rule(
                "cancel-reason-too-long", "cancellation", "place 1 cancelled with a reason of 501 bytes (at most 500)",
                from: .authorized, at: 25_000
            ) { _ in [cancelled(String(repeating: "r", count: 501))] },
            rule(
                "vote-in-cancelled-place", "cancellation", "voter 1 votes at 31 s in place 1, cancelled at 25 s",
                from: .authorized, setup: cancelOne, at: 31_000
            ) { _ in [vote(1, for: 1)] },
            rule(
                "authorize-in-cancelled-place", "cancellation",
                "voter 4 authorised at 26 s in place 1, cancelled at 25 s",
                from: .authorized, setup: cancelOne, at: 26_000
            ) { _ in [authorize(4)] },
            rule(
                "certify-cancelled-place", "cancellation", "place 1's results certified at 40 s, cancelled at 25 s",
                from: .authorized, setup: cancelOne, at: 40_000
            ) { index in
                [
                    ElectionEvent.resultsCertified(
                        CertifiedResults(place: 1, treeSize: index, authorized: 3, voted: 0, votes: [(1, 0), (2, 0)])
                    ).ledgerEvent
                ]
            },
        ]
    }
}
