import Ledger
import LedgerCrypto

/// `nodes.idx` (FORMAT.md §5.9): record g is the head of leaves [1024·g, 1024·g + 1024), written once the
/// group is complete, so a proof hashes at most about a thousand records or leaves per level it spans
/// instead of loading every leaf.
enum NodeIndex {
    /// Leaves per record.
    static let groupSize = GroupedTree.groupSize

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
        return try GroupedTree.root(
            range, groups: groups,
            heads: { (groups) throws(LedgerError) in
                // `groups` is 0 without nodes.idx, so heads are asked for only with it.
                guard let nodes else { throw LedgerError.io("nodes.idx is gone") }
                return try IndexedTree.digests(nodes, from: groups.lowerBound, count: UInt64(groups.count))
            },
            leaves: { (range) throws(LedgerError) in
                try IndexedTree.digests(leaves, from: range.lowerBound, count: UInt64(range.count))
            })
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
