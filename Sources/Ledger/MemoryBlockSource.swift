public import LedgerCrypto

/// A ledger held in memory: the reference implementation of the storage seam, for tests and for ledgers that
/// need not outlive the process (the service's `.memory` store). It is a `BlockSource` that any number of
/// threads may read while its one `Writer` (a `BlockAppender`) appends; the blocks are built and signed by the
/// same `BlockBuilder` the file store uses, so both hold the same bytes. Nothing survives the process, so
/// "durable" means "in the ledger once `append` returns".
public final class MemoryBlockSource: BlockSource, Sendable {
    /// The ledger's identity, from the genesis block.
    public let genesis: Genesis
    private let state: Locked<State>
    /// Held by a writer from reading the head through deciding to appending, so writers take turns (the
    /// memory store's head lock). Readers never take it, and a writer deciding a block does not hold
    /// `state`'s lock, so what it decides may read the ledger (a certification recounts the whole log). Its value
    /// counts the blocks writers appended: a zero-sized value would share its address with the lock object's
    /// header, and ThreadSanitizer then reports a retain of the lock as racing with the value's exclusive access.
    private let writing = Locked<UInt64>(0)

    private struct State: Sendable {
        /// Every block, in height order; never empty (the genesis block is first).
        var blocks: [EncodedBlock]
        /// Every event's leaf hash, in order.
        var leaves: [Digest]
        /// Whether a `Writer` is open: the memory store's rule for "one writer at a time".
        var writerOpen = false
    }

    // MARK: Creating and writing

    /// A new ledger holding only its genesis block, named `name` and signed by `authority`.
    public init(name: String, authority: any AuthoritySigner, ledgerID: LedgerID, timestamp: Int64) throws(LedgerError)
    {
        guard (1...Genesis.maxNameBytes).contains(name.utf8.count) else {
            throw LedgerError.invalidRequest("ledger name must be 1-\(Genesis.maxNameBytes) bytes of UTF-8")
        }
        guard timestamp >= 0 else { throw LedgerError.invalidRequest("creation time is before 1970") }
        let genesis = Genesis(
            ledgerID: ledgerID, createdAt: timestamp, authorityKey: authority.publicKey.rawRepresentation, name: name)
        let (block, _) = try BlockBuilder.start(genesis, key: authority)
        self.genesis = genesis
        state = Locked(State(blocks: [try MemoryBlockSource.encode(block)], leaves: block.events.map(\.leafHash)))
    }

    /// Opens the ledger's writer, signing with `authority`, which must be the genesis key. Refused as busy
    /// while another writer is open (until it is closed or goes away) unless `shared`: then it writes beside
    /// any number of other shared writers, as servers on one PostgreSQL database do (`BlockAppender.othersAppend`),
    /// deciding each block under the store's lock.
    public func openWriter(authority: any AuthoritySigner, shared: Bool = false) throws(LedgerError) -> Writer {
        let (head, leaves) = state.withLock { ($0.blocks[$0.blocks.count - 1].header, $0.leaves) }
        var frontier = MerkleFrontier()
        for leaf in leaves { frontier.append(leaf) }
        let writer = try BlockBuilder(genesis: genesis, head: head, frontier: frontier, key: authority)
        if !shared {
            let taken = state.withLock { state in
                defer { state.writerOpen = true }
                return state.writerOpen
            }
            guard !taken else { throw LedgerError.busy(pid: nil) }
        }
        return Writer(ledger: self, writer: writer, shared: shared)
    }

    /// The writer of a `MemoryBlockSource`, its `BlockAppender`.
    public final class Writer: BlockAppender {
        private let ledger: MemoryBlockSource
        private var writer: BlockBuilder
        private var closed = false
        /// Opened beside other writers (`openWriter(authority:shared:)`).
        private let shared: Bool

        fileprivate init(ledger: MemoryBlockSource, writer: BlockBuilder, shared: Bool) {
            self.ledger = ledger
            self.writer = writer
            self.shared = shared
        }

        public var othersAppend: Bool { shared }

        deinit { close() }

        /// The ledger's identity, from its genesis block.
        public var genesis: Genesis { writer.genesis }
        /// Header of the last block.
        public var head: BlockHeader { writer.head }
        /// Hash of the last block's header.
        public var headHash: Digest { writer.headHash }
        /// The tree frontier after the last block.
        public var frontier: MerkleFrontier { writer.frontier }

