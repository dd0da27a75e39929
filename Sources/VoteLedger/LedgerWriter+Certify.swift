import Ballots
public import Election

extension LedgerWriter {
    /// Certifies the results of `place` once its voting has closed: a place with candidates by its counts (the
    /// contract derives them, FORMAT.md §11.12), a place that asks questions by its ballots recounted from the
    /// ledger (§11.26), which the contract cannot do (it keeps no answers) and `vote verify` does again. The
    /// recount runs on the writer between blocks, at a time past the close: every ballot decided before it is
    /// durable and counted, and none can be decided after it. The ledger puts the certified tree size in.
    public nonisolated func certifyResults(place: UInt32) async throws -> EventReceipt {
        let clock = clock
        let command: Command = try await onLedger { ledger in
            let plain = Command.certifyResults(place: place, treeSize: 0)
            // Before the close, or for a place with candidates, the contract decides (and refuses early ones).
            guard let state = ledger.state.place(place), state.place.ballot != nil,
                clock() >= state.place.voting.end
            else { return plain }
            let source = try ledger.source()
            guard let counts = try ElectionView.ballotCount(of: state, in: source, upTo: try source.lastBlock())
            else { return plain }
            return .certifyBallotResults(
                place: place, treeSize: 0, votedWeight: counts.first?.ballots.weight ?? 0,
                questions: counts.map(QuestionResult.init))
        }
        return try await submit(command)
    }
}
