public import LedgerCrypto

/// The RFC 9162 §2.1 Merkle tree over the ledger's events: leaf = SHA-256(0x00 || event bytes),
/// node = SHA-256(0x01 || left || right), empty tree = SHA-256(""). Every event is provable against any
/// later tree head in O(log n) hashes, and any two heads provably consistent.
public enum Merkle {
    /// The head of the empty tree.
    public static let emptyRoot = SHA256.hash([UInt8]())

    /// The byte a leaf's bytes are hashed after.
    static let leafPrefix: UInt8 = 0x00

    /// The leaf hash of one event's bytes.
    public static func leafHash(_ event: UnsafeRawBufferPointer) -> Digest {
        var hasher = SHA256Hasher()
        hasher.update(byte: leafPrefix)
        hasher.update(event)
        return hasher.finalize()
    }

    /// The leaf hash of one event's bytes.
    public static func leafHash(_ event: [UInt8]) -> Digest {
        event.withUnsafeBytes { leafHash($0) }
    }

    /// The hash of an interior node.
    public static func nodeHash(_ left: Digest, _ right: Digest) -> Digest {
        var hasher = SHA256Hasher()
        hasher.update(byte: 0x01)
        hasher.update(left)
        hasher.update(right)
        return hasher.finalize()
    }

    // MARK: Tree heads and proofs from leaf hashes

    /// The tree head over leaves `range` (MTH of RFC 9162 §2.1.1).
    public static func root(_ range: Range<UInt64>, leaf: (UInt64) throws -> Digest) rethrows -> Digest {
        switch range.count {
        case 0: return emptyRoot
        case 1: return try leaf(range.lowerBound)
        default:
            let split = range.lowerBound + largestPowerOfTwo(below: UInt64(range.count))
            return nodeHash(
                try root(range.lowerBound..<split, leaf: leaf), try root(split..<range.upperBound, leaf: leaf))
        }
    }

    /// The audit path for leaf `index` in the tree of `size` leaves (PATH of RFC 9162 §2.1.3.1).
    public static func inclusionProof(
        index: UInt64, size: UInt64, leaf: (UInt64) throws -> Digest
    ) throws
        -> [Digest]
    {
        try inclusionProof(index: index, size: size, subtree: { try root($0, leaf: leaf) })
    }

    /// The audit path, with subtree heads from `subtree` (which may look them up instead of hashing).
    public static func inclusionProof(
        index: UInt64, size: UInt64, subtree: (Range<UInt64>) throws -> Digest
    ) rethrows
        -> [Digest]
    {
        precondition(index < size, "leaf index must be inside the tree")
        var proof: [Digest] = []
        var range = 0..<size
        var index = index
        // Walk down from the root, collecting the sibling subtree at each level, then reverse to leaf-first order.
        while range.count > 1 {
            let k = largestPowerOfTwo(below: UInt64(range.count))
            let split = range.lowerBound + k
            if index < k {
                proof.append(try subtree(split..<range.upperBound))
                range = range.lowerBound..<split
            } else {
                proof.append(try subtree(range.lowerBound..<split))
                range = split..<range.upperBound
                index -= k
            }
        }
        return proof.reversed()
    }

    /// The proof that the tree of `oldSize` leaves is a prefix of the tree of `newSize` leaves
    /// (PROOF of RFC 9162 §2.1.4.1). Requires 0 < oldSize ≤ newSize.
    public static func consistencyProof(
        oldSize: UInt64, newSize: UInt64, leaf: (UInt64) throws -> Digest
    ) throws
        -> [Digest]
    {
        try consistencyProof(oldSize: oldSize, newSize: newSize, subtree: { try root($0, leaf: leaf) })
    }

    /// The consistency proof, with subtree heads from `subtree`.
    public static func consistencyProof(
        oldSize: UInt64, newSize: UInt64, subtree: (Range<UInt64>) throws -> Digest
    ) rethrows -> [Digest] {
        precondition(oldSize > 0 && oldSize <= newSize, "consistency needs 0 < old size <= new size")
        var proof: [Digest] = []
        var range = 0..<newSize
        var m = oldSize
        var complete = true
        while true {
            if m == UInt64(range.count) {
                if !complete { proof.append(try subtree(range)) }
                break
            }
            let k = largestPowerOfTwo(below: UInt64(range.count))
            let split = range.lowerBound + k
            if m <= k {
                proof.append(try subtree(split..<range.upperBound))
                range = range.lowerBound..<split
            } else {
                proof.append(try subtree(range.lowerBound..<split))
                range = split..<range.upperBound
                m -= k
                complete = false
            }
        }
        return proof.reversed()
    }

