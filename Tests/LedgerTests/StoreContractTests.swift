import Foundation
import LedgerCrypto
import LedgerTestSupport
import TestSupport
import Testing

@testable import FileStore
@testable import Ledger

/// The store contract (`StoreContract` in `LedgerTestSupport`) on the file and memory stores, and what only one
/// writer at a time and the file store's own layout add to it. A new store of this package joins by adding a
/// `Kind`; one in a target of its own (PostgreSQL: `PostgresContractTests`) calls the same checks.
@Suite struct StoreContractTests {
    // MARK: Stores under test

    /// The stores the contract runs on.
    enum Kind: String, CaseIterable, CustomTestStringConvertible {
        case file, memory

        var testDescription: String { rawValue }
    }

    /// One store under test: its open writer, a way to open readers (on any thread), and a way to open another
    /// writer holding `key`, installed the store's way.
    struct Harness {
        let store: any BlockAppender
        let source: @Sendable () throws -> any BlockSource
        let openWriter: (_ key: Ed25519PrivateKey) throws -> any BlockAppender
        /// Flips one bit of the signature of block `height`, stored at `place`, as tampering or media damage
        /// would, the store's way.
        let tamper: (_ height: UInt64, _ place: BlockPlace) throws -> Void
        /// Keeps the file store's directory until the test ends.
        let directory: TemporaryDirectory?

        /// `segmentLimit` bounds the file store's segments (small: a few blocks each); memory has none.
        init(_ kind: Kind, segmentLimit: UInt64 = FileBlockStore.defaultSegmentLimit) throws {
            switch kind {
            case .file:
                let directory = TemporaryDirectory()
                let path = directory.child("ledger")
                store = try FileBlockStore.create(
                    at: path, name: "contract", authority: Fixture.key, ledgerID: Fixture.ledgerID,
                    timestamp: Fixture.epoch, segmentLimit: segmentLimit, log: { _ in })
                source = { try FileBlockSource(path: path) }
                openWriter = { key in
                    if key.publicKey.rawRepresentation != Fixture.key.publicKey.rawRepresentation {
                        try Data(key.pem(passphrase: nil).utf8).write(
                            to: URL(fileURLWithPath: KeyDirectory(defaultFor: path).privateKeyPath))
                    }
                    // The lock is held or free now: the wait only bounds how long a refusal takes.
                    return try FileBlockStore.open(at: path, lockTimeout: 0.2, log: { _ in })
                }
                tamper = { _, place in
                    // The signature follows the frame header (length and CRC) and the block header.
                    let handle = try #require(FileHandle(forUpdatingAtPath: path + "/" + place.file))
                    defer { handle.closeFile() }
                    let at = place.offset + UInt64(Frame.headerSize + LedgerFormat.headerSize)
                    handle.seek(toFileOffset: at)
                    let byte = handle.readData(ofLength: 1)[0]
                    handle.seek(toFileOffset: at)
                    handle.write(Data([byte ^ 0x01]))
                }
                self.directory = directory
            case .memory:
                let ledger = try MemoryBlockSource(
                    name: "contract", authority: Fixture.key, ledgerID: Fixture.ledgerID, timestamp: Fixture.epoch)
                store = try ledger.openWriter(authority: Fixture.key)
                source = { ledger }
                openWriter = { key in try ledger.openWriter(authority: key) }
                tamper = { height, _ in try ledger.tamper(height: height, offset: LedgerFormat.headerSize, mask: 0x01) }
                directory = nil
            }
        }

        /// The harness as the shared contract takes it.
        var contract: StoreHarness {
            StoreHarness(store: store, source: source, openWriter: openWriter, tamper: tamper, keep: directory)
        }
    }

    // MARK: The contract

    /// Appended blocks come back whole and in order (`StoreContract.appendAndReadBack`).
    @Test(arguments: Kind.allCases) func appendAndReadBack(_ kind: Kind) throws {
        try StoreContract.appendAndReadBack(try Harness(kind).contract)
    }

    /// A block by its height and the block holding an event (`StoreContract.blocksByHeightAndEvent`).
    @Test(arguments: Kind.allCases) func blocksByHeightAndEvent(_ kind: Kind) throws {
        try StoreContract.blocksByHeightAndEvent(try Harness(kind).contract)
    }

    /// A reader opened once sees later blocks (`StoreContract.readerKeptOpenSeesLaterBlocks`), also in the
    /// segments the file store starts after it was opened.
    @Test(arguments: Kind.allCases) func readerKeptOpenSeesLaterBlocks(_ kind: Kind) throws {
        // Segments of about three blocks: the appends start several new ones.
        let harness = try Harness(kind, segmentLimit: 600)
        try StoreContract.readerKeptOpenSeesLaterBlocks(harness.contract)
        if let directory = harness.directory {
            let segments = try FileManager.default.contentsOfDirectory(atPath: directory.child("ledger"))
                .filter { $0.hasSuffix(".vlseg") }
            #expect(segments.count >= 4, "the appends started new segments: \(segments)")
        }
    }

    /// A batch the format refuses changes nothing (`StoreContract.refusedAppendWritesNothing`).
    @Test(arguments: Kind.allCases) func refusedAppendWritesNothing(_ kind: Kind) throws {
        try StoreContract.refusedAppendWritesNothing(try Harness(kind).contract)
    }