        /// Appends one block holding `events`; readers see it, whole, once this returns.
        @discardableResult
        public func append(_ events: [HashedEvent], timestamp: Int64) throws(LedgerError) -> BlockHeader {
            guard !closed else { throw LedgerError.invalidRequest("this writer is closed") }
            return try ledger.writing.withLock { _ throws(LedgerError) in
                let next = try writer.next(events, timestamp: timestamp)
                try ledger.store(next)
                writer.advance(to: next)
                return next.block.header
            }
        }

        /// The blocks other shared writers appended since this writer's head.
        public func catchUp() throws(LedgerError) -> [EncodedBlock] {
            try ledger.state.withLock { state throws(LedgerError) in try advance(past: &state) }
        }

        /// Decides and appends the next block under the store's lock, after the blocks others appended.
        public func write(deciding decide: (_ missed: [EncodedBlock]) throws -> BlockDecision) throws -> BlockHeader? {
            guard !closed else { throw LedgerError.invalidRequest("this writer is closed") }
            return try ledger.writing.withLock { appended in
                let missed = try ledger.state.withLock { state throws(LedgerError) in try advance(past: &state) }
                let decision = try decide(missed)
                guard !decision.events.isEmpty else { return nil }
                let next = try writer.next(decision.events, timestamp: decision.timestamp)
                try ledger.store(next)
                writer.advance(to: next)
                appended += 1
                return next.block.header
            }
        }

        /// Moves this writer past the blocks in `state` above its head, and returns them.
        private func advance(past state: inout State) throws(LedgerError) -> [EncodedBlock] {
            let missed = Array(state.blocks[Int(writer.head.height + 1)...])
            for block in missed {
                try writer.advance(past: block, at: MemoryBlockSource.place(of: block.header.height, in: state.blocks))
            }
            return missed
        }

        /// The authority key the blocks are signed with.
        public var authority: any AuthoritySigner { writer.authority }

        /// The ledger this writer appends to.
        public func source() -> any BlockSource { ledger }

        /// Gives up writing, so that another writer may open.
        public func close() {
            guard !closed else { return }
            closed = true
            if !shared { ledger.state.withLock { $0.writerOpen = false } }
        }
    }

    /// Adds `next` to the chain; it must extend the current head.
    private func store(_ next: BlockBuilder.Next) throws(LedgerError) {
        try state.withLock { state throws(LedgerError) in try MemoryBlockSource.add(next, to: &state) }
    }

    /// Adds `next` to `state`'s chain; it must extend the head there (another shared writer may have moved it).
    private static func add(_ next: BlockBuilder.Next, to state: inout State) throws(LedgerError) {
        let head = state.blocks[state.blocks.count - 1].header
        guard head.hash == next.block.header.previousHash else {
            throw LedgerError.headMoved(
                "block \(next.block.header.height) was not written: another writer appended block \(head.height) first")
        }
        state.blocks.append(try encode(next.block))
        state.leaves.append(contentsOf: next.leaves)
    }

    private static func encode(_ block: Block) throws(LedgerError) -> EncodedBlock {
        do { return try EncodedBlock(decoding: block.encoded) } catch {
            throw LedgerError.invalidRequest("block \(block.header.height) does not encode: \(error.message)")
        }
    }

    // MARK: Reading

    /// The header of the last block.
    public func lastBlock() -> BlockHeader {
        state.withLock { $0.blocks[$0.blocks.count - 1].header }
    }

    /// Streams every block from height `first` on, in order: those the ledger held when the call began.
    public func forEachBlock(from first: UInt64, _ body: (EncodedBlock) throws -> Void) throws {
        let blocks = state.withLock { $0.blocks }
        guard first < UInt64(blocks.count) else { return }
        for block in blocks[Int(first)...] { try body(block) }
    }

    /// Streams every block from height `first` on, as `forEachBlock` does, each placed at its offset in the
    /// ledger's blocks laid end to end ("memory"). Memory has no framing of its own to check.
    public func scanBlocks(
        from first: UInt64, _ body: (_ block: [UInt8], _ place: BlockPlace) throws -> Bool
    )
        throws -> StoredScan
    {
        let blocks = state.withLock { $0.blocks }
        var scan = StoredScan()
        var offset: UInt64 = 0
        for (height, block) in blocks.enumerated() {
            let place = MemoryBlockSource.place(of: block, at: offset)
            offset += place.length
            guard UInt64(height) >= first else { continue }
            scan.bytes += place.length
            guard try body(block.bytes, place) else { break }
        }
        return scan
    }

