public import LedgerCrypto

// MARK: - The storage seam

/// What a writer needs from a store: where the chain ends, and a durable append. A store builds and signs
/// each block with a `BlockBuilder` and returns only once the block is durable (on disk, or committed), so
/// a caller may report the events done. One writer at a time per ledger; how a store refuses a second one
/// is its own rule (the file store: an OS file lock). The writer also hands out what only it has: the tree
/// frontier (receipts of a block from memory), the authority key (signed heads), and its ledger to read.
public protocol BlockAppender: AnyObject {
    /// The ledger's identity, from its genesis block.
    var genesis: Genesis { get }
    /// Header of the last block.
    var head: BlockHeader { get }
    /// Hash of the last block's header.
    var headHash: Digest { get }
    /// The tree frontier after the last block: inclusion proofs of the next block's events without a read.
    var frontier: MerkleFrontier { get }
    /// Appends one block holding `events` and returns its header once it is durable. The block time is
    /// `timestamp`, raised to the previous block's time if the clock went backwards.
    @discardableResult
    func append(_ events: [HashedEvent], timestamp: Int64) throws(LedgerError) -> BlockHeader
    /// Writes one block holding `events` after the last one written and returns its header without waiting
    /// for it to be durable (pipelined commits: the next block is written while this one syncs). `head`,
    /// `headHash` and `frontier` move past it; `pendingSync` makes it durable. If a write or a sync fails,
    /// every block written since the last durable one is dropped, and the store is back at that block.
    func write(_ events: [HashedEvent], timestamp: Int64) throws(LedgerError) -> BlockHeader
    /// What makes every block written so far durable, to run on any thread while the writer writes on; nil
    /// if they all are. Its outcome goes back to `finishSync` on the writer's thread.
    func pendingSync() -> PendingSync?
    /// Records the outcome of `sync`: its blocks are durable, or (on failure) every block written since the
    /// last durable one is dropped. A sync whose blocks were dropped, or are durable already, changes nothing.
    func finishSync(_ sync: PendingSync, _ outcome: Result<Void, LedgerError>)
    /// Blocks other writers appended after this writer's head, in order, which `head`, `headHash` and
    /// `frontier` now include: what a writer of a store that several processes write (PostgreSQL) reads
    /// between blocks to see what the others wrote. Every block written must be durable first (no
    /// `pendingSync`). A store with one writer returns none.
    func catchUp() throws(LedgerError) -> [EncodedBlock]
    /// Writes the next block as `decide` makes it, once it has been given the blocks other writers appended
    /// since this writer's head (none for a store with one writer; `head` and `frontier` already include
    /// them): from that catch-up until the block is written no other writer can append (PostgreSQL holds its
    /// head row locked), so the block is decided against the head it extends. Returns the block's header, as
    /// `write`, or nil if the decision holds no events (nothing is written). If `decide` throws, nothing is
    /// written and its error is rethrown.
    func write(deciding decide: (_ missed: [EncodedBlock]) throws -> BlockDecision) throws -> BlockHeader?
    /// Whether other writers may append to this ledger meanwhile (PostgreSQL: several servers on one database),
    /// so that a writer calls `catchUp` between blocks to see their blocks.
    var othersAppend: Bool { get }
    /// Whether the store keeps the voter roll beside the blocks and enforces it itself (PostgreSQL: under
    /// unique keys, so one vote per token holds in the database as well as in the contract). If so, a
    /// writer's `BlockDecision` carries the block's roll changes.
    var keepsRoll: Bool { get }
    /// Of `changes`, those whose key's stored entry is not their `previous`: the store's voter roll was changed
    /// outside the ledger, and writing them would fail the whole block. Asked from inside `decide` (of
    /// `write(deciding:)`), it reads under the chain's head, so the answer holds for the block being decided. A
    /// store that does not keep the roll has none.
    func disagreeing(_ changes: [RollChange]) throws -> [RollChange]
    /// The authority key this writer signs blocks with (the genesis key): what signs the heads it publishes.
    var authority: any AuthoritySigner { get }
    /// A reader of this ledger that sees every block appended so far (and still reads once the writer is
    /// closed): how the writer's owner reads back the chain it writes.
    func source() throws(LedgerError) -> any BlockSource
    /// Gives up writing now, so that another writer may open.
    func close()
}

/// What a writer decided for the next block (`BlockAppender.write(deciding:)`).
public struct BlockDecision {
    /// The block's events; none writes no block.
    public var events: [HashedEvent]
    /// The block's time (raised to the previous block's if the clock went backwards).
    public var timestamp: Int64
    /// The block's changes to the voter roll, in order, for a store that `keepsRoll` (else empty).
    public var roll: [RollChange]

    public init(events: [HashedEvent], timestamp: Int64, roll: [RollChange] = []) {
        self.events = events
        self.timestamp = timestamp
        self.roll = roll
    }
}

