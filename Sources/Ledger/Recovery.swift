public import LedgerCrypto

/// What a writer needs after opening: the last block, the frontier, the open segment and the indexes,
/// brought up to date with the log. The log is the truth; the indexes are caught up (or rebuilt) from it.
struct RecoveredState {
    var head: BlockHeader
    /// Where the last block's frame is.
    var headLocation: BlockLocation
    var frontier: MerkleFrontier
    var segment: Int
    var segmentFile: File
    var segmentSize: UInt64
    let blockIndex: File
    let leafIndex: File
    let nodeIndex: File
    /// Whether nodes.idx, brought up to date from the leaf index, agrees with the tree head. False when
    /// the leaf index or the frontier disagrees with it: then all indexes must be rebuilt from the log.
    let nodeIndexAgrees: Bool

    init(_ reader: LedgerReader, io: any FileIO, log: (String) -> Void, rebuild: Bool = false) throws(LedgerError) {
        let directory = reader.directory
        let segmentCount = reader.segmentCount
        blockIndex = try File.openForWriting(directory.blockIndexPath, create: true, io: io)
        leafIndex = try File.openForWriting(directory.leafIndexPath, create: true, io: io)

        // Resume after the last indexed block whose leaves are indexed too and whose frame is where the index says.
        var scanner = reader.scanner()
        var last: (header: BlockHeader, location: BlockLocation)?
        if !rebuild {
            let leafCount = try leafIndex.size() / 32
            var blocks = try blockIndex.size() / 32
            while blocks > 0, leafCount > 0 {
                guard let record = BlockIndexRecord(decoding: try blockIndex.read(at: (blocks - 1) * 32, count: 32))
                else { break }
                if record.treeSize > leafCount {
                    blocks -= 1
                    continue
                }
                if let header = try RecoveredState.header(directory, at: record.location, segmentCount: segmentCount),
                    header.height == blocks - 1, header.treeSize == record.treeSize
                {
                    last = (header, record.location)
                    scanner = reader.scanner(after: record.location, height: blocks)
                }
                break
            }
        }
        let indexedBlocks = last.map { $0.header.height + 1 } ?? 0
        var treeSize = last?.header.treeSize ?? 0
        try blockIndex.truncate(to: indexedBlocks * 32)
        try leafIndex.truncate(to: treeSize * 32)

        // Scan the rest of the log, checking each block links to the one before, and index it.
        var headHash = last?.header.hash ?? .zero
        var records = ByteWriter()
        var leaves = ByteWriter()
        var recordsAt = indexedBlocks * 32
        var leavesAt = treeSize * 32
        while let (bytes, location) = try scanner.next() {
            let height = scanner.height - 1
            let block: Block
            do { block = try Block(decoding: bytes) } catch {
                throw scanner.damage(error.message, at: location.offset, height: height)
            }
            let header = block.header
            guard header.height == height, header.previousHash == headHash,
                header.treeSize == treeSize + UInt64(header.eventCount)
            else { throw scanner.damage("does not link to the block before it", at: location.offset, height: height) }
            for event in block.events { leaves.write(event.leafHash) }
            records.write(bytes: BlockIndexRecord(location: location, header: header).encoded)
            treeSize = header.treeSize
            headHash = header.hash
            last = (header, location)
            if leaves.bytes.count >= 1 << 22 {
                try leafIndex.write(leaves.bytes, at: leavesAt)
                leavesAt += UInt64(leaves.bytes.count)
                leaves = ByteWriter()
                try blockIndex.write(records.bytes, at: recordsAt)
                recordsAt += UInt64(records.bytes.count)
                records = ByteWriter()
            }
        }
        try leafIndex.write(leaves.bytes, at: leavesAt)
        try blockIndex.write(records.bytes, at: recordsAt)
        guard let (head, headLocation) = last else {
            throw LedgerError.notALedger(path: directory.path, reason: "the log holds no genesis block")
        }

        // Cut off what a crash mid-append left behind.
        segment = segmentCount - 1
        if let tail = scanner.tail {
            let name = LedgerDirectory.segmentName(tail.segment)
            if tail.wholeSegment {
                try io.remove(directory.segmentPath(tail.segment))
                try io.syncDirectory(directory.path)
                segment -= 1
                log("recovered: removed \(name), an incomplete new segment of \(tail.bytes) bytes")
            } else {
                let file = try File.openForWriting(directory.segmentPath(tail.segment), io: io)
                try file.truncate(to: tail.offset)
                try file.sync()
                log("recovered: dropped \(tail.bytes) bytes of an incomplete block at the end of \(name)")
            }
        }
        segmentFile = try File.openForWriting(directory.segmentPath(segment), io: io)
        segmentSize = try segmentFile.size()
        self.head = head
        self.headLocation = headLocation
        let frontier = try RecoveredState.frontier(
            directory, leafIndex: leafIndex, treeSize: treeSize, root: head.treeRoot)
        self.frontier = frontier
        nodeIndex = try File.openForWriting(directory.nodesIndexPath, create: true, io: io)
        nodeIndexAgrees = try RecoveredState.updateNodeIndex(
            nodeIndex, leafIndex: leafIndex, frontier: frontier, root: head.treeRoot, rebuild: rebuild)
    }

