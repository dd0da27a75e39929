import Dispatch
public import Election
import Foundation
public import Ledger
import LedgerCrypto

/// The one writer of an open ledger, shared by any number of concurrent callers (a server's requests,
/// workers of a bulk job). Commands go into a queue (a lock and a condition) that one thread of the writer's
/// own takes them from, in arrival order: it decides them, writes their block, syncs it, and resumes each
/// caller itself, with its own outcome (its receipt, or its violation), only once that block is durable.
/// Every command that arrives while a block is being written and synced goes into the next block (group
/// commit), so one fsync acknowledges them all; and while commands keep arriving, a block is held open a
/// little longer for more (`BlockHold`), so that a trickle of votes does not make a block of one or two each.
/// The queue is bounded: a caller that finds it full is told so and nothing of its is recorded.
public final class LedgerWriter: Sendable {
    /// Commands one block takes at most (the CLI's default bulk batch); the rest wait for the next block.
    public static let maxCommandsPerBlock = 10_000
    /// How often an idle writer of a store that several processes write reads the blocks the others
    /// appended, so that its readers see them: the most a read route lags behind another server's answer.
    static let catchUpInterval: TimeInterval = 0.02

    /// What runs just before a batch's block is written, with each command's decision (bulk authorisation
    /// saves the issued tokens there); if it throws, nothing of the batch is recorded.
    public typealias BeforeWriting = @Sendable ([Result<EventReceipt, Violation>]) throws -> Void

    /// How long a block is held open for more commands, when commands keep arriving (a block was closed
    /// less than `limit` ago) at a modest rate (on average at least `slowerThan` apart). Votes trickling in at
    /// 2,000 a second would otherwise each find the writer idle and make blocks of one or two votes, whose
    /// headers and signatures are as large as the votes and whose signature checks are nearly all the work of
    /// verifying the ledger; faster than `slowerThan`, the time a block takes to sync fills the next one by
    /// itself, and holding it would only leave the cores idle during the sync. A held block closes at the
    /// first of: `limit` after its first command arrived, `quiet` without a new command (by default eight
    /// times the recent mean gap between commands, each counted as at most 4 `slowerThan`: every caller
    /// that was coming is in), `maxCommandsPerBlock`
    /// commands, a finished sync (its callers are answered, then the hold goes on), or anything else queued
    /// behind it (a batch, a read of the ledger, `close`). A command that arrives when no block was made for
    /// `limit` is written at once: a single command never waits.
    public struct BlockHold: Sendable {
        /// The longest a command waits in an open block before the block is written.
        public var limit: Duration
        /// How long without a new command closes the block; `nil`: eight times the recent mean gap.
        public var quiet: Duration?
        /// Blocks are held only while commands arrive on average at least this far apart.
        public var slowerThan: Duration

        public init(limit: Duration, quiet: Duration? = nil, slowerThan: Duration = .microseconds(200)) {
            self.limit = limit
            self.quiet = quiet
            self.slowerThan = slowerThan
        }

        /// 25 ms: at 2,000 votes a second, blocks of about 45 votes (the arrivals of 25 ms, less the blocks a
        /// lull closes early), each vote answered at most 25 ms and a sync later than without the hold.
        public static let standard = BlockHold(limit: .milliseconds(25))
        /// Never hold a block open: each block takes what arrived while the last one was written.
        public static let none = BlockHold(limit: .zero)
    }

    /// The names of the writer's thread and of the thread that syncs its blocks.
    static let threadName = "vote-writer"
    static let syncThreadName = "vote-sync"
    /// The writer's thread's nice value: every vote waits for this one thread, so on a busy core it should not come
    /// after the threads that hand it votes. Swift's executor threads run at nice -2 to -4 where the process may
    /// raise a priority (libdispatch gives its quality-of-service classes nice values; with `CAP_SYS_NICE`, which
    /// root usually has, or an `RLIMIT_NICE` that allows it), the event loops at -2: the writer is level with the
    /// first and ahead of the second. Where the process may not, the call fails and the thread keeps its creator's,
    /// which is every thread's but the readers' (`LedgerServer.readerNice`). The sync thread it starts inherits it.
    static let threadNice: Int32 = -4

