import Ballots
import Election

extension LedgerWriter {
    /// Certifies the results of `place` once its voting has closed: a place with candidates by its counts (the
    /// contract derives them, FORMAT.md §11.12), a place that asks questions by its ballots recounted from the
    /// ledger (§11.26), which the contract cannot do (it keeps no answers) and `vote verify` does again. The
    /// recount runs on the writer between blocks, at a time past the close: every ballot decided before it is
    /// durable and counted, and none can be decided after it. The ledger puts the certified tree size in.
    public nonisolated func certifyResults(place: UInt32) async throws -> EventReceipt {
        let clock = clock
        let command: Command = try await onLedger { ledger in
            // A place with candidates: the contract counts. A place that asks questions before its close: the
            // contract refuses (rule 11.26.3) before it reads the (empty) counts.
            guard let state = ledger.state.place(place), state.place.ballot != nil else {
                return .certifyResults(place: place, treeSize: 0)
            }
            let early = Command.certifyBallotResults(place: place, treeSize: 0, votedWeight: 0, questions: [])
            guard clock() >= state.place.voting.end else { return early }
            let source = try ledger.source()
            guard let counts = try ElectionView.ballotCount(of: state, in: source, upTo: try source.lastBlock())
            else { return early }
            return .certifyBallotResults(
                place: place, treeSize: 0, votedWeight: counts.first?.ballots.weight ?? 0,
                questions: counts.map(QuestionResult.init))
        }
        return try await submit(command)
    }
}