    /// The header of the block framed at `location`, or `nil` if no valid frame is there.
    static func header(_ directory: LedgerDirectory, at location: BlockLocation, segmentCount: Int)
        throws(LedgerError) -> BlockHeader?
    {
        guard location.segment < segmentCount, location.length > UInt64(Frame.headerSize),
            location.length <= UInt64(Frame.headerSize + LedgerFormat.maxBlockSize)
        else { return nil }
        let file = try File.openForReading(directory.segmentPath(location.segment))
        // Index records are derived data and may be damaged: never read outside the segment.
        let size = try file.size()
        guard location.offset <= size, location.length <= size - location.offset else { return nil }
        let frame = try file.read(at: location.offset, count: Int(location.length))
        guard frame.count == Int(location.length), Array(frame[0..<4]) == Frame.magic,
            Frame.encode(Array(frame[Frame.headerSize...])) == frame
        else { return nil }
        var header: BlockHeader?
        frame.withUnsafeBytes { raw in
            var reader = ByteReader(UnsafeRawBufferPointer(rebasing: raw[Frame.headerSize...]))
            header = try? BlockHeader(decoding: &reader)
        }
        return header
    }

    /// Brings nodes.idx in line with a leaf index of `frontier.size` leaves: drops records past the last
    /// complete group (a partial record too), hashes the missing groups from the leaf index, and checks
    /// the records against `frontier` (whose subtrees of 1024 leaves or more are built from the same
    /// group heads). Records that disagree are all rehashed from the leaf index. Returns whether they
    /// agree in the end; without a frontier that gives the tree head `root` it cannot tell, and leaves
    /// the file to the rebuild that follows.
    private static func updateNodeIndex(
        _ nodes: File, leafIndex: File, frontier: MerkleFrontier, root: Digest, rebuild: Bool
    ) throws(LedgerError) -> Bool {
        guard frontier.root == root else { return false }
        let groups = frontier.size / NodeIndex.groupSize
        let size = try nodes.size()
        let kept = rebuild ? 0 : min(size / 32, groups)
        if size != kept * 32 { try nodes.truncate(to: kept * 32) }
        try appendGroups(kept..<groups, to: nodes, leafIndex: leafIndex)
        if try nodeIndex(nodes, groups: groups, agreesWith: frontier) { return true }
        guard kept > 0 else { return false }
        try nodes.truncate(to: 0)
        try appendGroups(0..<groups, to: nodes, leafIndex: leafIndex)
        return try nodeIndex(nodes, groups: groups, agreesWith: frontier)
    }

    /// Appends the heads of `groups` to nodes.idx, hashing their leaves from the leaf index in batches,
    /// and stops early if the leaf index ends before them.
    private static func appendGroups(_ groups: Range<UInt64>, to nodes: File, leafIndex: File) throws(LedgerError) {
        let batch: UInt64 = 128
        var group = groups.lowerBound
        while group < groups.upperBound {
            let count = min(batch, groups.upperBound - group)
            let leaves = NodeIndex.digests(
                try leafIndex.read(at: group * NodeIndex.groupSize * 32, count: Int(count * NodeIndex.groupSize * 32)))
            let complete = leaves.count / Int(NodeIndex.groupSize)
            guard complete > 0 else { return }
            var records = ByteWriter(capacity: complete * 32)
            for start in stride(from: 0, to: complete * Int(NodeIndex.groupSize), by: Int(NodeIndex.groupSize)) {
                records.write(Merkle.root(0..<NodeIndex.groupSize) { leaves[start + Int($0)] })
            }
            try nodes.write(records.bytes, at: group * 32)
            guard complete == Int(count) else { return }
            group += count
        }
    }