    // MARK: Verification (RFC 9162 §2.1.3.2 and §2.1.4.2)

    /// Whether `proof` shows the leaf with hash `leafHash` at `index` in the tree of `size` leaves with head `root`.
    public static func verifyInclusion(
        leafHash: Digest, index: UInt64, size: UInt64, proof: [Digest], root: Digest
    ) -> Bool {
        guard index < size else { return false }
        var fn = index
        var sn = size - 1
        var r = leafHash
        for p in proof {
            if sn == 0 { return false }
            if fn & 1 == 1 || fn == sn {
                r = nodeHash(p, r)
                if fn & 1 == 0 {
                    while fn & 1 == 0 && fn != 0 {
                        fn >>= 1
                        sn >>= 1
                    }
                }
            } else {
                r = nodeHash(r, p)
            }
            fn >>= 1
            sn >>= 1
        }
        return sn == 0 && r == root
    }

    /// Whether `proof` shows the tree of `oldSize` leaves with head `oldRoot` is a prefix of the tree of
    /// `newSize` leaves with head `newRoot`. A proof from the empty tree proves nothing and is refused.
    public static func verifyConsistency(
        oldSize: UInt64, newSize: UInt64, proof: [Digest], oldRoot: Digest, newRoot: Digest
    ) -> Bool {
        guard oldSize > 0, oldSize <= newSize else { return false }
        if oldSize == newSize { return proof.isEmpty && oldRoot == newRoot }
        guard !proof.isEmpty else { return false }
        var path = proof[...]
        // When the old tree is a complete left subtree, its root is the implicit first element.
        if oldSize & (oldSize - 1) == 0 { path = [oldRoot] + proof }
        var fn = oldSize - 1
        var sn = newSize - 1
        while fn & 1 == 1 {
            fn >>= 1
            sn >>= 1
        }
        var fr = path[path.startIndex]
        var sr = fr
        for c in path.dropFirst() {
            if sn == 0 { return false }
            if fn & 1 == 1 || fn == sn {
                fr = nodeHash(c, fr)
                sr = nodeHash(c, sr)
                if fn & 1 == 0 {
                    while fn & 1 == 0 && fn != 0 {
                        fn >>= 1
                        sn >>= 1
                    }
                }
            } else {
                sr = nodeHash(sr, c)
            }
            fn >>= 1
            sn >>= 1
        }
        return fr == oldRoot && sr == newRoot && sn == 0
    }

    /// The largest power of two strictly below `n` (n ≥ 2): where RFC 9162 splits a tree of n leaves.
    package static func largestPowerOfTwo(below n: UInt64) -> UInt64 {
        precondition(n >= 2)
        return 1 << (63 - (n - 1).leadingZeroBitCount)
    }
}

/// The right frontier of a growing tree: one subtree root per set bit of its size, largest first. Appending
/// a leaf and computing the head both take O(log n) hashes, so the appender never rescans the log.
public struct MerkleFrontier: Equatable, Sendable {
    /// Number of leaves so far.
    public private(set) var size: UInt64 = 0
    /// Roots of the perfect subtrees that make up the tree, largest (leftmost) first.
    public private(set) var subtrees: [Digest] = []

    /// The empty tree.
    public init() {}

    /// A frontier restored from storage; `nil` unless `subtrees` has one root per set bit of `size`.
    public init?(size: UInt64, subtrees: [Digest]) {
        guard size.nonzeroBitCount == subtrees.count else { return nil }
        self.size = size
        self.subtrees = subtrees
    }

    /// Adds one leaf hash.
    public mutating func append(_ leaf: Digest) {
        var node = leaf
        var merges = (~size).trailingZeroBitCount  // trailing one bits: equal-sized subtrees to merge
        while merges > 0 {
            node = Merkle.nodeHash(subtrees.removeLast(), node)
            merges -= 1
        }
        subtrees.append(node)
        size += 1
    }

    /// The tree head (MTH) of all leaves so far.
    public var root: Digest {
        guard var result = subtrees.last else { return Merkle.emptyRoot }
        for subtree in subtrees.dropLast().reversed() { result = Merkle.nodeHash(subtree, result) }
        return result
    }
}

