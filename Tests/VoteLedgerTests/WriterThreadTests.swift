import Dispatch
import Election
import FileDriver
import FileStore
import Foundation
import Ledger
import TestSupport
import Testing

@testable import VoteLedger

/// The writer's own thread and the blocks it holds open while commands keep arriving. A hold of an hour
/// (with an hour's quiet) makes "still open" a certainty rather than a race, so nothing here depends on the
/// machine's speed: a block that should close does so for a reason other than time (a read, `close`), and
/// one that should not be held would hang until the time limit.
@Suite(.timeLimit(.minutes(10))) struct WriterThreadTests {
    static let votingTime = LedgerWriterTests.votingTime
    static let hour = LedgerWriter.BlockHold(limit: .seconds(3600), quiet: .seconds(3600), slowerThan: .zero)

    /// Counts callers that have their answer.
    final class Answered: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        func add() { lock.withLock { count += 1 } }
        var value: Int { lock.withLock { count } }
    }

    /// A writer over a fresh election with `voters` authorised voters that holds blocks for an hour.
    static func writer(
        _ store: ServiceStore, voters: Int
    ) throws -> (LedgerWriter, [VotingToken], @Sendable () throws -> any BlockSource, StoreConfiguration) {
        let configuration = store.configuration()
        let (ledger, tokens) = try ServiceTests.election(configuration, voters: voters, votes: 0)
        let read = try ledger.reader()
        return (LedgerWriter(ledger, clock: { votingTime }, hold: hour), tokens, read, configuration)
    }

    static func vote(_ token: VotingToken, for candidate: UInt32 = 1) -> Command {
        .castVote(place: 1, candidate: candidate, tokenHash: token.hash)
    }

    /// Starts casting `tokens` one at a time, each once the one before is queued (or answered: then the
    /// writer did not hold the block, which the caller's checks catch), and returns the casting tasks.
    static func trickle(
        _ tokens: ArraySlice<VotingToken>, into writer: LedgerWriter
    ) async throws -> [Task<EventReceipt, any Error>] {
        let answered = Answered()
        var tasks: [Task<EventReceipt, any Error>] = []
        for token in tokens {
            tasks.append(
                Task {
                    defer { answered.add() }
                    return try await writer.submit(vote(token))
                })
            let count = tasks.count
            try await LedgerWriterTests.waitUntil("\(count) queued or one answered") {
                await writer.queued == count || answered.value > 0
            }
        }
        return tasks
    }

    /// Whether a thread of this process may raise its priority to the writer's (`CAP_SYS_NICE`, which root
    /// usually has, or an `RLIMIT_NICE` that allows it): tried on a thread of its own, which then ends.
    static func mayRaisePriority() -> Bool {
        final class Outcome: @unchecked Sendable { var raised = false }
        let outcome = Outcome()
        let done = DispatchSemaphore(value: 0)
        Thread {
            outcome.raised = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, LedgerWriter.threadNice) == 0
            done.signal()
        }.start()
        done.wait()
        return outcome.raised
    }

    /// Every vote waits for the writer's thread, so it runs ahead of the threads that hand it votes: at
    /// `LedgerWriter.threadNice` where the process may raise a priority, else at its creator's. Read on the
    /// writer's own thread, from the system. (The thread that syncs a file store's blocks is started from it.)
    @Test func theWriterRunsAheadOfTheRoutes() async throws {
        let creator = currentThreadNice()  // the thread that makes the writer, below: no suspension between
        let (writer, _, _, configuration) = try WriterThreadTests.writer(.memory, voters: 1)
        defer { configuration.removeLedger() }
        let nice = try await writer.onLedger { _ in currentThreadNice() }
        let expected = WriterThreadTests.mayRaisePriority() ? LedgerWriter.threadNice : creator
        #expect(nice == expected, "the writer's thread at nice \(nice)")
        await writer.close()
    }

    /// A command that finds the writer idle is written at once (it would wait an hour if held); commands
    /// that then trickle in one by one wait in one open block, which `close` writes; a batch is never held.
    @Test(arguments: ServiceStore.allCases) func aTrickleOfCommandsSharesOneHeldBlock(
        _ store: ServiceStore
    ) async throws {
        let (writer, tokens, read, configuration) = try WriterThreadTests.writer(store, voters: 8)
        defer { configuration.removeLedger() }
        let alone = try await writer.submit(WriterThreadTests.vote(tokens[0]))
        let batch = try await writer.submit(batch: [WriterThreadTests.vote(tokens[1])]).receipt(of: 0)
        #expect(batch.height == alone.height + 1)

        let tasks = try await WriterThreadTests.trickle(tokens[2..<7], into: writer)
        #expect(await writer.queued == 5)
        await writer.close()
        var heights: Set<UInt64> = []
        for task in tasks { heights.insert(try await task.value.height) }
        #expect(heights == [batch.height + 1])
        let verified = try ElectionVerifier.verify(read())
        #expect(verified.chain.height == batch.height + 1)
        #expect(verified.state.place(1).map(Projections.turnout)?.voted == 7)
    }

    /// A read of the ledger queued behind a held block closes it: the block is written first, and the read
    /// (the writer's state) sees it.
    @Test(arguments: ServiceStore.allCases) func aReadClosesAHeldBlock(_ store: ServiceStore) async throws {
        let (writer, tokens, _, configuration) = try WriterThreadTests.writer(store, voters: 4)
        defer { configuration.removeLedger() }
        let first = try await writer.submit(WriterThreadTests.vote(tokens[0]))
        let held = try await WriterThreadTests.trickle(tokens[1..<4], into: writer)
        let state = try await writer.state()
        let heights = try await Set(held.asyncMap { try await $0.value.height })
        #expect(heights == [first.height + 1])
        #expect(state.place(1).map(Projections.turnout)?.voted == 4)
        await writer.close()
    }

    /// The real disk, except that while it is held each sync of a segment waits for `release()`; writes to
    /// segments made meanwhile are counted.
    final class GatedDisk: FileIO, @unchecked Sendable {
        private let condition = NSCondition()
        private var held = false
        private var waiting = 0
        private var writesMeanwhile = 0

        func hold() { condition.withLock { held = true } }
        func release() {
            condition.withLock {
                held = false
                condition.broadcast()
            }
        }
        /// Segment syncs waiting for `release()`.
        var waitingSyncs: Int { condition.withLock { waiting } }
        /// Segment writes made while a segment sync was waiting.
        var writesWhileSyncing: Int { condition.withLock { writesMeanwhile } }

        func write(_ bytes: [UInt8], to file: FileHandleRef, at offset: UInt64) throws(LedgerError) {
            if file.path.hasSuffix(".vlseg") { condition.withLock { if waiting > 0 { writesMeanwhile += 1 } } }
            try PosixIO.shared.write(bytes, to: file, at: offset)
        }
        func sync(_ file: FileHandleRef) throws(LedgerError) {
            if file.path.hasSuffix(".vlseg") {
                condition.withLock {
                    waiting += 1
                    while held { condition.wait() }
                    waiting -= 1
                }
            }
            try PosixIO.shared.sync(file)
        }
        func truncate(_ file: FileHandleRef, to size: UInt64) throws(LedgerError) {
            try PosixIO.shared.truncate(file, to: size)
        }
        func syncDirectory(_ path: String) throws(LedgerError) { try PosixIO.shared.syncDirectory(path) }
        func rename(_ from: String, _ to: String) throws(LedgerError) { try PosixIO.shared.rename(from, to) }
        func remove(_ path: String) throws(LedgerError) { try PosixIO.shared.remove(path) }
    }

    /// A writer of a new file ledger (an election of `voters`, none voted) whose segment syncs `disk` can hold.
    static func gatedWriter(
        voters: Int
    ) throws -> (writer: LedgerWriter, tokens: [VotingToken], disk: GatedDisk, path: String) {
        let path = NSTemporaryDirectory() + "writer-\(UUID().uuidString)"
        let (created, tokens) = try ServiceTests.election(
            StoreConfiguration(.file(path: path)), voters: voters, votes: 0)
        created.close()
        let disk = GatedDisk()
        let writer = LedgerWriter(
            try VoteLedgerService.openLedger(StoreConfiguration(.file(path: path, io: disk))),
            clock: { WriterThreadTests.votingTime },
            hold: .none)
        return (writer, tokens, disk, path)
    }

    /// Pipelined commits: while block n's sync is held, block n+1 is decided and written (and waits for its own
    /// sync); nobody is answered before their block is durable, and the blocks are in the order decided.
    @Test func theNextBlockIsWrittenWhileTheLastOneSyncs() async throws {
        let (writer, tokens, disk, path) = try Self.gatedWriter(voters: 2)
        defer { StoreConfiguration(.file(path: path)).removeLedger() }
        let answered = Answered()
        func cast(_ token: VotingToken) -> Task<EventReceipt, any Error> {
            Task {
                defer { answered.add() }
                return try await writer.submit(WriterThreadTests.vote(token))
            }
        }
        disk.hold()
        let first = cast(tokens[0])
        try await waitFor("one sync waiting", every: .milliseconds(1), read: { disk.waitingSyncs }, until: { $0 == 1 })
        let second = cast(tokens[1])
        try await waitFor(
            "one write while syncing", every: .milliseconds(1), read: { disk.writesWhileSyncing }, until: { $0 == 1 })
        #expect(answered.value == 0)
        #expect(disk.waitingSyncs == 1)
        disk.release()
        let (one, two) = (try await first.value, try await second.value)
        #expect(two.height == one.height + 1)
        await writer.close()
        let verified = try ElectionVerifier.verify(FileBlockSource(path: path))
        #expect(verified.chain.height == two.height)
        #expect(verified.state.place(1).map(Projections.turnout)?.voted == 2)
    }

    /// The signed head is the published view's, read without the writer: while a block waits for its sync
    /// (the writer's thread busy with it), the head of the last durable block is signed and served at once;
    /// once the block is durable and answered, the head is its.
    @Test func theSignedHeadDoesNotWaitForTheWriter() async throws {
        let (writer, tokens, disk, path) = try Self.gatedWriter(voters: 1)
        defer { StoreConfiguration(.file(path: path)).removeLedger() }
        let before = writer.published.head
        disk.hold()
        let vote = Task { try await writer.submit(WriterThreadTests.vote(tokens[0])) }
        try await waitFor("one sync waiting", every: .milliseconds(1), read: { disk.waitingSyncs }, until: { $0 == 1 })
        let durable = try #require(Checkpoint(text: try writer.published.signedHead().text))
        #expect(durable.treeSize == before.treeSize)
        disk.release()
        let receipt = try await vote.value
        let after = try #require(Checkpoint(text: try writer.published.signedHead().text))
        #expect(after.treeSize == receipt.index + 1)
        await writer.close()
    }

    /// The writer's work runs on one thread of its own, not on a queue's or the callers' threads. (Not by its
    /// name: the system's name of the writer's thread, which the writer sets as it starts, was read back as a
    /// dispatch worker's, "oot.default-qos", in about one run in six, by Foundation as by /proc.)
    @Test func theWriterRunsOnItsOwnThread() async throws {
        let (writer, _, _, configuration) = try WriterThreadTests.writer(.memory, voters: 1)
        defer { configuration.removeLedger() }
        var callers: [pthread_t] = []
        let threads = try await (0..<3).asyncMap { _ in
            callers.append(pthread_self())
            return try await writer.onLedger { _ in pthread_self() }
        }
        callers.append(pthread_self())
        #expect(Set(threads).count == 1)
        #expect(!callers.contains(threads[0]))
        await writer.close()
    }
}

extension Sequence {
    /// `transform` of each element in order, awaited one at a time.
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
