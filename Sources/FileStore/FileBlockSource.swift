public import Ledger
public import LedgerCrypto

/// Read-only access to a ledger directory, the file store's `BlockSource`. Takes no lock: while a writer
/// appends, a reader sees a consistent prefix of complete blocks.
public struct FileBlockSource: BlockSource {
    public let directory: LedgerDirectory
    /// The ledger's identity, from the genesis block.
    public let genesis: Genesis
    /// Segments when the reader was opened.
    private let openedSegments: Int
    /// The genesis authority, which tells damage from a torn tail (nil if its key does not import).
    let authority: ChainAuthority?

    /// Opens `path` for reading; fails clearly if it is not a ledger.
    public init(path: String) throws(LedgerError) {
        directory = LedgerDirectory(path)
        openedSegments = try directory.segmentCount()
        var scanner = LogScanner(directory: directory, segmentCount: openedSegments, authority: nil)
        guard let (bytes, _) = try scanner.next() else {
            throw LedgerError.notALedger(path: path, reason: "the first segment holds no complete genesis block")
        }
        do throws(DecodeError) {
            let block = try Block(decoding: bytes)
            guard block.header.height == 0, block.events.count == 1 else {
                throw DecodeError("the first block is not a genesis block")
            }
            genesis = try Genesis(decoding: block.events[0])
        } catch {
            throw LedgerError.notALedger(path: path, reason: error.message)
        }
        authority = ChainAuthority(genesis)
    }

    /// Segments now: those there when the reader was opened and any a writer has started since (segments are
    /// only ever added), so a reader kept open (a server's) sees every block, also past a new segment.
    var segmentCount: Int {
        var count = openedSegments
        while FileSystem.kind(directory.segmentPath(count)) == .file { count += 1 }
        return count
    }

    /// The ledger's authority key from the key directory `keys` (default: `KeyDirectory(defaultFor:)`),
    /// decrypted with `passphrase` if it is encrypted, and checked as a writer checks it (FORMAT.md §5.7);
    /// for signing without writing (`HeadSigner`).
    public func authorityKey(keys: String? = nil, passphrase: [UInt8]?) throws(LedgerError) -> Ed25519PrivateKey {
        try FileBlockStore.loadAuthorityKey(
            from: KeyDirectory(keys ?? KeyDirectory(defaultFor: directory.path).path), passphrase: passphrase,
            genesis: genesis)
    }

    /// A scan of the log from its start.
    func scanner() -> LogScanner {
        LogScanner(directory: directory, segmentCount: segmentCount, authority: authority)
    }

    /// A scan of the log from the frame after the one at `location`, whose block is `height`.
    func scanner(after location: BlockLocation, height: UInt64) -> LogScanner {
        LogScanner(
            directory: directory, segmentCount: segmentCount, authority: authority, segment: location.segment,
            offset: location.offset + location.length, height: height)
    }

    /// Streams every complete block from height `first` on, in order, with its location. Returns the
    /// torn tail the scan stopped at, if any (a writer is mid-append, or crashed mid-append and has not
    /// reopened yet). Starts through the block index when it can, else scans from the beginning.
    @discardableResult
    public func forEachBlock(
        from first: UInt64 = 0, _ body: (_ raw: [UInt8], _ location: BlockLocation) throws -> Void
    )
        throws -> TornTail?
    {
        var scanner = try scanner(from: first)
        while let (bytes, location) = try scanner.next() {
            if scanner.height - 1 >= first { try body(bytes, location) }
        }
        return scanner.tail
    }

    /// Streams every complete block from height `first` on, as stored, with its segment file and frame offset,
    /// after the file store's own checks: frames and CRCs, segment headers and layout, and a torn tail told from
    /// damage (FORMAT.md §6). A scan from the genesis counts every segment header it read in its bytes.
    public func scanBlocks(
        from first: UInt64, _ body: (_ block: [UInt8], _ place: BlockPlace) throws -> Bool
    )
        throws -> StoredScan
    {
        var scanner = try scanner(from: first)
        var scan = StoredScan()
        while let (bytes, location) = try scanner.next() {
            guard scanner.height - 1 >= first else { continue }
            scan.bytes += location.length
            let place = BlockPlace(
                file: LedgerDirectory.segmentName(location.segment), offset: location.offset, length: location.length)
            guard try body(bytes, place) else { return scan }
        }
        scan.tornTail = scanner.tail
        if first == 0 {
            // Every segment header read counts, also of a segment that holds no complete block yet.
            let headers: Int
            if let tail = scan.tornTail {
                headers = tail.wholeSegment ? tail.segment : tail.segment + 1
            } else {
                headers = scanner.segmentCount
            }
            scan.bytes += UInt64(headers * SegmentHeader.size)
        }
        return scan
    }