    private let engine: Engine
    /// Commands that may wait for a block at once; beyond it callers are refused as overloaded.
    public let capacity: Int
    /// The time of the next block (and of an issuance's pre-check), in ms since the epoch.
    public let clock: @Sendable () -> Int64

    /// Takes over `ledger` (no one else may use it from now on) and starts the writer's thread. At most
    /// `capacity` commands wait for a block; `clock` gives each block its time (ms since the epoch); `hold`
    /// says how long a block is held open for more commands while they keep arriving.
    public init(
        _ ledger: sending ElectionLedger, capacity: Int = 100_000,
        clock: @escaping @Sendable () -> Int64 = { Clock.now() }, hold: BlockHold = .standard
    ) {
        voterSecret = ledger.voterSecret
        ballotKeys = ledger.ballotKeys
        published = ledger.published
        engine = Engine(ledger, hold: hold)
        self.capacity = capacity
        self.clock = clock
        let engine = engine
        Thread {
            // On Linux the nice value is the thread's, and `who` 0 the calling thread.
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, LedgerWriter.threadNice)
            // Named from inside, where the name reaches the system thread (what debuggers and `top -H` show).
            Thread.current.name = LedgerWriter.threadName
            engine.run(clock: clock)
        }.start()
    }

    /// A writer nobody can reach any more closes its ledger (after writing what it accepted), so that the
    /// writer lock is released even without `close()`.
    deinit { engine.stop(reply: nil) }

    /// Commands waiting for the next block (not counting the block being written).
    public var queued: Int {
        get async { engine.waitingCount }
    }

    /// The ledger's voter secret, so callers tag identities without waiting for the writer.
    public let voterSecret: any VoterSecretKey

    /// The private halves of the ledger's ballot keys (anonymous places).
    public let ballotKeys: BallotKeys

    /// The election at the last durable block, which the writer publishes after each block: what readers
    /// (a server's routes) take instead of replaying the ledger.
    public let published: PublishedView

    /// Where a command's event went and, when asked for, its receipt (C2SP tlog-proof) under the signed head
    /// of the block that holds it.
    public struct Recorded: Sendable {
        public var event: EventReceipt
        /// When the receipt was asked for and could be signed.
        public var receipt: TlogProof?
    }

    /// Decides `command` in arrival order and returns where its event went once the block holding it is
    /// durable. Throws `VoteError` with `.violation` if a rule refuses it, `.overloaded` if the queue is full,
    /// or the store's failure if its block could not be written (then nothing of the block was recorded).
    public func submit(_ command: Command) async throws -> EventReceipt {
        try await submit(command, receipt: false).event
    }

    /// Like `submit(_:)`, and with `receipt` also the event's C2SP tlog-proof under the signed head of the
    /// block holding it, proven from the writer's memory when the block is written (one signature per
    /// block, no log read): what a server hands a voter.
    public func submit(_ command: Command, receipt: Bool) async throws -> Recorded {
        try await withCheckedThrowingContinuation { reply in
            engine.enqueue(
                .command(command, receipt: receipt, reply, arrived: Engine.now()), count: 1, capacity: capacity)
        }
    }

    /// Decides a caller's whole batch (a bulk job's next lines) in arrival order, as one block of its own,
    /// and returns what happened to each command once that block is durable (a batch whose commands are all
    /// rejected writes nothing). `beforeWriting` runs before the block is written, with every decision; if
    /// it throws, nothing of the batch is recorded and its error is thrown here. Throws `.overloaded` if
    /// the queue has no room for the batch, or the store's failure. With `proofs`, the outcome also holds
    /// each event's receipt under the block's signed head (`BatchOutcome.tlogProof(for:)`), from memory.
    public func submit(
        batch commands: [Command], proofs: Bool = false, beforeWriting: @escaping BeforeWriting = { _ in }
    ) async throws -> BatchOutcome {
        try await withCheckedThrowingContinuation { reply in
            engine.enqueue(
                .batch(commands, proofs: proofs, beforeWriting, reply), count: commands.count, capacity: capacity)
        }
    }

    /// The receipts (C2SP tlog-proofs) of events already recorded, under the signed head of block `height`,
    /// by default the current head (`ElectionLedger.tlogProofs(for:underBlock:)`). Runs between blocks, so it
    /// sees the ledger as it is after the caller's last block.
    public func tlogProofs(
        for receipts: [EventReceipt], underBlock height: UInt64? = nil
    ) async throws
        -> [TlogProof]
    {
        try await onLedger { try $0.tlogProofs(for: receipts, underBlock: height) }
    }

    /// `body` with the ledger, on the writer's thread between blocks.
    func onLedger<T: Sendable>(_ body: @escaping @Sendable (ElectionLedger) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { done in
            engine.enqueue(
                .job { ledger in
                    done.resume(
                        with: Result {
                            guard let ledger else { throw VoteError(.refused, "the ledger's writer is closed") }
                            return try body(ledger)
                        })
                }, count: 0, capacity: capacity)
        }
    }

    /// Waits for every accepted command to be written, then closes the ledger (saving its index and a
    /// snapshot, releasing the writer lock). Later submissions are refused.
    public func close() async {
        await withCheckedContinuation { done in engine.stop(reply: done) }
    }
}

