import FileStore
import Foundation
import Ledger
import LedgerTestSupport
import TestSupport
import Testing

/// The file store's pipelined commits: blocks written ahead of their sync become durable together with it, and
/// a failed sync drops every block written since the last durable one, leaving the store at that block.
@Suite struct PipelinedAppendTests {
    /// The real disk, except that its syncs fail while `failing` is set.
    final class FailingSyncs: FileIO, @unchecked Sendable {
        private let lock = NSLock()
        private var failingSyncs = false

        var failing: Bool {
            get { lock.withLock { failingSyncs } }
            set { lock.withLock { failingSyncs = newValue } }
        }

        func write(_ bytes: [UInt8], to file: FileHandleRef, at offset: UInt64) throws(LedgerError) {
            try PosixIO.shared.write(bytes, to: file, at: offset)
        }
        func sync(_ file: FileHandleRef) throws(LedgerError) {
            if failing { throw LedgerError.io("syncing \(file.path) to disk: input/output error (simulated)") }
            try PosixIO.shared.sync(file)
        }
        func truncate(_ file: FileHandleRef, to size: UInt64) throws(LedgerError) {
            try PosixIO.shared.truncate(file, to: size)
        }
        func syncDirectory(_ path: String) throws(LedgerError) { try PosixIO.shared.syncDirectory(path) }
        func rename(_ from: String, _ to: String) throws(LedgerError) { try PosixIO.shared.rename(from, to) }
        func remove(_ path: String) throws(LedgerError) { try PosixIO.shared.remove(path) }
    }

    /// Two blocks written before any sync link to each other; one sync makes both durable, and both are in
    /// the log and its indexes when the ledger is opened again.
    @Test func blocksWrittenAheadBecomeDurableWithOneSync() throws {
        let directory = TemporaryDirectory()
        let path = directory.child("ledger")
        let ledger = try Fixture.ledger(at: path, blocks: 1)
        let first = try ledger.write(Fixture.events(2, from: 10).map(HashedEvent.init), timestamp: Fixture.epoch + 5000)
        let second = try ledger.write(
            Fixture.events(3, from: 20).map(HashedEvent.init), timestamp: Fixture.epoch + 6000)
        #expect(second.height == first.height + 1 && second.previousHash == first.hash)
        #expect(ledger.head == second)
        let sync = try #require(ledger.pendingSync())
        #expect(sync.through == second.height)
        try sync.run()
        ledger.finishSync(sync, .success(()))
        #expect(ledger.pendingSync() == nil)
        ledger.close()

        let reader = try FileBlockSource(path: path)
        #expect(try reader.header(at: first.height) == first)
        #expect(try reader.header(at: second.height) == second)
        let report = try ChainVerifier.verify(reader)
        #expect(report.height == second.height && report.events == second.treeSize)
        #expect(try FileBlockStore.open(at: path, log: { _ in }).head == second)
    }

    /// A failed sync drops both blocks written since the last durable one: the store is back at that block, a
    /// sync begun before the drop changes nothing when it ends, and the next block follows the durable one.
    @Test func aFailedSyncDropsEveryBlockWrittenSinceTheLastDurableOne() throws {
        let directory = TemporaryDirectory()
        let path = directory.child("ledger")
        try Fixture.ledger(at: path, blocks: 2).close()
        let disk = FailingSyncs()
        let log = LogLines()
        let ledger = try FileBlockStore.open(at: path, io: disk, log: log.append)
        let (durable, durableHash) = (ledger.head, ledger.headHash)
        _ = try ledger.write(Fixture.events(2, from: 10).map(HashedEvent.init), timestamp: Fixture.epoch + 5000)
        _ = try ledger.write(Fixture.events(2, from: 20).map(HashedEvent.init), timestamp: Fixture.epoch + 6000)
        let sync = try #require(ledger.pendingSync())
        disk.failing = true
        let outcome = Result { () throws(LedgerError) in try sync.run() }
        #expect(throws: LedgerError.self) { try outcome.get() }
        ledger.finishSync(sync, outcome)
        #expect(ledger.head == durable && ledger.headHash == durableHash)
        #expect(ledger.pendingSync() == nil)
        ledger.finishSync(sync, .success(()))
        #expect(ledger.head == durable)

        disk.failing = false
        let next = try ledger.append(Fixture.events(1, from: 30), timestamp: Fixture.epoch + 7000)
        #expect(next.height == durable.height + 1 && next.previousHash == durableHash)
        ledger.close()
        #expect(log.lines.contains { $0.hasPrefix("a block could not be written") })
        let report = try ChainVerifier.verify(FileBlockSource(path: path))
        #expect(report.height == next.height && report.events == durable.treeSize + 1)
    }
}
