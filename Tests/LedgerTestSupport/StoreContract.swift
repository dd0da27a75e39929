import Foundation
public import Ledger
public import LedgerCrypto
import TestSupport
public import Testing

/// The store contract: what every store behind the storage seam (`BlockAppender` for the writer, `BlockSource`
/// for readers) must do, written once and run against each store: the file and memory stores in
/// `LedgerTests`, PostgreSQL in `PostgresStoreTests`. Each check takes a fresh `StoreHarness`.
public enum StoreContract {
    /// Every block a source holds, from height `first` on, copied out.
    public static func blocks(_ source: any BlockSource, from first: UInt64 = 0) throws -> [Block] {
        var blocks: [Block] = []
        try source.forEachBlock(from: first) { blocks.append($0.block) }
        return blocks
    }

    /// The leaf hashes a ledger holding `events` after its genesis must have, computed without any store.
    public static func expectedLeaves(_ genesis: Genesis, _ events: [LedgerEvent]) -> [Digest] {
        [Merkle.leafHash(genesis.event.encoded)] + events.map { Merkle.leafHash($0.encoded) }
    }

    // MARK: Append and read back

    /// Appended blocks come back whole and in order, with the heights, times, tree sizes, roots and links a
    /// writer must give them; the returned header is the stored one.
    public static func appendAndReadBack(_ harness: StoreHarness) throws {
        let store = harness.store
        #expect(store.head.height == 0)
        #expect(store.head.treeSize == 1)
        #expect(store.head.timestamp == Fixture.epoch)
        // Block sizes 1, 2, 5, 3; the third block's clock went backwards.
        let sizes = [1, 2, 5, 3]
        let times = [Fixture.epoch + 5_000, Fixture.epoch + 9_000, Fixture.epoch + 7_000, Fixture.epoch + 12_000]
        var appended: [[LedgerEvent]] = []
        var headers = [store.head]
        for (index, size) in sizes.enumerated() {
            let events = Fixture.events(size, from: appended.joined().count)
            let header = try store.append(events, timestamp: times[index])
            appended.append(events)
            #expect(header.height == UInt64(index + 1))
            #expect(header.eventCount == UInt32(size))
            #expect(header.treeSize == headers.last!.treeSize + UInt64(size))
            #expect(header.previousHash == headers.last!.hash)
            #expect(header.ledgerID == Fixture.ledgerID)
            #expect(header.timestamp == max(times[index], headers.last!.timestamp))
            #expect(store.head == header)
            #expect(store.headHash == header.hash)
            #expect(store.frontier.size == header.treeSize && store.frontier.root == header.treeRoot)
            #expect(try store.source().lastBlock() == header, "the writer's own reader sees its block")
            headers.append(header)
        }
        #expect(headers[3].timestamp == Fixture.epoch + 9_000, "time never goes backwards")

        let source = try harness.source()
        #expect(source.genesis == store.genesis)
        #expect(source.genesis.name == "contract")
        #expect(try source.lastBlock() == store.head)
        let blocks = try StoreContract.blocks(source)
        #expect(blocks.map(\.header) == headers)
        #expect(Array(blocks.dropFirst().map(\.events)) == appended)
        #expect(blocks[0].events == [store.genesis.event])
        for header in headers { #expect(try source.header(at: header.height) == header) }
        #expect(try source.header(at: 5) == nil)
        #expect(try StoreContract.blocks(source, from: 3).map(\.header) == Array(headers[3...]))
        #expect(try StoreContract.blocks(source, from: 5).isEmpty)
        let allEvents = Array(appended.joined())
        let leaves = StoreContract.expectedLeaves(store.genesis, allEvents)
        #expect(try source.leafHashes(treeSize: store.head.treeSize, root: store.head.treeRoot) == leaves)
        #expect(try source.leafHashes(treeSize: headers[2].treeSize, root: headers[2].treeRoot) == Array(leaves[..<4]))
        for header in headers {
            #expect(Merkle.root(0..<header.treeSize) { leaves[Int($0)] } == header.treeRoot, "root at \(header.height)")
        }
    }

    /// A block by its height and the block holding an event, as a reader of a few blocks (a page of events)
    /// finds them: `block(at:)` gives the block `forEachBlock` gives at that height, `storedBlock(at:)` its
    /// bytes, `height(ofEvent:)` the block whose events include the index; past the head there is nothing.
    public static func blocksByHeightAndEvent(_ harness: StoreHarness) throws {
        var first = 0
        for size in [3, 1, 4, 1, 5] {
            try harness.store.append(Fixture.events(size, from: first), timestamp: Fixture.epoch + Int64(first))
            first += size
        }
        let source = try harness.source()
        var streamed: [EncodedBlock] = []
        try source.forEachBlock(from: 0) { streamed.append($0) }
        #expect(streamed.count == 6)
        for block in streamed {
            let height = block.header.height
            let found = try #require(try source.block(at: height), "block \(height)")
            #expect(found.header == block.header && found.bytes == block.bytes, "block \(height)")
            #expect(try source.storedBlock(at: height) == block.bytes, "stored block \(height)")
            for index in block.header.treeSize - UInt64(block.header.eventCount)..<block.header.treeSize {
                #expect(try source.height(ofEvent: index) == height, "event \(index)")
            }
        }
        #expect(try source.block(at: 6) == nil)
        #expect(try source.storedBlock(at: 6) == nil)
        #expect(try source.height(ofEvent: harness.store.head.treeSize) == nil)
    }

    /// A reader opened once (a server keeps one for as long as it runs) sees every block appended after it was
    /// opened, also those in segments the file store starts later: its last block, a block by height, the
    /// stream, the headers and the proofs reach the writer's head.
    public static func readerKeptOpenSeesLaterBlocks(_ harness: StoreHarness) throws {
        let source = try harness.source()
        var headers = [harness.store.head]
        for index in 0..<12 {
            headers.append(
                try harness.store.append(Fixture.events(2, from: 2 * index), timestamp: Fixture.epoch + Int64(index)))
            let head = headers.last!
            #expect(try source.lastBlock() == head, "block \(index + 1)")
            #expect(try source.block(at: head.height)?.header == head, "block \(index + 1)")
        }
        var streamed: [BlockHeader] = []
        try source.forEachBlock(from: 0) { streamed.append($0.header) }
        #expect(streamed == headers)
        for header in headers { #expect(try source.header(at: header.height) == header) }
        let head = harness.store.head
        let proof = try source.consistencyProof(oldSize: 1, newSize: head.treeSize, root: head.treeRoot)
        #expect(
            Merkle.verifyConsistency(
                oldSize: 1, newSize: head.treeSize, proof: proof, oldRoot: headers[0].treeRoot, newRoot: head.treeRoot))
    }

    /// A batch the format refuses (empty, reserved event type, oversized event) changes nothing.
    public static func refusedAppendWritesNothing(_ harness: StoreHarness) throws {
        try harness.store.append(Fixture.events(2), timestamp: Fixture.epoch + 1)
        let head = harness.store.head
        let refused: [[LedgerEvent]] = [
            [], [LedgerEvent(type: Genesis.eventType, payload: [1])],
            Fixture.events(1)
                + [LedgerEvent(type: 0x0100, payload: Array(repeating: 0, count: LedgerFormat.maxEventSize))],
        ]
        for events in refused {
            #expect(ledgerError { try harness.store.append(events, timestamp: Fixture.epoch + 2) }.isInvalidRequest)
        }
        #expect(harness.store.head == head)
        #expect(try harness.source().lastBlock() == head)
        #expect(try StoreContract.blocks(harness.source()).count == 2)
        #expect(try harness.store.append(Fixture.events(1, from: 2), timestamp: Fixture.epoch + 3).height == 2)
    }

    // MARK: Proofs

    /// Every inclusion proof and every consistency proof between block boundaries is the one the reference
    /// tree (`MerkleTree`, checked against the RFC 9162 vectors in `MerkleVectorTests`) gives, and verifies
    /// against the signed heads.
    public static func proofsMatchTheReferenceTree(_ harness: StoreHarness) throws {
        var events: [LedgerEvent] = []
        var heads = [harness.store.head]
        for size in [1, 3, 4, 1, 8, 2, 13] {
            let batch = Fixture.events(size, from: events.count)
            heads.append(try harness.store.append(batch, timestamp: Fixture.epoch))
            events += batch
        }
        let source = try harness.source()
        let reference = MerkleTree(leaves: StoreContract.expectedLeaves(harness.store.genesis, events))
        for head in heads {
            for index in 0..<head.treeSize {
                let proof = try source.inclusionProof(index: index, treeSize: head.treeSize, root: head.treeRoot)
                #expect(
                    proof == reference.inclusionProof(index: index, size: head.treeSize),
                    "\(index) in \(head.treeSize)")
                #expect(
                    Merkle.verifyInclusion(
                        leafHash: reference.leaf(index), index: index, size: head.treeSize, proof: proof,
                        root: head.treeRoot))
            }
            for old in heads where old.treeSize <= head.treeSize {
                let proof = try source.consistencyProof(
                    oldSize: old.treeSize, newSize: head.treeSize, root: head.treeRoot)
                #expect(proof == reference.consistencyProof(oldSize: old.treeSize, newSize: head.treeSize))
                #expect(
                    Merkle.verifyConsistency(
                        oldSize: old.treeSize, newSize: head.treeSize, proof: proof, oldRoot: old.treeRoot,
                        newRoot: head.treeRoot), "\(old.treeSize) to \(head.treeSize)")
            }
        }
        let head = harness.store.head
        let (size, root) = (head.treeSize, head.treeRoot)
        #expect(ledgerError { _ = try source.inclusionProof(index: size, treeSize: size, root: root) }.isInvalidRequest)
        #expect(ledgerError { _ = try source.consistencyProof(oldSize: 0, newSize: size, root: root) }.isInvalidRequest)
    }

    // MARK: Identity and signatures

    /// Every block carries the ledger id and the genesis authority's signature, as do the notes the writer
    /// signs; a writer holding another key is refused and writes nothing.
    public static func ledgerIDAndSignatures(_ harness: StoreHarness) throws {
        for batch in 0..<3 { try harness.store.append(Fixture.events(2, from: 2 * batch), timestamp: Fixture.epoch) }
        let source = try harness.source()
        let authority = try Ed25519PublicKey(rawRepresentation: source.genesis.authorityKey)
        #expect(source.genesis.authorityKey == Fixture.key.publicKey.rawRepresentation)
        #expect(source.genesis.ledgerID == Fixture.ledgerID)
        let blocks = try StoreContract.blocks(source)
        #expect(blocks.count == 4)
        for block in blocks {
            #expect(block.header.ledgerID == Fixture.ledgerID)
            #expect(
                authority.isValidSignature(block.signature, for: block.header.hash.bytes),
                "block \(block.header.height)")
        }
        #expect(try harness.store.signNote("a note\n", name: "contract").isSigned(by: authority, name: "contract"))
        let other = try Ed25519PrivateKey(seed: Array(repeating: 7, count: 32))
        #expect(ledgerError { _ = try harness.openWriter(other) }.isKeyError)
        #expect(try source.lastBlock() == harness.store.head)
    }

    // MARK: Verification

    /// The chain verifier runs over the store: it accepts the chain as written, counting every block and event
    /// and the bytes the store read, and finds a block whose signature was tampered with, naming its height
    /// and where the store keeps it.
    public static func verifierChecksTheChain(_ harness: StoreHarness) throws {
        for batch in 0..<4 {
            try harness.store.append(Fixture.events(batch + 1, from: 10 * batch), timestamp: Fixture.epoch + 1)
        }
        let source = try harness.source()
        var places: [BlockPlace] = []
        let scan = try source.scanBlocks(from: 0) { _, place in
            places.append(place)
            return true
        }
        var observed: [UInt64] = []
        let report = try ChainVerifier.verify(source, eachBlock: { observed.append($0.header.height) })
        #expect(observed == [0, 1, 2, 3, 4])
        #expect(report.blocks == 5)
        #expect(report.events == 11)
        #expect(report.height == 4)
        #expect(report.headHash == harness.store.headHash)
        #expect(report.treeRoot == harness.store.head.treeRoot)
        #expect(report.bytes == scan.bytes)
        #expect(report.bytes >= places.reduce(0) { $0 + $1.length })
        #expect(report.tornTail == nil)

        harness.store.close()
        try harness.tamper(3, places[3])
        let error = ledgerError { _ = try ChainVerifier.verify(harness.source()) }
        guard case .damaged(let height, let file, let offset, _) = error else {
            Issue.record("expected damage, got \(String(describing: error))")
            return
        }
        #expect(height == 3)
        #expect(file == places[3].file)
        #expect(offset == places[3].offset)
    }

    // MARK: Readers

    /// A reader running beside the writer only ever sees whole blocks that chain from the genesis, whatever
    /// the interleaving: every block has all its events, links to the one before, and its tree root is the
    /// root of the events so far. The reader keeps reading until one read starts after the writer finished
    /// (no time limit), and that read sees every block.
    public static func readersSeeOnlyWholeBlocks(_ harness: StoreHarness) async throws {
        let blockCount: UInt64 = 40
        let source = harness.source
        let writerDone = LogLines()
        let reader = Task.detached { () throws -> (problems: [String], reads: Int, last: UInt64) in
            var problems: [String] = []
            var reads = 0
            while true {
                let finished = !writerDone.lines.isEmpty
                let source = try source()
                let last = try source.lastBlock()
                var frontier = MerkleFrontier()
                var previous = Digest.zero
                var height: UInt64 = 0
                try source.forEachBlock(from: 0) { block in
                    let header = block.header
                    if header.height != height || block.events.count != Int(header.eventCount)
                        || header.previousHash != previous
                    {
                        problems.append("read \(reads): block \(height) is not whole or does not link")
                    }
                    for event in block.events { frontier.append(event.leafHash) }
                    if frontier.root != header.treeRoot { problems.append("read \(reads): block \(height) root") }
                    previous = header.hash
                    height += 1
                }
                if height <= last.height { problems.append("read \(reads): \(height) blocks, last was \(last.height)") }
                reads += 1
                if finished || !problems.isEmpty { return (problems, reads, last.height) }
            }
        }
        for block in 0..<Int(blockCount) {
            try harness.store.append(Fixture.events(block % 7 + 1, from: block * 8), timestamp: Fixture.epoch)
        }
        writerDone.append("done")
        let (problems, reads, last) = try await reader.value
        #expect(problems == [])
        #expect(reads >= 1)
        #expect(last == blockCount, "a read after the writer finished sees its last block")
    }
}