    /// Whether nodes.idx holds `groups` records whose tree gives the subtrees of `frontier` of 1024 leaves
    /// or more.
    private static func nodeIndex(_ nodes: File, groups: UInt64, agreesWith frontier: MerkleFrontier)
        throws(LedgerError) -> Bool
    {
        var upper = MerkleFrontier()
        while upper.size < groups {
            let records = NodeIndex.digests(
                try nodes.read(at: upper.size * 32, count: Int(min(groups - upper.size, 1 << 17) * 32)))
            guard !records.isEmpty else { return false }
            for record in records { upper.append(record) }
        }
        return upper.subtrees[...] == frontier.subtrees.prefix(upper.subtrees.count)
    }

    /// The saved frontier if it matches the tree head, else one rebuilt from the leaf index.
    private static func frontier(_ directory: LedgerDirectory, leafIndex: File, treeSize: UInt64, root: Digest)
        throws(LedgerError) -> MerkleFrontier
    {
        if FileSystem.kind(directory.frontierPath) == .file {
            let saved = try File.openForReading(directory.frontierPath)
            let bytes = try saved.read(at: 0, count: 8 + 32 * 64)
            let restored = try? ByteReader.reading(bytes) { (reader) throws(DecodeError) -> MerkleFrontier? in
                let size = try reader.read(UInt64.self, "frontier")
                var subtrees: [Digest] = []
                while reader.remaining >= 32 { subtrees.append(try reader.readDigest("frontier")) }
                return MerkleFrontier(size: size, subtrees: subtrees)
            }
            if let restored = restored ?? nil, restored.size == treeSize, restored.root == root { return restored }
        }
        var frontier = MerkleFrontier()
        var offset: UInt64 = 0
        let end = treeSize * 32
        while offset < end {
            let chunk = try leafIndex.read(at: offset, count: Int(min(end - offset, 1 << 22)))
            guard !chunk.isEmpty else { break }
            chunk.withUnsafeBytes { raw in
                var at = 0
                while at + 32 <= raw.count {
                    frontier.append(Digest(unsafeUninitializedReading: UnsafeRawBufferPointer(rebasing: raw[at...])))
                    at += 32
                }
            }
            offset += UInt64(chunk.count)
        }
        return frontier
    }
}

/// Read-only access to a ledger directory, the file store's `BlockSource`. Takes no lock: while a writer
/// appends, a reader sees a consistent prefix of complete blocks.
public struct LedgerReader: BlockSource {
    public let directory: LedgerDirectory
    /// The ledger's identity, from the genesis block.
    public let genesis: Genesis
    let segmentCount: Int
    /// The genesis authority, which tells damage from a torn tail (nil if its key does not import).
    let authority: ChainAuthority?

