import Ledger
import LedgerCrypto
import TestSupport
import Testing

/// Properties of `Merkle` and `MerkleFrontier` on every tree size 1...300: heads agree with an independent
/// RFC 9162 reference, honest proofs verify, and every mutation of a proof, index, size or head fails (a size
/// changed while the head is kept is accepted exactly when the proof's shape is identical: see below).
@Suite struct MerklePropertyTests {
    // MARK: Fixture

    /// Largest tree size exercised.
    static let maxSize: UInt64 = 300

    /// Leaf hashes of the 8-byte big-endian indices 0...maxSize (one spare leaf, for size maxSize + 1).
    static let leaves: [Digest] = (0...maxSize).map { index in
        withUnsafeBytes(of: index.bigEndian) { Merkle.leafHash($0) }
    }

    /// `heads[k]`: the tree head over the first k leaves, k in 0...maxSize + 1, from the reference below.
    static let heads: [Digest] = (0...Int(maxSize) + 1).map { referenceRoot(leaves[0..<$0]) }

    /// Tree sizes the proof tests run on.
    static let sizes = Array(1...Int(maxSize))

    /// Leaf hash by index, as `Merkle`'s generators take it.
    static func leaf(_ index: UInt64) -> Digest { leaves[Int(index)] }

    // MARK: Independent reference (RFC 9162 §2.1, written from the text, using SHA-256 directly)

    /// Largest power of two strictly below `n` (n ≥ 2), by doubling.
    static func splitPoint(_ n: Int) -> Int {
        var k = 1
        while k * 2 < n { k *= 2 }
        return k
    }

    /// MTH(D[n]) computed straight from the definition.
    static func referenceRoot(_ leaves: ArraySlice<Digest>) -> Digest {
        switch leaves.count {
        case 0: return SHA256.hash([UInt8]())
        case 1: return leaves[leaves.startIndex]
        default:
            let split = leaves.startIndex + splitPoint(leaves.count)
            let left = referenceRoot(leaves[..<split])
            let right = referenceRoot(leaves[split...])
            return SHA256.hash([0x01] + left.bytes + right.bytes)
        }
    }

    /// The shape of PATH(index, D[size]), leaf first: `true` where the sibling is on the left.
    static func pathShape(index: UInt64, size: UInt64) -> [Bool] {
        var shape: [Bool] = []
        var (m, n) = (Int(index), Int(size))
        while n > 1 {
            let k = splitPoint(n)
            if m < k {
                shape.append(false)
                n = k
            } else {
                shape.append(true)
                m -= k
                n -= k
            }
        }
        return shape.reversed()
    }

    /// The shape of PROOF(m, D[n]) for 0 < m < n: whether the old head is the implicit first element (m a
    /// power of two), and for each sibling, leaf side first, `true` where it is a left one (hashed into both
    /// heads). For m == n it is `(true, [])`, the empty proof.
    static func consistencyShape(oldSize: UInt64, newSize: UInt64) -> (implicitOldRoot: Bool, leftSiblings: [Bool]) {
        var (m, n) = (Int(oldSize), Int(newSize))
        var complete = true
        var shape: [Bool] = []
        while m != n {
            let k = splitPoint(n)
            if m <= k {
                shape.append(false)
                n = k
            } else {
                shape.append(true)
                m -= k
                n -= k
                complete = false
            }
        }
        return (complete, shape.reversed())
    }

    // MARK: Deterministic randomness and mutations

    /// SplitMix64: a tiny seeded generator so every sample and mutation reproduces exactly.
    struct SplitMix64 {
        var state: UInt64
        init(seed: UInt64) { state = seed }
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        /// A value in `range` (modulo bias is irrelevant here).
        mutating func next(in range: ClosedRange<UInt64>) -> UInt64 {
            range.lowerBound + next() % (range.upperBound - range.lowerBound + 1)
        }
        /// 32 arbitrary bytes.
        mutating func digest() -> Digest {
            Digest(bytes: (0..<4).flatMap { _ in withUnsafeBytes(of: next()) { Array($0) } })!
        }
    }