    /// Where `block` lies when the blocks are laid end to end ("memory"), starting at `offset`.
    private static func place(of block: EncodedBlock, at offset: UInt64) -> BlockPlace {
        BlockPlace(file: "memory", offset: offset, length: UInt64(block.bytes.count))
    }

    /// Where block `height` of `blocks` lies, laid end to end.
    fileprivate static func place(of height: UInt64, in blocks: [EncodedBlock]) -> BlockPlace {
        place(of: blocks[Int(height)], at: blocks[..<Int(height)].reduce(0) { $0 + UInt64($1.bytes.count) })
    }

    /// The header of block `height`, or `nil` if the ledger does not hold it.
    public func header(at height: UInt64) -> BlockHeader? {
        block(at: height)?.header
    }

    /// Block `height`, or `nil` if the ledger does not hold it.
    public func block(at height: UInt64) -> EncodedBlock? {
        state.withLock { height < UInt64($0.blocks.count) ? $0.blocks[Int(height)] : nil }
    }

    /// Height of the block holding event `index`, by binary search over the blocks' tree sizes; nil if the
    /// ledger does not hold it.
    public func height(ofEvent index: UInt64) -> UInt64? {
        state.withLock { state in
            var low = 0
            var high = state.blocks.count
            // First block whose tree size exceeds the event index.
            while low < high {
                let middle = (low + high) / 2
                if state.blocks[middle].header.treeSize > index { high = middle } else { low = middle + 1 }
            }
            return low < state.blocks.count ? UInt64(low) : nil
        }
    }

    /// Every leaf hash of the first `treeSize` events; refused unless their tree head is `root`.
    public func leafHashes(treeSize: UInt64, root: Digest) throws(LedgerError) -> [Digest] {
        let leaves = state.withLock { $0.leaves }
        guard treeSize <= UInt64(leaves.count) else {
            throw LedgerError.invalidRequest("the ledger holds \(leaves.count) events, not \(treeSize)")
        }
        let prefix = Array(leaves[..<Int(treeSize)])
        guard Merkle.root(0..<treeSize, leaf: { prefix[Int($0)] }) == root else {
            throw LedgerError.invalidRequest("the tree of the first \(treeSize) events does not have that head")
        }
        return prefix
    }

    /// The inclusion proof (RFC 9162 PATH) of event `index` in the tree of the first `treeSize` events.
    public func inclusionProof(index: UInt64, treeSize: UInt64, root: Digest) throws(LedgerError) -> [Digest] {
        guard index < treeSize else {
            throw LedgerError.invalidRequest("event \(index) is not in a tree of \(treeSize) events")
        }
        return MerkleTree(leaves: try leafHashes(treeSize: treeSize, root: root)).inclusionProof(
            index: index, size: treeSize)
    }

    /// The consistency proof (RFC 9162 PROOF) from the first `oldSize` events to the first `newSize`.
    public func consistencyProof(oldSize: UInt64, newSize: UInt64, root: Digest) throws(LedgerError) -> [Digest] {
        guard oldSize > 0, oldSize <= newSize else {
            throw LedgerError.invalidRequest("no consistency proof from \(oldSize) to \(newSize) events")
        }
        return MerkleTree(leaves: try leafHashes(treeSize: newSize, root: root)).consistencyProof(
            oldSize: oldSize, newSize: newSize)
    }
}

// MARK: - Damage, for tests

extension MemoryBlockSource {
    /// Flips the bits of `mask` in byte `offset` of block `height`, as media damage or tampering would, so
    /// tests can show the chain verifier finds it in this store too. The block must still decode.
    func tamper(height: UInt64, offset: Int, mask: UInt8) throws(DecodeError) {
        var bytes = state.withLock { $0.blocks[Int(height)].bytes }
        bytes[offset] ^= mask
        let block = try EncodedBlock(decoding: bytes)
        state.withLock { $0.blocks[Int(height)] = block }
    }
}