/// One change a block makes to the voter roll (the election's `VoterRoll`, as the format layer sees it): the
/// entry under key (`digest`, `place`, `kind`) becomes `entry`; `previous` is what the writer expects there
/// before (0: no entry, the key is new). Raw values, so that a store needs no election types. Within one block
/// a key may change twice (authorised, then voted).
public struct RollChange: Sendable, Equatable {
    public var digest: Digest
    public var place: UInt32
    public var kind: UInt32
    public var entry: UInt32
    public var previous: UInt32

    public init(digest: Digest, place: UInt32, kind: UInt32, entry: UInt32, previous: UInt32) {
        self.digest = digest
        self.place = place
        self.kind = kind
        self.entry = entry
        self.previous = previous
    }
}

/// A store the core is built without (PostgreSQL, in a target of its own), as the command line's edge hands
/// it to the service: what creates a ledger in it, opens its writer and reads it. Its secrets stay in a key
/// directory of each process, never in the store.
public protocol StoreOpener: Sendable, CustomStringConvertible {
    /// Creates a ledger named `name`: the genesis block signed by `authority`, and block 1 holding
    /// `firstEvents` at the same time, both durable before it returns; refused if the store holds a ledger.
    func create(
        name: String, authority: any AuthoritySigner, ledgerID: LedgerID, firstEvents: [LedgerEvent], timestamp: Int64
    ) throws(LedgerError) -> any BlockAppender
    /// Opens a writer of the ledger, signing with `signer` (the genesis key).
    func openWriter(signer: any AuthoritySigner) throws(LedgerError) -> any BlockAppender
    /// A reader of the ledger.
    func source() throws(LedgerError) -> any BlockSource
}

/// The work that makes a store's written blocks durable (the file store: an fdatasync), up to block `through`.
public struct PendingSync: Sendable {
    /// The height of the last block it makes durable.
    public let through: UInt64
    /// The store's count of dropped writes when it was made (a later drop makes it stale).
    public let generation: Int
    private let body: @Sendable () throws(LedgerError) -> Void

    public init(through: UInt64, generation: Int, _ body: @escaping @Sendable () throws(LedgerError) -> Void) {
        self.through = through
        self.generation = generation
        self.body = body
    }

    /// Makes the blocks durable; any thread.
    public func run() throws(LedgerError) { try body() }
}

extension BlockAppender {
    /// A store whose `append` is durable at once (in memory) writes by appending, and has nothing to sync.
    public func write(_ events: [HashedEvent], timestamp: Int64) throws(LedgerError) -> BlockHeader {
        try append(events, timestamp: timestamp)
    }
    public func pendingSync() -> PendingSync? { nil }
    public func finishSync(_ sync: PendingSync, _ outcome: Result<Void, LedgerError>) {}
}

extension BlockAppender {
    /// Signs a C2SP note (a signed head) with the authority key under `name`.
    public func signNote(_ text: String, name: String) throws(LedgerError) -> SignedNote {
        try authority.signNote(text, name: name)
    }
}

extension BlockAppender {
    /// A store with one writer has nothing to catch up on.
    public func catchUp() throws(LedgerError) -> [EncodedBlock] { [] }
    /// With one writer nobody else appends: the block is decided and written.
    public func write(deciding decide: (_ missed: [EncodedBlock]) throws -> BlockDecision) throws -> BlockHeader? {
        let decision = try decide([])
        guard !decision.events.isEmpty else { return nil }
        return try write(decision.events, timestamp: decision.timestamp)
    }
    /// A store that keeps only blocks leaves the roll to the writer.
    public var keepsRoll: Bool { false }
    /// A store that keeps no roll has no row to disagree.
    public func disagreeing(_ changes: [RollChange]) throws -> [RollChange] { [] }
    /// By default a store has one writer.
    public var othersAppend: Bool { false }

    /// Appends one block holding `events`, hashing each (`append` of `HashedEvent`s).
    @discardableResult
    public func append(_ events: [LedgerEvent], timestamp: Int64) throws(LedgerError) -> BlockHeader {
        try append(events.map(HashedEvent.init), timestamp: timestamp)
    }
}

