import Election
public import Ledger

/// The election as of the ledger's last durable block, published by its writer after each block for any
/// number of readers (a server's routes) to take without a replay or a read of the store. A view is taken
/// whole: its state and its head always belong together. Its state is counts only (no voter roll), as a
/// replay's is.
public final class PublishedView: Sendable {
    private let latest: Locked<ElectionView>

    /// Publishes `view` (the writer's state when it opens the ledger).
    init(_ view: ElectionView) {
        latest = Locked(ElectionView(genesis: view.genesis, state: view.state, head: view.head))
    }

    /// The view at the last durable block.
    public var view: ElectionView { latest.withLock { $0 } }

    /// The head the view is at.
    public var head: BlockHeader { view.head }

    /// Publishes `state` as of the durable block `head`, the next after the published one.
    func advance(to head: BlockHeader, state: ElectionState) {
        latest.withLock { $0 = ElectionView(genesis: $0.genesis, state: state, head: head) }
    }
}

extension ElectionView {
    /// A published view: `state` counts only, from no snapshot.
    fileprivate init(genesis: Genesis, state: ElectionState, head: BlockHeader) {
        var counts = state
        counts.roll = nil
        self.init(genesis: genesis, state: counts, head: head, snapshotHeight: 0)
    }
}