// MARK: - The writer's thread

extension LedgerWriter {
    /// What waits in the queue: one command that shares a block with whatever else arrived; a caller's whole
    /// batch (a bulk job), which gets a block of its own so that its `beforeWriting` sees exactly its own
    /// commands; work on the ledger between blocks; or the end.
    private enum Pending {
        case command(Command, receipt: Bool, CheckedContinuation<Recorded, any Error>, arrived: UInt64)
        case batch([Command], proofs: Bool, BeforeWriting, CheckedContinuation<BatchOutcome, any Error>)
        /// Work on the ledger; given `nil` if the writer is closed.
        case job(@Sendable (ElectionLedger?) -> Void)
        case stop(CheckedContinuation<Void, Never>?)
    }

    /// The queue and the ledger. The queue's state is guarded by `condition`; the ledger and `lastBlock` are
    /// used only by the writer's thread.
    private final class Engine: @unchecked Sendable {
        private let condition = NSCondition()
        private let hold: BlockHold
        // Guarded by `condition`.
        private var queue: [Pending] = []
        /// Where the queue starts in `queue` (taken items are dropped in bulk, not one at a time).
        private var first = 0
        /// Commands in the queue, counting each of a batch.
        private var waiting = 0
        /// Items in the queue that are not single commands (a held block closes for them).
        private var barriers = 0
        private var stopped = false
        /// Set when the writer's thread has ended (after the first stop, once nothing was left to do).
        private var finished = false
        /// When the last command arrived, and the recent mean gap between commands (ns, exponentially
        /// weighted), for `BlockHold.quiet`.
        private var lastArrival: UInt64 = 0
        private var meanGap: UInt64
        // The writer's thread only. The ledger, until the writer closes it: it is released there, on this thread,
        // before the caller of `close` is answered, since the process may end as soon as it is, and OpenSSL frees
        // its locks at exit; releasing the ledger's keys after that, as this thread ends, crashed.
        private var owned: ElectionLedger?
        private var ledger: ElectionLedger { owned! }
        /// When the writer last closed a block (ns); 0 before the first.
        private var lastBlock: UInt64 = 0
        /// How often an idle writer takes in what other writers appended (a store several processes write);
        /// nil for a store with one writer.
        private let catchUpInterval: TimeInterval?
        /// Whether the last catch-up failed (reported once until one succeeds).
        private var catchUpFailing = false

        init(_ ledger: sending ElectionLedger, hold: BlockHold) {
            catchUpInterval = ledger.othersAppend ? LedgerWriter.catchUpInterval : nil
            owned = ledger
            self.hold = hold
            meanGap = 4 * Engine.nanoseconds(hold.slowerThan)
        }

        static func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

        static func nanoseconds(_ duration: Duration) -> UInt64 {
            let (seconds, attoseconds) = duration.components
            return UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
        }

        var waitingCount: Int { condition.withLock { waiting } }