/// What readers need from a store: the chain's blocks, in order, and the tree's proofs. A source shows only
/// complete blocks (a consistent prefix of the chain, never a block being written), and takes no writer
/// lock. Proofs are for trees that end at a block, named by their size and signed head. A source is shared
/// between threads (the chain verifier reads it on a second one).
public protocol BlockSource: Sendable {
    /// The ledger's identity, from the genesis block.
    var genesis: Genesis { get }
    /// The header of the last complete block.
    func lastBlock() throws -> BlockHeader
    /// Streams every complete block from height `first` on, in order.
    func forEachBlock(from first: UInt64, _ body: (EncodedBlock) throws -> Void) throws
    /// The header of block `height`, or `nil` if the source does not hold it.
    func header(at height: UInt64) throws -> BlockHeader?
    /// Block `height`, its events read in place, or `nil` if the source does not hold it: what a reader of a
    /// few blocks (a page of events) takes instead of a scan from the genesis block. A block that does not
    /// decode is damage (`LedgerError.damaged`).
    func block(at height: UInt64) throws -> EncodedBlock?
    /// Height of the block holding event `index`; nil if the source does not hold it, or cannot find it
    /// without reading the whole chain (the file store when its derived block index is gone).
    func height(ofEvent index: UInt64) throws -> UInt64?
    /// Every leaf hash of the first `treeSize` events, whose tree head is `root`.
    func leafHashes(treeSize: UInt64, root: Digest) throws -> [Digest]
    /// The inclusion proof (RFC 9162 PATH) of event `index` in the tree of the first `treeSize` events,
    /// whose head is `root`.
    func inclusionProof(index: UInt64, treeSize: UInt64, root: Digest) throws -> [Digest]
    /// The consistency proof (RFC 9162 PROOF) from the tree of the first `oldSize` events to that of the
    /// first `newSize`, whose head is `root`.
    func consistencyProof(oldSize: UInt64, newSize: UInt64, root: Digest) throws -> [Digest]
    /// Streams every stored block from height `first` on, in order, as the store keeps it: its bytes, not
    /// yet decoded, and where it lies (for naming it in an integrity error). The store makes the checks
    /// only it can (the file store: frames, CRCs, segment layout, a torn tail told from damage) and throws
    /// `LedgerError.damaged` for what fails them; everything a block says is left to the caller (the chain
    /// verifier). `body` returns false to end the scan early. Returns what the scan read.
    func scanBlocks(
        from first: UInt64, _ body: (_ block: [UInt8], _ place: BlockPlace) throws -> Bool
    ) throws
        -> StoredScan
}

extension BlockSource {
    /// The bytes of the stored block at height `height` as the store keeps them, or `nil` if the source holds
    /// no block there (the store's own checks apply, as in `scanBlocks`; what the block says is the caller's).
    public func storedBlock(at height: UInt64) throws -> [UInt8]? {
        var found: [UInt8]?
        _ = try scanBlocks(from: height) { block, _ in
            found = block
            return false
        }
        return found
    }
}

/// Where a store keeps a block, named in integrity errors: the file store's segment file and the byte offset
/// of the block's frame, or a memory ledger's offset into its blocks laid end to end.
public struct BlockPlace: Sendable, Equatable {
    /// The file (or other container) holding the block.
    public var file: String
    /// Byte offset of the block (the file store: of its frame) in `file`.
    public var offset: UInt64
    /// Bytes the block takes there (the file store: its whole frame).
    public var length: UInt64

    public init(file: String, offset: UInt64, length: UInt64) {
        self.file = file
        self.offset = offset
        self.length = length
    }

    /// The integrity error for block `height`, stored here, failing a check for `reason`.
    public func damage(height: UInt64, _ reason: String) -> LedgerError {
        .damaged(height: height, file: file, offset: offset, reason: reason)
    }
}

/// What a store's scan of its blocks read.
public struct StoredScan: Sendable, Equatable {
    /// Bytes read and checked: every block as stored, with the store's own framing (the file store: every
    /// segment header and every complete frame, the torn tail excluded).
    public var bytes: UInt64 = 0
    /// Incomplete bytes after the last block, where the store can have them (a file store writer is
    /// appending, or crashed and has not reopened).
    public var tornTail: TornTail?

    public init(bytes: UInt64 = 0, tornTail: TornTail? = nil) {
        self.bytes = bytes
        self.tornTail = tornTail
    }
}

/// Bytes at the end of the last segment that hold no complete, valid frame: what a crash mid-append
/// leaves behind. Writers cut them off on open; readers ignore them.
public struct TornTail: Equatable, Sendable {
    public var segment: Int
    public var offset: UInt64
    public var bytes: UInt64
    /// The segment's own header is incomplete: the crash hit while the segment was being created.
    public var wholeSegment: Bool

    package init(segment: Int, offset: UInt64, bytes: UInt64, wholeSegment: Bool) {
        self.segment = segment
        self.offset = offset
        self.bytes = bytes
        self.wholeSegment = wholeSegment
    }
}

/// Tables a store derives from its chain and keeps beside it (PostgreSQL: the tree's group heads and the voter
/// roll), which nothing trusts for a count or a proof and `vote verify` checks against the chain, row by row,
/// naming each row that is not what the chain gives.
public protocol DerivedTables {
    /// Where the tree's group heads are kept, for messages ("vote_merkle_groups").
    var groupTable: String { get }
    /// Where the voter roll is kept, for messages ("vote_roll").
    var rollTable: String { get }
    /// The indexes of the stored group heads (groups of `GroupedTree.groupSize` leaves) that are not the head of
    /// their leaves in the chain, and of the complete groups that have no stored head.
    func groupsNotFromLeaves() throws -> [UInt64]
    /// Every row of the voter roll as stored: key (digest, place, kind) and entry, as `RollChange` carries them
    /// (`previous` is 0).
    func forEachRollRow(_ body: (RollChange) throws -> Void) throws
    /// Rewrites both tables from the chain, whose head (header hash) is `head` and whose voter roll is `roll`
    /// (`previous` unused), in one transaction that holds the chain's head: refused, with nothing changed, if
    /// another writer appended after `head`.
    func rebuildDerivedTables(head: Digest, roll: [RollChange]) throws
}