/// One store under test: its open writer, a way to open readers (on any thread), a way to open another writer
/// holding `key`, and a way to damage a stored block, each the store's own.
public struct StoreHarness {
    public let store: any BlockAppender
    public let source: @Sendable () throws -> any BlockSource
    public let openWriter: (_ key: Ed25519PrivateKey) throws -> any BlockAppender
    /// Flips one bit of the signature of block `height`, stored at `place`, as tampering or media damage would.
    public let tamper: (_ height: UInt64, _ place: BlockPlace) throws -> Void
    /// What must live as long as the harness (a temporary directory, a database).
    public let keep: Any?

    public init(
        store: any BlockAppender, source: @escaping @Sendable () throws -> any BlockSource,
        openWriter: @escaping (_ key: Ed25519PrivateKey) throws -> any BlockAppender,
        tamper: @escaping (_ height: UInt64, _ place: BlockPlace) throws -> Void, keep: Any? = nil
    ) {
        self.store = store
        self.source = source
        self.openWriter = openWriter
        self.tamper = tamper
        self.keep = keep
    }
}

/// Fixtures shared by the store tests.
public enum Fixture {
    /// RFC 8032 §7.1 TEST 1 secret key: a published, fixed key, so ledgers built in tests are reproducible.
    public static let seed = Hex.decode("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")!
    public static let key = try! Ed25519PrivateKey(seed: seed)
    public static let ledgerID = LedgerID(bytes: Array(0..<16))!
    /// 2026-01-01T00:00:00Z in ms.
    public static let epoch: Int64 = 1_767_225_600_000