        /// Queues `pending` (`count` commands), unless the writer is closed or the queue has no room for them:
        /// then its caller is told at once and nothing of it is recorded.
        func enqueue(_ pending: Pending, count: Int, capacity: Int) {
            condition.lock()
            let refusal: VoteError?
            if stopped {
                refusal = VoteError(.refused, "the ledger's writer is closed")
            } else if waiting + count > capacity {
                refusal = VoteError(
                    .overloaded,
                    "the ledger's writer has \(waiting) commands waiting; nothing was recorded, try again")
            } else {
                refusal = nil
                queue.append(pending)
                waiting += count
                if case .command(_, _, _, let arrived) = pending {
                    if lastArrival > 0 {
                        // Capped, so that the lulls a held block makes (its callers wait) do not hold the next.
                        let gap = min(arrived &- lastArrival, 4 * Engine.nanoseconds(hold.slowerThan))
                        meanGap = meanGap - meanGap / 8 + gap / 8
                    }
                    lastArrival = arrived
                } else {
                    barriers += 1
                }
                condition.signal()
            }
            condition.unlock()
            guard let refusal else { return }
            switch pending {
            case .command(_, _, let reply, _): reply.resume(throwing: refusal)
            case .batch(_, _, _, let reply): reply.resume(throwing: refusal)
            case .job(let body): body(nil)
            case .stop(let reply): reply?.resume()
            }
        }

        /// Refuses later submissions and queues the end: what is queued is written, then the ledger is closed
        /// and `reply` resumed. A second stop is answered once the first is done.
        func stop(reply: CheckedContinuation<Void, Never>?) {
            condition.lock()
            stopped = true
            guard !finished else {
                condition.unlock()
                reply?.resume()
                return
            }
            queue.append(.stop(reply))
            barriers += 1
            condition.signal()
            condition.unlock()
        }

        // MARK: The writer's thread

        /// A block written and not yet durable, and who waits for it: the callers of its commands, or of a batch.
        private struct InFlight {
            let block: WrittenBlock
            let replies: Replies
            /// When the writer started the block (ns), for its commit time (`LedgerMetrics.blockDurable`).
            let started: UInt64
        }

        private enum Replies {
            case commands([(receipt: Bool, reply: CheckedContinuation<Recorded, any Error>)])
            case batch(CheckedContinuation<BatchOutcome, any Error>)
        }

        /// Blocks written and not yet durable, in order; the first `syncing.through` of them are being synced.
        private var inFlight: [InFlight] = []
        /// The sync running on the sync thread, if any; `stale` once its blocks were dropped meanwhile.
        private var syncing: (sync: PendingSync, stale: Bool)?
        /// The height of the last durable block.
        private var durableHeight: UInt64 = 0
        /// Where the sync thread takes its next sync from (guarded by `syncCondition`), and whether to end.
        private let syncCondition = NSCondition()
        private var syncRequest: PendingSync?
        private var syncThreadEnds = false
        private var syncThreadStarted = false
        /// A finished sync's outcome for the writer's thread (guarded by `condition`).
        private var synced: Result<Void, LedgerError>?

        /// The writer's thread: writes blocks as commands come (each decided on top of the blocks before it,
        /// durable or not), hands their sync to the sync thread, and when a sync is done answers the callers
        /// of the blocks it made durable; runs jobs and the end when no block is in flight.
        func run(clock: @Sendable () -> Int64) {
            durableHeight = ledger.head.height
            var closed = false
            while true {
                switch next() {
                case .synced(let outcome):
                    finishSync(outcome)
                case .commands(let commands, let replies):
                    write(commands, proofs: replies.contains { $0.receipt }, now: clock(), replies: .commands(replies))
                case .batch(let commands, let proofs, let beforeWriting, let reply):
                    write(commands, proofs: proofs, beforeWriting: beforeWriting, now: clock(), replies: .batch(reply))
                case .job(let body):
                    body(owned)
                case .catchUp:
                    do {
                        try ledger.catchUp()
                        catchUpFailing = false
                    } catch {
                        if !catchUpFailing { ledger.log("could not read other servers' blocks: \(error)") }
                        catchUpFailing = true
                    }
                case .stop(let reply):
                    if !closed {
                        ledger.close()
                        owned = nil
                        closed = true
                        syncCondition.withLock {
                            syncThreadEnds = true
                            syncCondition.signal()
                        }
                    }
                    // The process may end as soon as the caller is answered, before this thread has exited.
                    releaseThreadCryptoState()
                    reply?.resume()
                    // Nothing is queued after a stop but further stops, which the loop answers until none is left.
                    let done = condition.withLock {
                        finished = first == queue.count
                        return finished
                    }
                    if done { return }
                }
            }
        }