    /// Proofs are the reference tree's (`StoreContract.proofsMatchTheReferenceTree`).
    @Test(arguments: Kind.allCases) func proofsMatchTheReferenceTree(_ kind: Kind) throws {
        try StoreContract.proofsMatchTheReferenceTree(try Harness(kind).contract)
    }

    /// Ledger id and signatures (`StoreContract.ledgerIDAndSignatures`).
    @Test(arguments: Kind.allCases) func ledgerIDAndSignatures(_ kind: Kind) throws {
        try StoreContract.ledgerIDAndSignatures(try Harness(kind).contract)
    }

    /// The chain verifier over the store (`StoreContract.verifierChecksTheChain`).
    @Test(arguments: Kind.allCases) func verifierChecksTheChain(_ kind: Kind) throws {
        try StoreContract.verifierChecksTheChain(try Harness(kind).contract)
    }

    /// Readers see only whole blocks (`StoreContract.readersSeeOnlyWholeBlocks`).
    @Test(arguments: Kind.allCases) func readersSeeOnlyWholeBlocks(_ kind: Kind) async throws {
        try await StoreContract.readersSeeOnlyWholeBlocks(try Harness(kind).contract)
    }

    // MARK: One writer

    /// While a writer is open a second one is refused as busy; once it closes, the next writer continues the
    /// chain where it ended.
    @Test(arguments: Kind.allCases) func secondWriterRefused(_ kind: Kind) throws {
        let harness = try Harness(kind)
        try harness.store.append(Fixture.events(2), timestamp: Fixture.epoch + 1)
        #expect(ledgerError { _ = try harness.openWriter(Fixture.key) }.isBusy)
        harness.store.close()
        let next = try harness.openWriter(Fixture.key)
        defer { next.close() }
        #expect(next.head == harness.store.head)
        let header = try next.append(Fixture.events(1, from: 2), timestamp: Fixture.epoch + 2)
        #expect(header.height == 2)
        #expect(header.previousHash == harness.store.headHash)
        #expect(try StoreContract.blocks(harness.source()).map(\.header.height) == [0, 1, 2])
    }

    /// The file store only: bytes of a block cut off mid-write are invisible to readers, and the next writer
    /// cuts them off and continues the chain.
    @Test func tornTailIsInvisible() throws {
        let harness = try Harness(.file)
        let path = harness.directory!.child("ledger")
        for batch in 0..<3 { try harness.store.append(Fixture.events(3, from: 3 * batch), timestamp: Fixture.epoch) }
        let head = harness.store.head
        harness.store.close()
        let last = try #require(try blockLocations(path).last)
        let segment = path + "/" + LedgerDirectory.segmentName(last.segment)
        let bytes = Bytes.read(segment)
        let frame = Array(bytes[Int(last.offset)..<Int(last.offset + last.length)])
        let handle = try #require(FileHandle(forWritingAtPath: segment))
        handle.seekToEndOfFile()
        handle.write(Data(frame.prefix(frame.count / 2)))
        handle.closeFile()

        let source = try harness.source()
        #expect(try source.lastBlock() == head)
        #expect(try StoreContract.blocks(source).count == 4)
        #expect(try source.header(at: 4) == nil)

        let next = try harness.openWriter(Fixture.key)
        defer { next.close() }
        #expect(next.head == head)
        #expect(Bytes.read(segment).count == bytes.count)
        try next.append(Fixture.events(1, from: 9), timestamp: Fixture.epoch)
        #expect(try StoreContract.blocks(harness.source()).map(\.header.height) == [0, 1, 2, 3, 4])
    }

    /// The file store only: without its derived block index a reader still finds every header, from the log.
    @Test func headersWithoutTheBlockIndex() throws {
        let harness = try Harness(.file)
        var headers = [harness.store.head]
        for batch in 0..<3 {
            headers.append(try harness.store.append(Fixture.events(2, from: 2 * batch), timestamp: Fixture.epoch))
        }
        harness.store.close()
        try FileManager.default.removeItem(atPath: harness.directory!.child("ledger") + "/blocks.idx")
        let source = try harness.source()
        for header in headers { #expect(try source.header(at: header.height) == header) }
        #expect(try source.header(at: 4) == nil)
        #expect(try StoreContract.blocks(source, from: 2).map(\.header) == Array(headers[2...]))
    }

    // MARK: Same bytes everywhere

    /// Both stores build blocks with the same `BlockBuilder`: the same inputs give byte-identical blocks.
    @Test func storesHoldTheSameBytes() throws {
        let file = try Harness(.file)
        let memory = try Harness(.memory)
        for batch in 0..<4 {
            let events = Fixture.events(batch + 1, from: 10 * batch)
            let time = Fixture.epoch + Int64(batch) * 1000
            let stored = try file.store.append(events, timestamp: time)
            #expect(try memory.store.append(events, timestamp: time) == stored)
        }
        #expect(
            try StoreContract.blocks(file.source()).map(\.encoded)
                == (try StoreContract.blocks(memory.source()).map(\.encoded)))
    }
}