    /// Application events with distinct, recognisable payloads.
    public static func events(_ count: Int, from first: Int = 0, size: Int = 24) -> [LedgerEvent] {
        (first..<first + count).map { index in
            var payload = Array("event \(index) ".utf8)
            while payload.count < size { payload.append(UInt8(truncatingIfNeeded: index &* 31 &+ payload.count)) }
            return LedgerEvent(type: 0x0100, payload: payload)
        }
    }
}

/// Collects log lines for assertions.
public final class LogLines: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: [String] = []

    public init() {}

    public var lines: [String] { lock.withLock { stored } }

    public func append(_ line: String) { lock.withLock { stored.append(line) } }
}

/// Runs `body`, which must throw a `LedgerError`, and returns it (records an issue otherwise).
public func ledgerError(_ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) -> LedgerError? {
    do {
        try body()
        Issue.record("expected a LedgerError, got success", sourceLocation: sourceLocation)
    } catch let error as LedgerError {
        return error
    } catch {
        Issue.record("expected a LedgerError, got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}

extension LedgerError? {
    /// Whether this is a refusal of what the format does not allow.
    public var isInvalidRequest: Bool { if case .invalidRequest = self { true } else { false } }
    /// Whether this is a refusal because another writer is open.
    public var isBusy: Bool { if case .busy = self { true } else { false } }
    /// Whether this is a refusal of the authority key.
    public var isKeyError: Bool { if case .key = self { true } else { false } }
}