        private enum Work {
            case synced(Result<Void, LedgerError>)
            case commands([Command], [(receipt: Bool, reply: CheckedContinuation<Recorded, any Error>)])
            case batch([Command], proofs: Bool, BeforeWriting, CheckedContinuation<BatchOutcome, any Error>)
            case job(@Sendable (ElectionLedger?) -> Void)
            case stop(CheckedContinuation<Void, Never>?)
            /// Nothing to do for `catchUpInterval`: take in other writers' blocks.
            case catchUp
        }

        /// The next work, waiting for some: a finished sync first; then the queue's next block (held open as
        /// `hold` says), batch, or, once no block is in flight, job or end.
        private func next() -> Work {
            condition.lock()
            defer { condition.unlock() }
            while true {
                if let outcome = synced {
                    synced = nil
                    return .synced(outcome)
                }
                if first < queue.count {
                    switch queue[first] {
                    case .command(_, _, _, let arrived):
                        guard inFlight.isEmpty || ledger.canWriteAhead else { break }
                        holdOpen(since: arrived)
                        // A sync that finished meanwhile answers its callers first; the hold goes on after.
                        if synced != nil { continue }
                        var commands: [Command] = []
                        var replies: [(receipt: Bool, reply: CheckedContinuation<Recorded, any Error>)] = []
                        while first < queue.count, commands.count < LedgerWriter.maxCommandsPerBlock,
                            case .command(let command, let receipt, let reply, _) = queue[first]
                        {
                            commands.append(command)
                            replies.append((receipt, reply))
                            first += 1
                        }
                        waiting -= commands.count
                        lastBlock = Engine.now()
                        compact()
                        return .commands(commands, replies)
                    case .batch(let commands, let proofs, let beforeWriting, let reply):
                        guard inFlight.isEmpty || ledger.canWriteAhead else { break }
                        take(count: commands.count)
                        return .batch(commands, proofs: proofs, beforeWriting, reply)
                    case .job(let body):
                        guard inFlight.isEmpty else { break }
                        take(count: 0)
                        return .job(body)
                    case .stop(let reply):
                        guard inFlight.isEmpty else { break }
                        take(count: 0)
                        return .stop(reply)
                    }
                }
                if let catchUpInterval, inFlight.isEmpty, first == queue.count {
                    if !condition.wait(until: Date(timeIntervalSinceNow: catchUpInterval)) { return .catchUp }
                } else {
                    condition.wait()
                }
            }
        }

        /// Waits (the lock held, as `condition` waits do) while the block whose first command arrived at
        /// `arrived` should stay open for more (`BlockHold`), or until a sync finishes.
        private func holdOpen(since arrived: UInt64) {
            let limit = Engine.nanoseconds(hold.limit)
            guard limit > 0, lastBlock > 0, Engine.now() &- lastBlock < limit,
                meanGap >= Engine.nanoseconds(hold.slowerThan)
            else { return }
            let deadline = arrived + limit
            while barriers == 0, waiting < LedgerWriter.maxCommandsPerBlock, synced == nil {
                let quiet = hold.quiet.map(Engine.nanoseconds) ?? min(limit, 8 * meanGap)
                let until = min(deadline, lastArrival + quiet)
                let now = Engine.now()
                guard now < until else { return }
                _ = condition.wait(until: Date(timeIntervalSinceNow: Double(until - now) / 1e9))
            }
        }

        /// Drops the item at the front of the queue (not a single command).
        private func take(count: Int) {
            first += 1
            waiting -= count
            barriers -= 1
            compact()
        }

        /// Frees the queue's taken items once they are most of it.
        private func compact() {
            if first == queue.count {
                queue.removeAll(keepingCapacity: true)
                first = 0
            } else if first > 1024, first * 2 > queue.count {
                queue.removeFirst(first)
                first = 0
            }
        }

