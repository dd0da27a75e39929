public import LedgerCrypto

// MARK: - The storage seam

/// What a writer needs from a store: where the chain ends, and a durable append. A store builds and signs
/// each block with a `BlockWriter` and returns only once the block is durable (on disk, or committed), so
/// a caller may report the events done. One writer at a time per ledger; how a store refuses a second one
/// is its own rule (the file store: an OS file lock).
public protocol BlockStore: AnyObject {
    /// The ledger's identity, from its genesis block.
    var genesis: Genesis { get }
    /// Header of the last block.
    var head: BlockHeader { get }
    /// Hash of the last block's header.
    var headHash: Digest { get }
    /// Appends one block holding `events` and returns its header once it is durable. The block time is
    /// `timestamp`, raised to the previous block's time if the clock went backwards.
    @discardableResult
    func append(_ events: [LedgerEvent], timestamp: Int64) throws(LedgerError) -> BlockHeader
    /// Gives up writing now, so that another writer may open.
    func close()
}

/// What readers need from a store: the chain's blocks, in order, and the tree's proofs. A source shows only
/// complete blocks (a consistent prefix of the chain, never a block being written), and takes no writer
/// lock. Proofs are for trees that end at a block, named by their size and signed head.
public protocol BlockSource {
    /// The ledger's identity, from the genesis block.
    var genesis: Genesis { get }
    /// The header of the last complete block.
    func lastBlock() throws -> BlockHeader
    /// Streams every complete block from height `first` on, in order.
    func forEachBlock(from first: UInt64, _ body: (EncodedBlock) throws -> Void) throws
    /// The header of block `height`, or `nil` if the source does not hold it.
    func header(at height: UInt64) throws -> BlockHeader?
    /// Every leaf hash of the first `treeSize` events, whose tree head is `root`.
    func leafHashes(treeSize: UInt64, root: Digest) throws -> [Digest]
    /// The inclusion proof (RFC 9162 PATH) of event `index` in the tree of the first `treeSize` events,
    /// whose head is `root`.
    func inclusionProof(index: UInt64, treeSize: UInt64, root: Digest) throws -> [Digest]
    /// The consistency proof (RFC 9162 PROOF) from the tree of the first `oldSize` events to that of the
    /// first `newSize`, whose head is `root`.
    func consistencyProof(oldSize: UInt64, newSize: UInt64, root: Digest) throws -> [Digest]
}
