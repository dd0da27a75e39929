public import LedgerCrypto

/// Builds and signs the blocks of one ledger, in order, for any store: the next header's height, time, tree
/// size, tree root and link to the previous block, and the authority's signature over it. It stores nothing;
/// a store writes the block durably and only then calls `advance(to:)`, so a failed write leaves the builder
/// where it was.
public struct BlockBuilder {
    /// The ledger's identity, from its genesis block.
    public let genesis: Genesis
    /// Header of the last stored block.
    public private(set) var head: BlockHeader
    /// Hash of the last stored block's header.
    public private(set) var headHash: Digest
    /// The tree frontier after the last stored block.
    public private(set) var frontier: MerkleFrontier
    private let key: any AuthoritySigner

    /// A block built by `next`, signed, not yet stored.
    public struct Next {
        /// The signed block.
        public let block: Block
        /// Its header hash.
        public let hash: Digest
        /// The leaf hash of each of its events, in order.
        public let leaves: [Digest]
        /// The tree frontier after it.
        public let frontier: MerkleFrontier
    }

    // MARK: Starting

    /// A builder for a ledger whose last stored block is `head`, with tree `frontier` after it; `key` must sign
    /// with the genesis authority key.
    public init(
        genesis: Genesis, head: BlockHeader, frontier: MerkleFrontier, key: any AuthoritySigner
    )
        throws(LedgerError)
    {
        guard key.publicKey.rawRepresentation == genesis.authorityKey else {
            throw LedgerError.key("the authority key is not the key this ledger was created with")
        }
        self.genesis = genesis
        self.head = head
        self.headHash = head.hash
        self.frontier = frontier
        self.key = key
    }

    /// The signed genesis block of a new ledger and a builder positioned after it.
    public static func start(
        _ genesis: Genesis, key: any AuthoritySigner
    ) throws(LedgerError)
        -> (genesis: Block, builder: BlockBuilder)
    {
        let event = genesis.event
        guard event.payload.count + 2 <= LedgerFormat.maxEventSize else {
            throw LedgerError.invalidRequest("ledger name too long")
        }
        var frontier = MerkleFrontier()
        frontier.append(event.leafHash)
        let header = BlockHeader(
            eventCount: 1, height: 0, timestamp: genesis.createdAt, treeSize: 1, ledgerID: genesis.ledgerID,
            previousHash: .zero, treeRoot: frontier.root)
        let builder = try BlockBuilder(genesis: genesis, head: header, frontier: frontier, key: key)
        return (Block(header: header, signature: try sign(header.hash, with: key), events: [event]), builder)
    }

    // MARK: Building blocks

    /// The next block, holding `events`, signed. Its time is `timestamp`, raised to the last block's time if
    /// the clock went backwards. `eachLeaf` sees every new leaf hash with the frontier just before it (a
    /// store's own indexes may need both). Refuses reserved event types, oversized events and blocks.
    public func next(
        _ events: [HashedEvent], timestamp: Int64,
        eachLeaf: (_ leaf: Digest, _ before: MerkleFrontier) -> Void = { _, _ in }
    ) throws(LedgerError) -> Next {
        guard !events.isEmpty else { throw LedgerError.invalidRequest("a block needs at least one event") }
        var size = LedgerFormat.headerSize + LedgerFormat.signatureSize
        var leaves: [Digest] = []
        leaves.reserveCapacity(events.count)
        var next = frontier
        for (event, leaf) in events.lazy.map({ ($0.event, $0.leaf) }) {
            guard event.type >= LedgerFormat.firstApplicationEventType else {
                throw LedgerError.invalidRequest(
                    "event type \(event.type) is reserved for the ledger (application types start at 256)")
            }
            guard event.payload.count + 2 <= LedgerFormat.maxEventSize else {
                throw LedgerError.invalidRequest(
                    "event of \(event.payload.count) bytes exceeds the \(LedgerFormat.maxEventSize)-byte limit")
            }
            size += 6 + event.payload.count
            leaves.append(leaf)
            eachLeaf(leaf, next)
            next.append(leaf)
        }
        guard size <= LedgerFormat.maxBlockSize else {
            throw LedgerError.invalidRequest(
                "block of \(size) bytes exceeds the \(LedgerFormat.maxBlockSize)-byte limit; split the batch")
        }
        let header = BlockHeader(
            eventCount: UInt32(events.count), height: head.height + 1, timestamp: max(timestamp, head.timestamp),
            treeSize: next.size, ledgerID: genesis.ledgerID, previousHash: headHash, treeRoot: next.root)
        let hash = header.hash
        let signature = try BlockBuilder.sign(hash, with: key)
        let block = Block(header: header, signature: signature, events: events.map(\.event))
        return Next(block: block, hash: hash, leaves: leaves, frontier: next)
    }

    /// Moves past `next`, which the store now holds durably.
    public mutating func advance(to next: Next) {
        head = next.block.header
        headHash = next.hash
        frontier = next.frontier
    }

    /// Moves past `block`, which another writer of a store several processes write appended after the head:
    /// it must extend the head (height, link, tree) under the authority's signature, else it is damage and the
    /// builder stays where it was. `place` names where the store keeps it.
    public mutating func advance(past block: EncodedBlock, at place: @autoclosure () -> BlockPlace) throws(LedgerError)
    {
        let header = block.header
        var frontier = self.frontier
        for event in block.events { frontier.append(event.leafHash) }
        let problem: String? =
            if header.ledgerID != genesis.ledgerID || header.height != head.height + 1 {
                "it is not the block after \(head.height) of this ledger"
            } else if header.previousHash != headHash {
                "it does not link to block \(head.height)"
            } else if header.treeSize != frontier.size || header.treeRoot != frontier.root {
                "its tree head does not match its events"
            } else if !key.publicKey.isValidSignature(block.signature, for: header.hash.bytes) {
                "its signature is not the authority's"
            } else {
                nil
            }
        if let problem { throw place().damage(height: header.height, "another writer's block: \(problem)") }
        head = header
        headHash = header.hash
        self.frontier = frontier
    }

    /// The authority key the blocks are signed with.
    public var authority: any AuthoritySigner { key }

    static func sign(_ hash: Digest, with key: any AuthoritySigner) throws(LedgerError) -> [UInt8] {
        do { return try key.sign(hash.bytes) } catch {
            throw LedgerError.key("signing the block failed: \(error)")
        }
    }
}