    /// `digest` with one bit flipped.
    static func flipping(_ digest: Digest, bit: Int) -> Digest {
        var bytes = digest.bytes
        bytes[bit / 8] ^= 1 << (bit % 8)
        return Digest(bytes: bytes)!
    }

    /// Sorted, distinct samples from 0..<n or 1...n: the fixed points plus three pseudo-random ones.
    static func samples(_ fixed: [UInt64], in range: ClosedRange<UInt64>, rng: inout SplitMix64) -> [UInt64] {
        var picked = Set(fixed.filter(range.contains))
        for _ in 0..<3 { picked.insert(rng.next(in: range)) }
        return picked.sorted()
    }

    // MARK: Tree heads

    /// `Merkle.root`, `MerkleFrontier` and the reference agree on every size 0...301, and the frontier
    /// keeps one subtree per set bit of its size and survives a save/restore.
    @Test func headsAgreeAtEverySize() throws {
        var frontier = MerkleFrontier()
        #expect(frontier.root == Merkle.emptyRoot)
        for size in 0...Self.maxSize + 1 {
            let head = Self.heads[Int(size)]
            #expect(Merkle.root(0..<size, leaf: Self.leaf) == head, "Merkle.root, size \(size)")
            #expect(frontier.root == head, "MerkleFrontier, size \(size)")
            #expect(frontier.size == size)
            #expect(frontier.subtrees.count == size.nonzeroBitCount)
            let restored = try #require(MerkleFrontier(size: frontier.size, subtrees: frontier.subtrees))
            #expect(restored == frontier)
            if size <= Self.maxSize { frontier.append(Self.leaf(size)) }
        }
    }

    /// A restored frontier continues exactly like the original; parts that do not match the size are refused.
    @Test func frontierRestore() throws {
        var original = MerkleFrontier()
        for index in 0..<UInt64(77) { original.append(Self.leaf(index)) }
        var restored = try #require(MerkleFrontier(size: original.size, subtrees: original.subtrees))
        for index in UInt64(77)..<100 {
            original.append(Self.leaf(index))
            restored.append(Self.leaf(index))
            #expect(restored.root == original.root)
        }
        #expect(restored.root == Self.heads[100])
        #expect(MerkleFrontier(size: 77, subtrees: Array(original.subtrees.prefix(2))) == nil)
        #expect(MerkleFrontier(size: 0, subtrees: [Self.leaf(0)]) == nil)
        #expect(MerkleFrontier(size: 4, subtrees: []) == nil)
        #expect(MerkleFrontier(size: 0, subtrees: []) == MerkleFrontier())
    }

    // MARK: Inclusion proofs

