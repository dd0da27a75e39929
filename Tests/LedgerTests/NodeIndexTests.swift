import FileStore
import Foundation
import Ledger
import LedgerCrypto
import LedgerTestSupport
import TestSupport
import Testing

/// `nodes.idx` (FORMAT.md §5.9) and the proofs `FileBlockSource` builds from it: they equal `MerkleTree`'s for
/// every shape of tree, the writer keeps the file in step with the leaves through reopens and crashes, and a
/// stale or damaged file never yields a wrong proof (the reader falls back) and is repaired on the next open.
@Suite struct NodeIndexTests {
    // MARK: Fixture

    /// Events per block: blocks inside one 1024-leaf group, spanning groups, completing several at once.
    static let blockSizes = [1, 5, 300, 718, 1024, 2000, 3, 1021, 900, 7]

    /// Tree sizes around group and power-of-two boundaries, below one group and up to the whole ledger.
    static let sizes: [UInt64] = [
        1, 2, 3, 7, 1000, 1023, 1024, 1025, 1500, 2047, 2048, 2049, 3071, 3072, 4095, 4096, 4097, 5000, 5980,
    ]

    /// A ledger of `blockSizes` blocks, reopened by a new writer halfway; returns every leaf hash.
    static func ledger(at path: String) throws -> [Digest] {
        var ledger = try Fixture.ledger(at: path, blocks: 0)
        var first = 0
        for (number, count) in blockSizes.enumerated() {
            if number == blockSizes.count / 2 {
                ledger.close()
                ledger = try FileBlockStore.open(at: path, log: { _ in })
            }
            try ledger.append(Fixture.events(count, from: first), timestamp: Fixture.epoch + Int64(number + 1) * 1000)
            first += count
        }
        ledger.close()
        let leaves = try GoldenVectorTests.leafHashes(path)
        #expect(leaves.count == 1 + blockSizes.reduce(0, +))
        return leaves
    }

    /// nodes.idx as it must be: the head of every complete group of `leaves`.
    static func expectedNodes(_ leaves: [Digest]) -> [UInt8] {
        let tree = MerkleTree(leaves: leaves)
        var bytes: [UInt8] = []
        for group in 0..<UInt64(leaves.count / 1024) { bytes += tree.root(group * 1024..<group * 1024 + 1024).bytes }
        return bytes
    }

    /// Leaf indices worth proving in a tree of `size`: both ends, group edges and the middle.
    static func indices(_ size: UInt64) -> [UInt64] {
        Set([0, 1, 511, 1023, 1024, 2047, 2048, size / 2, max(size, 2) - 2, size - 1, 4097]).filter { $0 < size }
            .sorted()
    }

    /// Every proof the reader gives for `sizes` equals the one `MerkleTree` gives over `leaves`.
    static func expectProofsMatch(
        _ path: String, _ leaves: [Digest], sizes: [UInt64] = sizes, _ comment: String = ""
    ) throws {
        let reader = try FileBlockSource(path: path)
        let tree = MerkleTree(leaves: leaves)
        for size in sizes {
            let root = tree.root(size: size)
            for index in indices(size) {
                let proof = try reader.inclusionProof(index: index, treeSize: size, root: root)
                #expect(proof == tree.inclusionProof(index: index, size: size), "\(comment) leaf \(index) of \(size)")
            }
            for old in sizes where old <= size {
                let proof = try reader.consistencyProof(oldSize: old, newSize: size, root: root)
                #expect(proof == tree.consistencyProof(oldSize: old, newSize: size), "\(comment) \(old) to \(size)")
            }
        }
    }

    // MARK: Proofs

    /// Inclusion and consistency proofs from the indexes equal `MerkleTree`'s for sizes below one group,
    /// at and around group and power-of-two edges, and over several blocks.
    @Test func proofsEqualMerkleTree() throws {
        let temp = TemporaryDirectory()
        let path = temp.child("ledger")
        let leaves = try NodeIndexTests.ledger(at: path)
        #expect(Bytes.read(LedgerDirectory(path).nodesIndexPath) == NodeIndexTests.expectedNodes(leaves))
        try NodeIndexTests.expectProofsMatch(path, leaves)
    }