        /// Decides `commands` at one block time on top of the blocks in flight and writes the accepted ones as
        /// one block; its callers are answered once it is durable. If it cannot be written, they are answered
        /// at once, and if the store dropped the blocks in flight with it, so are theirs.
        private func write(
            _ commands: [Command], proofs: Bool, beforeWriting: BeforeWriting = { _ in }, now: Int64,
            replies: Replies
        ) {
            let started = Engine.now()
            do {
                let block = try ledger.write(commands, now: now, proofs: proofs, beforeWriting: beforeWriting)
                inFlight.append(InFlight(block: block, replies: replies, started: started))
                if block.outcome.header != nil, ledger.pendingSync() == nil {
                    durableHeight = ledger.head.height  // a store whose writes are durable at once
                }
            } catch {
                if let last = inFlight.compactMap(\.block.outcome.header).last, ledger.head.height < last.height {
                    failInFlight(error)
                    syncing?.stale = true
                }
                switch replies {
                case .commands(let replies): for (_, reply) in replies { reply.resume(throwing: VoteError(error)) }
                case .batch(let reply): reply.resume(throwing: error)
                }
            }
            settle()
        }

        /// After a sync: its blocks are durable (their callers are answered), or they and every block written
        /// after them were dropped (their callers are told why).
        private func finishSync(_ outcome: Result<Void, LedgerError>) {
            guard let (sync, stale) = syncing else { return }
            syncing = nil
            if !stale {
                ledger.finishSync(sync, outcome)
                switch outcome {
                case .success: durableHeight = max(durableHeight, sync.through)
                case .failure(let error): failInFlight(VoteError(ledger: error))
                }
            }
            settle()
        }

        /// Answers the callers of every block in flight that is durable, in order (a batch that wrote nothing
        /// waits for the blocks before it), then starts the sync of those written since, if none is running.
        private func settle() {
            var answered = 0
            for entry in inFlight {
                if let header = entry.block.outcome.header {
                    if header.height > durableHeight { break }
                    LedgerMetrics.blockDurable(
                        events: Int(header.eventCount), nanoseconds: Int64(clamping: Engine.now() &- entry.started))
                }
                answer(entry.replies, with: .success(ledger.commit(entry.block)))
                answered += 1
            }
            inFlight.removeFirst(answered)
            if syncing == nil, let sync = ledger.pendingSync() {
                syncing = (sync, false)
                startSyncThreadIfNeeded()
                syncCondition.withLock {
                    syncRequest = sync
                    syncCondition.signal()
                }
            }
        }

        /// Every block in flight was dropped by the store: undone, and each caller told `error`.
        private func failInFlight(_ error: any Error) {
            ledger.abandon(inFlight.map(\.block))
            for entry in inFlight { answer(entry.replies, with: .failure(error)) }
            inFlight.removeAll()
        }

        private func answer(_ replies: Replies, with result: Result<BatchOutcome, any Error>) {
            switch (replies, result) {
            case (.batch(let reply), _):
                reply.resume(with: result)
            case (.commands(let replies), .success(let outcome)):
                for ((receipt, reply), result) in zip(replies, outcome.results) {
                    switch result {
                    case .success(let event):
                        let proof = receipt ? try? outcome.tlogProof(for: event) : nil
                        reply.resume(returning: Recorded(event: event, receipt: proof))
                    case .failure(let violation): reply.resume(throwing: VoteError(violation))
                    }
                }
            case (.commands(let replies), .failure(let error)):
                for (_, reply) in replies { reply.resume(throwing: VoteError(error)) }
            }
        }

        // MARK: The sync thread

        private func startSyncThreadIfNeeded() {
            guard !syncThreadStarted else { return }
            syncThreadStarted = true
            Thread {
                Thread.current.name = LedgerWriter.syncThreadName
                self.syncLoop()
            }.start()
        }

        /// The sync thread: runs each sync it is given (an fdatasync, while the writer's thread writes on)
        /// and hands its outcome back, until the writer closes.
        private func syncLoop() {
            while true {
                let sync: PendingSync? = syncCondition.withLock {
                    while syncRequest == nil, !syncThreadEnds { syncCondition.wait() }
                    defer { syncRequest = nil }
                    return syncRequest
                }
                guard let sync else { return }
                let outcome = Result { () throws(LedgerError) in try sync.run() }
                condition.withLock {
                    synced = outcome
                    condition.signal()
                }
            }
        }
    }
}