    /// A writer's proofs for a block, from the frontier before it and the block's leaves alone, are the proofs
    /// a whole tree gives, for every split of 0...130 leaves into what came before and the block.
    @Test func blockProofsFromTheFrontierMatchTheWholeTree() throws {
        for end in UInt64(1)...130 {
            let tree = MerkleTree(leaves: Array(Self.leaves[0..<Int(end)]))
            var frontier = MerkleFrontier()
            for start in UInt64(0)..<end {
                let proofs = frontier.inclusionProofs(appending: Array(Self.leaves[Int(start)..<Int(end)]))
                for (offset, proof) in proofs.enumerated() {
                    let index = start + UInt64(offset)
                    #expect(
                        proof == tree.inclusionProof(index: index, size: end), "leaf \(index), block \(start)..<\(end)")
                }
                frontier.append(Self.leaf(start))
            }
        }
    }

    /// For a tree of n leaves, sampled inclusion proofs verify, and every mutation of them fails.
    @Test(arguments: sizes) func inclusionProofs(size: Int) throws {
        let n = UInt64(size)
        let root = Self.heads[size]
        var rng = SplitMix64(seed: 0x1AC1_0000 &+ n)
        for i in Self.samples([0, n - 1, n / 2], in: 0...n - 1, rng: &rng) {
            let leaf = Self.leaf(i)
            let proof = try Merkle.inclusionProof(index: i, size: n, leaf: Self.leaf)
            let context = "n=\(n) i=\(i)"
            func verifies(
                leaf: Digest? = nil, index: UInt64? = nil, size: UInt64? = nil, proof mutated: [Digest]? = nil,
                root claimed: Digest? = nil
            ) -> Bool {
                Merkle.verifyInclusion(
                    leafHash: leaf ?? Self.leaf(i), index: index ?? i, size: size ?? n, proof: mutated ?? proof,
                    root: claimed ?? root)
            }

            #expect(proof.count == Self.pathShape(index: i, size: n).count, "\(context): proof length")
            #expect(verifies(), "\(context): honest proof")

            // Each proof hash changed in turn.
            for k in proof.indices {
                var mutated = proof
                mutated[k] = Self.flipping(proof[k], bit: Int(rng.next() % 256))
                #expect(!verifies(proof: mutated), "\(context): bit flipped in proof[\(k)]")
            }
            // Another index (neighbours, sibling, out of range).
            for j in Set([i &+ 1, i &- 1, i ^ 1, n, n + 1, UInt64.max]).sorted() where j != i {
                #expect(!verifies(index: j), "\(context): index \(j)")
            }
            // Another size, against that size's genuine head.
            #expect(!verifies(size: n + 1, root: Self.heads[size + 1]), "\(context): size n+1")
            #expect(!verifies(size: n - 1, root: Self.heads[size - 1]), "\(context): size n-1")
            // Another size with the head of n unchanged: accepted exactly when the audit path has the same
            // shape (e.g. leaf 0 of 3 vs of 4), since the recomputed hash is then literally the same; a
            // verifier must take size and head together from one signed tree head.
            for other in [n - 1, n + 1] {
                let sameShape = i < other && Self.pathShape(index: i, size: other) == Self.pathShape(index: i, size: n)
                #expect(verifies(size: other) == sameShape, "\(context): size \(other) with the head of n")
            }
            // An element dropped, appended or prepended.
            for k in proof.indices {
                var mutated = proof
                mutated.remove(at: k)
                #expect(!verifies(proof: mutated), "\(context): proof[\(k)] dropped")
            }
            #expect(!verifies(proof: proof + [rng.digest()]), "\(context): element appended")
            #expect(!verifies(proof: proof + [root]), "\(context): root appended")
            #expect(!verifies(proof: [rng.digest()] + proof), "\(context): element prepended")
            // The wrong head or leaf.
            #expect(!verifies(root: Self.flipping(root, bit: Int(rng.next() % 256))), "\(context): root bit flipped")
            #expect(!verifies(root: Self.heads[size + 1]), "\(context): head of n+1")
            #expect(!verifies(root: Self.heads[size - 1]), "\(context): head of n-1")
            #expect(!verifies(leaf: Self.leaf(n)), "\(context): leaf not in the tree")
            #expect(!verifies(leaf: Self.flipping(leaf, bit: 0)), "\(context): leaf bit flipped")
        }
    }

    // MARK: Consistency proofs

    /// For a tree of n leaves, sampled consistency proofs from m ≤ n verify, and every mutation of them fails.
    @Test(arguments: sizes) func consistencyProofs(size: Int) throws {
        let n = UInt64(size)
        var rng = SplitMix64(seed: 0xC0_5157_0000 &+ n)
        let powerOfTwo = UInt64(1) << (63 - n.leadingZeroBitCount)
        for m in Self.samples([1, n, n / 2, n - 1, powerOfTwo], in: 1...n, rng: &rng) {
            let proof = try Merkle.consistencyProof(oldSize: m, newSize: n, leaf: Self.leaf)
            let context = "m=\(m) n=\(n)"
            func verifies(
                oldSize: UInt64? = nil, newSize: UInt64? = nil, proof mutated: [Digest]? = nil,
                oldRoot: Digest? = nil, newRoot: Digest? = nil
            ) -> Bool {
                Merkle.verifyConsistency(
                    oldSize: oldSize ?? m, newSize: newSize ?? n, proof: mutated ?? proof,
                    oldRoot: oldRoot ?? Self.heads[Int(m)], newRoot: newRoot ?? Self.heads[Int(n)])
            }

            #expect(verifies(), "\(context): honest proof")
            #expect(proof.isEmpty == (m == n), "\(context): proof is empty exactly when the sizes are equal")

            // Each proof hash changed in turn.
            for k in proof.indices {
                var mutated = proof
                mutated[k] = Self.flipping(proof[k], bit: Int(rng.next() % 256))
                #expect(!verifies(proof: mutated), "\(context): bit flipped in proof[\(k)]")
            }
            // Another size, against that size's genuine head (old size 0 is always refused).
            #expect(!verifies(oldSize: m + 1, oldRoot: Self.heads[Int(m) + 1]), "\(context): old size m+1")
            #expect(!verifies(oldSize: m - 1, oldRoot: Self.heads[Int(m) - 1]), "\(context): old size m-1")
            #expect(!verifies(newSize: n + 1, newRoot: Self.heads[size + 1]), "\(context): new size n+1")
            #expect(!verifies(newSize: n - 1, newRoot: Self.heads[size - 1]), "\(context): new size n-1")
            // Another size with both heads unchanged: accepted exactly when the proof has the same shape
            // (e.g. 2 to 3 vs 2 to 4), as the recomputed heads are then literally the same hashes.
            let shape = Self.consistencyShape(oldSize: m, newSize: n)
            for (old, new) in [(m - 1, n), (m + 1, n), (m, n - 1), (m, n + 1)] {
                let sameShape = old > 0 && old <= new && Self.consistencyShape(oldSize: old, newSize: new) == shape
                #expect(
                    verifies(oldSize: old, newSize: new) == sameShape,
                    "\(context): sizes \(old), \(new) with the heads of m, n")
            }
            // An element dropped, appended or prepended.
            for k in proof.indices {
                var mutated = proof
                mutated.remove(at: k)
                #expect(!verifies(proof: mutated), "\(context): proof[\(k)] dropped")
            }
            #expect(!verifies(proof: proof + [rng.digest()]), "\(context): element appended")
            #expect(!verifies(proof: proof + [Self.heads[size]]), "\(context): new root appended")
            #expect(!verifies(proof: [rng.digest()] + proof), "\(context): element prepended")
            #expect(!verifies(proof: [Self.heads[Int(m)]] + proof), "\(context): old root prepended")
            // The wrong heads.
            #expect(!verifies(oldRoot: Self.flipping(Self.heads[Int(m)], bit: 7)), "\(context): old root bit flipped")
            #expect(!verifies(newRoot: Self.flipping(Self.heads[size], bit: 255)), "\(context): new root bit flipped")
            #expect(!verifies(oldRoot: Self.heads[Int(m) + 1]), "\(context): old root of m+1")
            #expect(!verifies(newRoot: Self.heads[size + 1]), "\(context): new root of n+1")
            if m != n {
                #expect(!verifies(oldRoot: Self.heads[size], newRoot: Self.heads[Int(m)]), "\(context): roots swapped")
            }
        }
        // Nothing is provable from the empty tree, not even with the genuine heads.
        let empty = Merkle.emptyRoot
        #expect(!Merkle.verifyConsistency(oldSize: 0, newSize: n, proof: [], oldRoot: empty, newRoot: Self.heads[size]))
        #expect(!Merkle.verifyConsistency(oldSize: 0, newSize: 0, proof: [], oldRoot: empty, newRoot: empty))
    }
}