/// Every node of a tree kept in memory (2n hashes for n leaves), so any subtree head, inclusion proof or
/// consistency proof costs O(log² n) lookups instead of rehashing leaves. For issuing many receipts at
/// once and for auditing against a whole ledger.
public struct MerkleTree: Sendable {
    /// levels[0] are the leaves; levels[k][j] is the head of leaves [j·2ᵏ, (j+1)·2ᵏ).
    private var levels: [[Digest]]

    /// Builds the tree over `leaves`.
    public init(leaves: [Digest]) {
        levels = [leaves]
        while let below = levels.last, below.count > 1 {
            var level: [Digest] = []
            level.reserveCapacity(below.count / 2)
            var index = 0
            while index + 1 < below.count {
                level.append(Merkle.nodeHash(below[index], below[index + 1]))
                index += 2
            }
            levels.append(level)
        }
    }

    /// Number of leaves.
    public var size: UInt64 { UInt64(levels[0].count) }

    /// The leaf hash at `index`.
    public func leaf(_ index: UInt64) -> Digest { levels[0][Int(index)] }

    /// The head of leaves `range` (MTH), using stored perfect subtrees.
    public func root(_ range: Range<UInt64>) -> Digest {
        let count = UInt64(range.count)
        if count == 0 { return Merkle.emptyRoot }
        if count & (count - 1) == 0, range.lowerBound % count == 0 {
            return levels[count.trailingZeroBitCount][Int(range.lowerBound / count)]
        }
        let split = range.lowerBound + Merkle.largestPowerOfTwo(below: count)
        return Merkle.nodeHash(root(range.lowerBound..<split), root(split..<range.upperBound))
    }

    /// The head of the first `size` leaves.
    public func root(size: UInt64) -> Digest { root(0..<size) }

    /// The inclusion proof of leaf `index` in the tree of the first `size` leaves.
    public func inclusionProof(index: UInt64, size: UInt64) -> [Digest] {
        Merkle.inclusionProof(index: index, size: size, subtree: root)
    }

    /// The consistency proof from the first `oldSize` leaves to the first `newSize`.
    public func consistencyProof(oldSize: UInt64, newSize: UInt64) -> [Digest] {
        Merkle.consistencyProof(oldSize: oldSize, newSize: newSize, subtree: root)
    }
}

extension MerkleFrontier {
    /// The inclusion proof of each of `leaves`, appended after this frontier, in the tree that ends with
    /// them (PATH of RFC 9162 §2.1.3.1 for leaves `size ..< size + leaves.count` of a tree of that many
    /// leaves). Needs no leaf before the block: every subtree a proof names to the left of the block is one
    /// of this frontier's subtrees, or splits into them and the block's leaves. So a writer hands out the
    /// receipts of a block it has just written from memory, without reading the log.
    public func inclusionProofs(appending leaves: [Digest]) -> [[Digest]] {
        let start = size
        let end = size + UInt64(leaves.count)
        let block = MerkleTree(leaves: leaves)
        // The frontier's subtrees by first leaf, with their size.
        var before: [UInt64: (count: UInt64, head: Digest)] = [:]
        var first: UInt64 = 0
        var remaining = subtrees[...]
        for bit in (0..<64).reversed() where size & (1 << UInt64(bit)) != 0 {
            before[first] = (1 << UInt64(bit), remaining.removeFirst())
            first += 1 << UInt64(bit)
        }
        var straddling: [Range<UInt64>: Digest] = [:]
        func head(_ range: Range<UInt64>) -> Digest {
            if range.lowerBound >= start { return block.root((range.lowerBound - start)..<(range.upperBound - start)) }
            if let subtree = before[range.lowerBound], subtree.count == UInt64(range.count) { return subtree.head }
            if let known = straddling[range] { return known }
            precondition(range.upperBound > start, "a subtree left of the block is not one of the frontier's")
            let split = range.lowerBound + Merkle.largestPowerOfTwo(below: UInt64(range.count))
            let node = Merkle.nodeHash(head(range.lowerBound..<split), head(split..<range.upperBound))
            straddling[range] = node
            return node
        }
        return (start..<end).map { Merkle.inclusionProof(index: $0, size: end, subtree: head) }
    }
}