    /// The proofs come from the indexes alone: with the log cut short (so leaf hashes can no longer be
    /// recomputed) and a leaf the proofs do not need damaged in leaves.idx, they are still right.
    @Test func proofsReadOnlyWhatTheyNeed() throws {
        let temp = TemporaryDirectory()
        let path = temp.child("ledger")
        let directory = LedgerDirectory(path)
        let leaves = try NodeIndexTests.ledger(at: path)
        let last = try #require(try blockLocations(path).last)
        Bytes.truncate(directory.segmentPath(last.segment), to: Int(last.offset))
        var bytes = Bytes.read(directory.leafIndexPath)
        bytes[100 * 32] ^= 0x01  // leaf 100: inside group 0, whose head comes from nodes.idx
        Bytes.write(directory.leafIndexPath, bytes)

        let reader = try FileBlockSource(path: path)
        let tree = MerkleTree(leaves: leaves)
        let size = UInt64(leaves.count)
        for index: UInt64 in [1024, 3000, size - 1] {
            let proof = try reader.inclusionProof(index: index, treeSize: size, root: tree.root(size: size))
            #expect(proof == tree.inclusionProof(index: index, size: size))
        }
        #expect(
            try reader.consistencyProof(oldSize: 2048, newSize: size, root: tree.root(size: size))
                == tree.consistencyProof(oldSize: 2048, newSize: size))
        // Leaf 100's own proof needs the damaged leaf: it does not verify, and the log is too short to recompute.
        let error = ledgerError {
            _ = try reader.inclusionProof(index: 100, treeSize: size, root: tree.root(size: size))
        }
        #expect(error == .invalidRequest("the ledger holds \(size - 7) events, not \(size)"))
    }

    /// Requests outside the tree are refused with an error, never a trap.
    @Test func invalidRequestsAreRefused() throws {
        let temp = TemporaryDirectory()
        let path = temp.child("ledger")
        try Fixture.ledger(at: path, blocks: 2).close()
        let reader = try FileBlockSource(path: path)
        let root = try reader.lastBlock().treeRoot
        let refusals: [(String, () throws -> Void)] = [
            ("index past the tree", { _ = try reader.inclusionProof(index: 7, treeSize: 7, root: root) }),
            ("empty tree", { _ = try reader.inclusionProof(index: 0, treeSize: 0, root: root) }),
            ("tree past the ledger", { _ = try reader.inclusionProof(index: 0, treeSize: 9, root: root) }),
            ("consistency from 0", { _ = try reader.consistencyProof(oldSize: 0, newSize: 7, root: root) }),
            ("consistency backwards", { _ = try reader.consistencyProof(oldSize: 7, newSize: 6, root: root) }),
            ("consistency past the ledger", { _ = try reader.consistencyProof(oldSize: 3, newSize: 9, root: root) }),
        ]
        for (name, request) in refusals {
            guard case .invalidRequest = ledgerError(request) else { Issue.record("\(name) was not refused"); continue }
        }
        #expect(try reader.consistencyProof(oldSize: 7, newSize: 7, root: root) == [])
    }

    // MARK: Damage and recovery

    /// A flipped byte, a cut record, garbage past the leaves, a file of another ledger's size or no file at
    /// all: proofs stay right (the reader falls back), and the next writer open restores the file.
    @Test func damagedNodeIndexFallsBackAndIsRepaired() throws {
        let temp = TemporaryDirectory()
        let original = temp.child("original")
        let leaves = try NodeIndexTests.ledger(at: original)
        let expected = NodeIndexTests.expectedNodes(leaves)
        let damages: [(String, (String) -> Void)] = [
            (
                "flipped byte",
                { path in
                    var bytes = Bytes.read(path)
                    bytes[32 * 2 + 17] ^= 0x40
                    Bytes.write(path, bytes)
                }
            ),
            (
                "first record flipped",
                { path in
                    var bytes = Bytes.read(path)
                    bytes[0] ^= 0x01
                    Bytes.write(path, bytes)
                }
            ),
            ("cut mid-record", { Bytes.truncate($0, to: 3 * 32 + 11) }),
            ("emptied", { Bytes.truncate($0, to: 0) }),
            (
                "longer than the leaves",
                { Bytes.write($0, Bytes.read($0) + [UInt8](repeating: 0xee, count: 32 * 40 + 3)) }
            ),
            ("removed", { try? FileManager.default.removeItem(atPath: $0) }),
        ]
        for (name, damage) in damages {
            let path = temp.child(name.replacingOccurrences(of: " ", with: "-"))
            try copyLedger(original, to: path)
            let nodes = LedgerDirectory(path).nodesIndexPath
            damage(nodes)
            try NodeIndexTests.expectProofsMatch(path, leaves, sizes: [5, 1024, 2049, 4096, 5980], name)
            let log = LogLines()
            try FileBlockStore.open(at: path, log: log.append).close()
            #expect(Bytes.read(nodes) == expected, "\(name)")
            #expect(log.lines.isEmpty, "\(name)")
        }
    }

    /// Damage in both leaves.idx and nodes.idx: the nodes rehashed from the leaves still disagree with the
    /// tree head, so the writer rebuilds every index from the log.
    @Test func damagedLeavesAndNodesAreRebuiltFromTheLog() throws {
        let temp = TemporaryDirectory()
        let path = temp.child("ledger")
        let directory = LedgerDirectory(path)
        let leaves = try NodeIndexTests.ledger(at: path)
        let leafBytes = Bytes.read(directory.leafIndexPath)
        let nodeBytes = Bytes.read(directory.nodesIndexPath)
        var damaged = leafBytes
        damaged[1500 * 32 + 3] ^= 0x80
        Bytes.write(directory.leafIndexPath, damaged)
        var nodes = nodeBytes
        nodes[32 + 3] ^= 0x80
        Bytes.write(directory.nodesIndexPath, nodes)
        try NodeIndexTests.expectProofsMatch(path, leaves, sizes: [1600, 5980])

        try FileBlockStore.open(at: path, log: { _ in }).close()
        #expect(SHA256.hash(Bytes.read(directory.leafIndexPath)) == SHA256.hash(leafBytes))
        #expect(Bytes.read(directory.nodesIndexPath) == nodeBytes)
    }

    /// A crash that lost the end of leaves.idx (nodes.idx ahead of it): reopening cuts nodes.idx back
    /// with the leaves, catches both up from the log, and appends keep them in step.
    @Test func crashWithShortLeafIndexKeepsNodesConsistent() throws {
        let temp = TemporaryDirectory()
        let original = temp.child("original")
        let leaves = try NodeIndexTests.ledger(at: original)
        for cut in [0, 5, 1023 * 32, 1024 * 32 + 7, 2500 * 32, 4096 * 32, leaves.count * 32 - 32] {
            let path = temp.child("cut-\(cut)")
            let directory = LedgerDirectory(path)
            try copyLedger(original, to: path)
            Bytes.truncate(directory.leafIndexPath, to: cut)
            let ledger = try FileBlockStore.open(at: path, log: { _ in })
            #expect(Bytes.read(directory.nodesIndexPath) == NodeIndexTests.expectedNodes(leaves), "cut at \(cut)")
            try ledger.append(Fixture.events(2100, from: 10_000), timestamp: Fixture.epoch + 60_000)
            ledger.close()
            let grown = try GoldenVectorTests.leafHashes(path)
            #expect(Bytes.read(directory.nodesIndexPath) == NodeIndexTests.expectedNodes(grown), "cut at \(cut)")
            #expect(Bytes.read(directory.leafIndexPath).count == grown.count * 32, "cut at \(cut)")
        }
    }

    /// A nodes.idx cut short behind the writer's back: the next open catches it up; cut again while the
    /// writer runs (its next records land after a hole of zeros), proofs stay right and the next open repairs it.
    @Test func staleNodeIndexIsCaughtUp() throws {
        let temp = TemporaryDirectory()
        let path = temp.child("ledger")
        let directory = LedgerDirectory(path)
        let leaves = try NodeIndexTests.ledger(at: path)
        Bytes.truncate(directory.nodesIndexPath, to: 2 * 32)
        let ledger = try FileBlockStore.open(at: path, log: { _ in })
        #expect(Bytes.read(directory.nodesIndexPath) == NodeIndexTests.expectedNodes(leaves))
        Bytes.truncate(directory.nodesIndexPath, to: 32)
        try ledger.append(Fixture.events(1500, from: 20_000), timestamp: Fixture.epoch + 60_000)
        let grown = try GoldenVectorTests.leafHashes(path)
        try NodeIndexTests.expectProofsMatch(path, grown, sizes: [3000, 7480])
        ledger.close()
        try FileBlockStore.open(at: path, log: { _ in }).close()
        #expect(Bytes.read(directory.nodesIndexPath) == NodeIndexTests.expectedNodes(grown))
    }
}