    /// Streams every complete block from height `first` on, in order, its events read in place. A block
    /// that does not decode is damage, reported with its height and byte offset.
    public func forEachBlock(from first: UInt64, _ body: (EncodedBlock) throws -> Void) throws {
        var scanner = try scanner(from: first)
        while let (bytes, location) = try scanner.next() {
            let height = scanner.height - 1
            guard height >= first else { continue }
            try body(try decode(bytes, at: location, height: height, scanner))
        }
    }

    /// The header of the complete block at `height`, or `nil` if the log does not hold it: through the block
    /// index when it covers the block, else read from the log.
    public func header(at height: UInt64) throws(LedgerError) -> BlockHeader? {
        if let (header, _) = try indexedHeader(at: height) { return header }
        var scanner = try scanner(from: height)
        while let (bytes, location) = try scanner.next() {
            if scanner.height - 1 == height { return try decode(bytes, at: location, height: height, scanner).header }
        }
        return nil
    }

    private func decode(
        _ bytes: [UInt8], at location: BlockLocation, height: UInt64, _ scanner: LogScanner
    )
        throws(LedgerError) -> EncodedBlock
    {
        do { return try EncodedBlock(decoding: bytes) } catch {
            throw scanner.damage(error.message, at: location.offset, height: height)
        }
    }

    /// The complete block at `height`, or `nil` if the log does not hold it: from right after block
    /// `height` - 1 when the block index finds it, so a page of events costs a few frames, not a scan.
    public func block(at height: UInt64) throws(LedgerError) -> EncodedBlock? {
        var scanner = try scanner(from: height)
        while let (bytes, location) = try scanner.next() {
            if scanner.height - 1 == height { return try decode(bytes, at: location, height: height, scanner) }
        }
        return nil
    }

    /// A scan whose first block is `first` or before: right after block first - 1 when the index finds
    /// it (even when `first` is past the head), else from the beginning.
    private func scanner(from first: UInt64) throws(LedgerError) -> LogScanner {
        // Right after block first - 1, which the index finds even when `first` is past the head.
        if first > 0, let (_, location) = try indexedHeader(at: first - 1) {
            return scanner(after: location, height: first)
        }
        return scanner()
    }

    /// The last complete block: found through the block index, then scanning any blocks after it.
    public func lastBlock() throws -> BlockHeader {
        var last: BlockHeader?
        var scanner = self.scanner()
        if FileSystem.kind(directory.blockIndexPath) == .file {
            let count = try File.openForReading(directory.blockIndexPath).size() / 32
            if count > 0, let (header, location) = try indexedHeader(at: count - 1) {
                last = header
                scanner = self.scanner(after: location, height: count)
            }
        }
        while let (raw, _) = try scanner.next() {
            last = try ByteReader.reading(raw) { (reader) throws(DecodeError) in try BlockHeader(decoding: &reader) }
        }
        guard let last else { throw LedgerError.notALedger(path: directory.path, reason: "the log holds no blocks") }
        return last
    }

    /// Height of the block holding event `index`, found by binary search in the block index; `nil` if the
    /// index does not cover it.
    public func height(ofEvent index: UInt64) throws -> UInt64? {
        guard FileSystem.kind(directory.blockIndexPath) == .file else { return nil }
        let file = try File.openForReading(directory.blockIndexPath)
        var low: UInt64 = 0
        var high = try file.size() / 32
        // First block whose tree size exceeds the event index.
        while low < high {
            let middle = (low + high) / 2
            guard let record = BlockIndexRecord(decoding: try file.read(at: middle * 32, count: 32)) else { return nil }
            if record.treeSize > index { high = middle } else { low = middle + 1 }
        }
        guard let (header, _) = try indexedHeader(at: low), header.treeSize > index,
            header.treeSize - index <= UInt64(header.eventCount)
        else { return nil }
        return low
    }

    /// Every leaf hash of the first `treeSize` events: from the leaf index when it matches `root`, else
    /// recomputed from the log (the index is derived data and may lag after a crash).
    public func leafHashes(treeSize: UInt64, root: Digest) throws -> [Digest] {
        if FileSystem.kind(directory.leafIndexPath) == .file {
            let index = try File.openForReading(directory.leafIndexPath)
            guard treeSize <= (try index.size()) / 32 else { return try leafHashesFromLog(treeSize) }
            let bytes = try index.read(at: 0, count: Int(treeSize * 32))
            if bytes.count == Int(treeSize * 32) {
                var leaves: [Digest] = []
                leaves.reserveCapacity(Int(treeSize))
                bytes.withUnsafeBytes { raw in
                    var at = 0
                    while at < raw.count {
                        leaves.append(Digest(unsafeUninitializedReading: UnsafeRawBufferPointer(rebasing: raw[at...])))
                        at += 32
                    }
                }
                var frontier = MerkleFrontier()
                for leaf in leaves { frontier.append(leaf) }
                if frontier.root == root { return leaves }
            }
        }
        return try leafHashesFromLog(treeSize)
    }