    /// Opens `path` for reading; fails clearly if it is not a ledger.
    public init(path: String) throws(LedgerError) {
        directory = LedgerDirectory(path)
        segmentCount = try directory.segmentCount()
        var scanner = LogScanner(directory: directory, segmentCount: segmentCount, authority: nil)
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
    public func forEachBlock(from first: UInt64 = 0, _ body: (_ raw: [UInt8], _ location: BlockLocation) throws -> Void)
        throws -> TornTail?
    {
        var scanner = try scanner(from: first)
        while let (bytes, location) = try scanner.next() {
            if scanner.height - 1 >= first { try body(bytes, location) }
        }
        return scanner.tail
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

    private func decode(_ bytes: [UInt8], at location: BlockLocation, height: UInt64, _ scanner: LogScanner)
        throws(LedgerError) -> EncodedBlock
    {
        do { return try EncodedBlock(decoding: bytes) } catch {
            throw scanner.damage(error.message, at: location.offset, height: height)
        }
    }

    /// The bytes of the complete block at `height`, or `nil` if the log does not hold it. Reads only up
    /// to that block.
    public func block(at height: UInt64) throws(LedgerError) -> [UInt8]? {
        var scanner = try scanner(from: height)
        while let (bytes, _) = try scanner.next() {
            if scanner.height - 1 == height { return bytes }
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
    public func indexedHeader(at height: UInt64) throws(LedgerError) -> (header: BlockHeader, location: BlockLocation)? {
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

/// `nodes.idx` (FORMAT.md §5.9): record g is the head of leaves [1024·g, 1024·g + 1024), written once the
/// group is complete, so a proof hashes at most about a thousand records or leaves per level it spans
/// instead of loading every leaf.
enum NodeIndex {
    /// Leaves per record.
    static let groupSize: UInt64 = 1024

    /// The head of the group that `leaf` completes, from the frontier just before it. That frontier's size
    /// ends in ten one bits, so its last ten subtrees cover the group's first 1023 leaves in runs of 512,
    /// 256, …, 1: folding `leaf` into them takes the same ten hashes `MerkleFrontier.append` makes.
    static func group(completedBy leaf: Digest, after frontier: MerkleFrontier) -> Digest {
        var node = leaf
        for subtree in frontier.subtrees.suffix(groupSize.trailingZeroBitCount).reversed() {
            node = Merkle.nodeHash(subtree, node)
        }
        return node
    }

    /// The whole 32-byte digests in `bytes`, in order.
    static func digests(_ bytes: [UInt8]) -> [Digest] {
        var digests: [Digest] = []
        digests.reserveCapacity(bytes.count / 32)
        bytes.withUnsafeBytes { raw in
            var at = 0
            while at + 32 <= raw.count {
                digests.append(Digest(unsafeUninitializedReading: UnsafeRawBufferPointer(rebasing: raw[at...])))
                at += 32
            }
        }
        return digests
    }
}

/// Subtree heads of a ledger's first `size` leaves, read from the derived indexes: a run of complete,
/// aligned groups from nodes.idx, anything else from leaves.idx, each read with one `pread` of only the
/// records it needs (at most 1024). The indexes may be stale or damaged, so whoever builds a proof from
/// these heads checks it against a signed root.
struct IndexedTree {
    /// Leaves in the tree.
    let size: UInt64
    private let leaves: File
    private let nodes: File?
    /// Complete groups below `size` that nodes.idx holds.
    private let groups: UInt64

    /// `nil` when leaves.idx is missing or holds fewer than `size` leaves.
    init?(directory: LedgerDirectory, size: UInt64) throws(LedgerError) {
        guard FileSystem.kind(directory.leafIndexPath) == .file else { return nil }
        leaves = try File.openForReading(directory.leafIndexPath)
        guard try leaves.size() / 32 >= size else { return nil }
        self.size = size
        if FileSystem.kind(directory.nodesIndexPath) == .file {
            let nodes = try File.openForReading(directory.nodesIndexPath)
            self.nodes = nodes
            groups = min(try nodes.size() / 32, size / NodeIndex.groupSize)
        } else {
            nodes = nil
            groups = 0
        }
    }

    /// The head (MTH) of leaves `range`, which must lie within the first `size`.
    func root(_ range: Range<UInt64>) throws(LedgerError) -> Digest {
        guard range.upperBound <= size else {
            throw LedgerError.invalidRequest("leaves \(range) are not in a tree of \(size) leaves")
        }
        let group = NodeIndex.groupSize
        let count = UInt64(range.count)
        if let nodes, range.lowerBound % group == 0, count % group == 0, count <= group * group,
            range.upperBound / group <= groups
        {
            // Above the groups the tree splits exactly as it does over the group heads taken as leaves.
            let records = try IndexedTree.digests(nodes, from: range.lowerBound / group, count: count / group)
            return Merkle.root(0..<count / group) { records[Int($0)] }
        }
        if count <= group {
            let leaves = try IndexedTree.digests(leaves, from: range.lowerBound, count: count)
            return Merkle.root(0..<count) { leaves[Int($0)] }
        }
        let split = range.lowerBound + Merkle.largestPowerOfTwo(below: count)
        return Merkle.nodeHash(try root(range.lowerBound..<split), try root(split..<range.upperBound))
    }

    /// `count` digests from record `first` of `file`; fails if the file ends first (it was cut meanwhile).
    private static func digests(_ file: File, from first: UInt64, count: UInt64) throws(LedgerError) -> [Digest] {
        let bytes = try file.read(at: first * 32, count: Int(count * 32))
        guard bytes.count == Int(count * 32) else {
            throw LedgerError.io("\(file.path) ended before record \(first + count)")
        }
        return NodeIndex.digests(bytes)
    }
}
