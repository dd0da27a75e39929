import Election
public import Ledger

/// The election as of the ledger's last durable block, published by its writer after each block for any
/// number of readers (a server's routes) to take without a replay or a read of the store. A view is taken
/// whole: its state and its head always belong together. Its state is counts only (no voter roll), as a
/// replay's is. Its head is signed here, by whoever asks (the head route, the cosigning rounds), never by
/// the writer's thread: reading the head does not wait behind the votes queued for the writer.
public final class PublishedView: Sendable {
    private let latest: Locked<ElectionView>
    private let authority: any AuthoritySigner
    /// The latest head signed, so that readers asking for the same head share one signature.
    private let signed: Locked<(height: UInt64, note: SignedNote)?> = Locked(nil)

    /// Publishes `view` (the writer's state when it opens the ledger), whose heads `authority` signs.
    init(_ view: ElectionView, authority: any AuthoritySigner) {
        latest = Locked(ElectionView(genesis: view.genesis, state: view.state, head: view.head))
        self.authority = authority
    }

    /// The head of the view, signed with the authority key: a durable head, as every published one is.
    public func signedHead() throws -> SignedNote {
        let view = view
        if let note = signed.withLock({ $0?.height == view.head.height ? $0?.note : nil }) { return note }
        let note = try authority.signNote(
            SignedHead.checkpoint(view.head).text, name: SignedHead.origin(view.genesis.ledgerID))
        signed.withLock { if ($0?.height ?? 0) <= view.head.height { $0 = (view.head.height, note) } }
        return note
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