    private func leafHashesFromLog(_ treeSize: UInt64) throws -> [Digest] {
        var leaves: [Digest] = []
        try forEachBlock { raw, _ in
            guard UInt64(leaves.count) < treeSize else { return }
            for event in try Block(decoding: raw).events where UInt64(leaves.count) < treeSize {
                leaves.append(event.leafHash)
            }
        }
        return leaves
    }

    // MARK: Proofs

    /// The inclusion proof (RFC 9162 PATH) of event `index` in the tree of the first `treeSize` events,
    /// whose head is `root`. Costs O(log n) small reads of nodes.idx and leaves.idx. Those are derived
    /// data, possibly stale or damaged, so the proof is checked against `root`; if it does not verify,
    /// it is built from every leaf hash instead (as `leafHashes` finds them).
    public func inclusionProof(index: UInt64, treeSize: UInt64, root: Digest) throws -> [Digest] {
        guard index < treeSize else {
            throw LedgerError.invalidRequest("event \(index) is not in a tree of \(treeSize) events")
        }
        if let tree = try? IndexedTree(directory: directory, size: treeSize),
            let proof = try? Merkle.inclusionProof(index: index, size: treeSize, subtree: tree.root),
            let leaf = try? tree.root(index..<index + 1),
            Merkle.verifyInclusion(leafHash: leaf, index: index, size: treeSize, proof: proof, root: root)
        {
            return proof
        }
        return try wholeTree(treeSize: treeSize, root: root).inclusionProof(index: index, size: treeSize)
    }

    /// The consistency proof (RFC 9162 PROOF) from the tree of the first `oldSize` events to the tree of
    /// the first `newSize`, whose head is `root`. Built and checked like `inclusionProof`: the proof
    /// verifies against `root` only if every hash in it is right, and then it also gives the old head.
    public func consistencyProof(oldSize: UInt64, newSize: UInt64, root: Digest) throws -> [Digest] {
        guard oldSize > 0, oldSize <= newSize else {
            throw LedgerError.invalidRequest("no consistency proof from \(oldSize) to \(newSize) events")
        }
        guard oldSize < newSize else { return [] }
        if let tree = try? IndexedTree(directory: directory, size: newSize),
            let proof = try? Merkle.consistencyProof(oldSize: oldSize, newSize: newSize, subtree: tree.root),
            let oldRoot = try? tree.root(0..<oldSize),
            Merkle.verifyConsistency(oldSize: oldSize, newSize: newSize, proof: proof, oldRoot: oldRoot, newRoot: root)
        {
            return proof
        }
        return try wholeTree(treeSize: newSize, root: root).consistencyProof(oldSize: oldSize, newSize: newSize)
    }

    /// The slow, always-correct path: every leaf hash in memory.
    private func wholeTree(treeSize: UInt64, root: Digest) throws -> MerkleTree {
        let leaves = try leafHashes(treeSize: treeSize, root: root)
        guard UInt64(leaves.count) == treeSize else {
            throw LedgerError.invalidRequest("the ledger holds \(leaves.count) events, not \(treeSize)")
        }
        return MerkleTree(leaves: leaves)
    }

    /// The header of block `height` found through the block index, or `nil` if the index does not
    /// (correctly) cover it.
    public func indexedHeader(at height: UInt64) throws(LedgerError) -> (header: BlockHeader, location: BlockLocation)?
    {
        guard FileSystem.kind(directory.blockIndexPath) == .file else { return nil }
        let index = try File.openForReading(directory.blockIndexPath)
        guard height < (try index.size()) / 32,
            let record = BlockIndexRecord(decoding: try index.read(at: height * 32, count: 32)),
            let header = try RecoveredState.header(directory, at: record.location, segmentCount: segmentCount),
            header.height == height
        else { return nil }
        return (header, record.location)
    }
}

extension FileBlockSource {
    /// Throws `notALedger` unless `path` is a ledger directory (its first segment starts with a genesis block):
    /// what a command that only moves files beside a ledger checks before it touches any.
    public static func requireLedger(at path: String) throws(LedgerError) { _ = try FileBlockSource(path: path) }
}
