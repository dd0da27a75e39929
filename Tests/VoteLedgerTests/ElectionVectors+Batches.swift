import Election
import Ledger

/// The vectors of anonymous places that write their ballots in batches (FORMAT.md §11.1 flag bit 4, §11.31): an
/// election a verifier must accept, a batch's ballots consecutive in one block, and one case per rule the flag
/// adds (11.7.14-11.7.17) and its truncated fields.
extension ElectionVectors {
    /// A place with anonymous ballots under the test key, id `id`, registration 10-20 s and voting 30-40 s, and
    /// `batching` (flag bit 4).
    static func batchedPlace(
        _ id: UInt32 = 3, anonymous: Bool = true, batching: BallotBatching = BallotBatching(interval: 5_000, size: 2)
    ) -> Place {
        Place(
            id: id, name: "Batched", description: "", registration: window(10_000, 20_000),
            voting: window(30_000, 40_000), maxCandidates: nil, ballotKey: anonymous ? ballotKeyDER : nil,
            batching: batching)
    }

    /// A case: the anonymous base (no vote cast), then one block at 26 s of `events` (a place that breaks a rule).
    static func batches(
        _ name: String, group: String = "batches", _ breaks: String, _ events: @escaping () -> [LedgerEvent]
    ) -> Case {
        Case(name: name, group: group, breaks: breaks) { path in
            var script = try anonymousBase(voted: false)
            script.raw(26_000, events())
            try write(script, to: path)
            return UInt64(script.blocks.count)
        }
    }

    static var batchCases: [Case] {
        let truncated = ElectionEvent.placeCreated(batchedPlace()).ledgerEvent
        return [
            Case(
                name: "batches-election", group: "valid",
                breaks:
                    "nothing: place 3 (created at 25.5 s, registration 26-28 s, voting 30-40 s) writes its anonymous ballots in batches (every 5 s of voting, at least 2); candidates Alice and Bob at 26 s, credentials 21-23 issued at 27 s vote at 35 s, one batch of three consecutive ballots in one block"
            ) { path in
                var script = try anonymousBase(voted: false)
                try script.decide(
                    25_500,
                    [
                        .createPlace(
                            name: "Batched", description: "", registration: window(26_000, 28_000),
                            voting: window(30_000, 40_000), maxCandidates: nil, ballotKey: ballotKeyDER,
                            batching: BallotBatching(interval: 5_000, size: 2))
                    ])
                try script.decide(
                    26_000, ["Alice", "Bob"].map { Command.registerCandidate(place: 3, name: $0, pledge: "") })
                try script.decide(
                    26_500, (21...23).map { .authorizeVoter(place: 3, voterTag: tag($0), tokenHash: token($0)) })
                try script.decide(
                    27_000,
                    (21...23).map {
                        .issueCredential(place: 3, tokenHash: token($0), blindedMessageHash: blindedMessageHash($0))
                    })
                try script.decide(
                    35_000,
                    [(22, 1), (23, 2), (21, 1)].map { voter, candidate in
                        .castAnonymousVote(
                            place: 3, candidate: UInt32(candidate), credential: credential(voter),
                            signature: signature(credential(voter)))
                    })
                try write(script, to: path)
                return UInt64(script.blocks.count)
            },
            batches("batches-without-anonymous-ballots", "a place with ballot batches (flag bit 4) but not bit 1") {
                [ElectionEvent.placeCreated(batchedPlace(anonymous: false)).ledgerEvent]
            },
            batches("batches-without-rule", "an anonymous place with ballot batches of interval 0 and size 0") {
                [ElectionEvent.placeCreated(batchedPlace(batching: BallotBatching())).ledgerEvent]
            },
            batches("batches-interval-not-whole-seconds", "an anonymous place with ballot batches every 1.5 s") {
                [ElectionEvent.placeCreated(batchedPlace(batching: BallotBatching(interval: 1_500))).ledgerEvent]
            },
            batches("batches-interval-too-long", "an anonymous place with ballot batches every 7 days and 1 s") {
                [
                    ElectionEvent.placeCreated(batchedPlace(batching: BallotBatching(interval: 604_801_000)))
                        .ledgerEvent
                ]
            },
            batches("batches-interval-negative", "an anonymous place with ballot batches every -1 s") {
                [ElectionEvent.placeCreated(batchedPlace(batching: BallotBatching(interval: -1_000))).ledgerEvent]
            },
            batches("batches-size-one", "an anonymous place with ballot batches of at least 1 ballot") {
                [ElectionEvent.placeCreated(batchedPlace(batching: BallotBatching(size: 1))).ledgerEvent]
            },
            batches(
                "batches-size-too-large", "an anonymous place with ballot batches of at least 1000001 ballots"
            ) {
                [ElectionEvent.placeCreated(batchedPlace(batching: BallotBatching(size: 1_000_001))).ledgerEvent]
            },
            batches(
                "place-batches-truncated", group: "encoding",
                "an anonymous place with flag bit 4 whose batchSize is cut short (2 of its 4 bytes)"
            ) { [LedgerEvent(type: truncated.type, payload: Array(truncated.payload.dropLast(2)))] },
        ]
    }
}
