import Ledger
import LedgerCrypto

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

    init(_ reader: FileBlockSource, io: any FileIO, log: (String) -> Void, rebuild: Bool = false) throws(LedgerError) {
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
    static func header(
        _ directory: LedgerDirectory, at location: BlockLocation, segmentCount: Int
    )
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
        guard frame.count == Int(location.length), Frame.isIntact(frame) else { return nil }
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
    private static func nodeIndex(
        _ nodes: File, groups: UInt64, agreesWith frontier: MerkleFrontier
    )
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
    private static func frontier(
        _ directory: LedgerDirectory, leafIndex: File, treeSize: UInt64, root: Digest
    )
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
