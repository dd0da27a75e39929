public import LedgerCrypto

/// The Merkle tree over a ledger's leaves read from a store that keeps, beside every leaf hash, the head of
/// each complete, aligned group of `groupSize` leaves (the file store's nodes.idx, PostgreSQL's
/// `vote_merkle_groups`): a subtree head then costs at most about a thousand digests per level it spans,
/// not every leaf. One algorithm for every such store; each store supplies only how it reads a range.
public enum GroupedTree {
    /// Leaves per group.
    public static let groupSize: UInt64 = 1024

    /// The head of the group that `leaf` completes, from the frontier just before it (whose size ends in
    /// ten one bits, so its last ten subtrees cover the group's first 1023 leaves in runs of 512, 256, …, 1:
    /// folding `leaf` into them takes the same ten hashes `MerkleFrontier.append` makes). `nil` if `leaf`
    /// completes no group.
    public static func group(completedBy leaf: Digest, after frontier: MerkleFrontier) -> Digest? {
        guard frontier.size % groupSize == groupSize - 1 else { return nil }
        var node = leaf
        for subtree in frontier.subtrees.suffix(groupSize.trailingZeroBitCount).reversed() {
            node = Merkle.nodeHash(subtree, node)
        }
        return node
    }

    /// The head (MTH) of leaves `range`. `groups` is how many complete groups from the first the store holds
    /// heads for; `heads(range)` reads the heads of groups `range`, `leaves(range)` the hashes of leaves
    /// `range` (each at most `groupSize` at a time), and each must return exactly that many or throw.
    public static func root(
        _ range: Range<UInt64>, groups: UInt64,
        heads: (Range<UInt64>) throws(LedgerError) -> [Digest],
        leaves: (Range<UInt64>) throws(LedgerError) -> [Digest]
    ) throws(LedgerError) -> Digest {
        let count = UInt64(range.count)
        if range.lowerBound % groupSize == 0, count % groupSize == 0, count <= groupSize * groupSize,
            range.upperBound / groupSize <= groups
        {
            // Above the groups the tree splits exactly as it does over the group heads taken as leaves.
            let read = try heads(range.lowerBound / groupSize..<range.upperBound / groupSize)
            return try checked(read, count / groupSize) { Merkle.root(0..<count / groupSize) { read[Int($0)] } }
        }
        if count <= groupSize {
            let read = try leaves(range)
            return try checked(read, count) { Merkle.root(0..<count) { read[Int($0)] } }
        }
        let split = range.lowerBound + Merkle.largestPowerOfTwo(below: count)
        return Merkle.nodeHash(
            try root(range.lowerBound..<split, groups: groups, heads: heads, leaves: leaves),
            try root(split..<range.upperBound, groups: groups, heads: heads, leaves: leaves))
    }

    /// `body()` once `read` holds the `count` digests asked for.
    private static func checked(
        _ read: [Digest], _ count: UInt64, _ body: () -> Digest
    ) throws(LedgerError) -> Digest {
        guard read.count == Int(count) else {
            throw LedgerError.io("the store returned \(read.count) tree hashes where \(count) were asked for")
        }
        return body()
    }
}
