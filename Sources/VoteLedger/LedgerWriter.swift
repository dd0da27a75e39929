import Dispatch
public import Election
import Foundation
public import Ledger

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

    /// What runs just before a batch's block is written, with each command's decision (bulk authorisation
    /// saves the issued tokens there); if it throws, nothing of the batch is recorded.
    public typealias BeforeWriting = @Sendable ([Result<EventReceipt, Violation>]) throws -> Void

    /// How long a block is held open for more commands, when commands keep arriving (a block was closed
    /// less than `limit` ago). Votes trickling in at 2,000 a second would otherwise each find the writer
    /// idle and make blocks of one or two votes, whose headers and signatures are as large as the votes and
    /// whose signature checks are nearly all the work of verifying the ledger. A held block closes at the
    /// first of: `limit` after its first command arrived, `quiet` without a new command (by default four
    /// times the recent mean gap between commands: every caller that was coming is in), `maxCommandsPerBlock`
    /// commands, or anything else queued behind it (a batch, a read of the ledger, `close`). A command that
    /// arrives when no block was made for `limit` is written at once: a single command never waits.
    public struct BlockHold: Sendable {
        /// The longest a command waits in an open block before the block is written.
        public var limit: Duration
        /// How long without a new command closes the block; `nil`: four times the recent mean gap.
        public var quiet: Duration?

        public init(limit: Duration, quiet: Duration? = nil) {
            self.limit = limit
            self.quiet = quiet
        }

        /// 15 ms: at 2,000 votes a second, blocks of about 30 votes plus those that arrive while the
        /// previous block syncs, for at most 15 ms more before a vote is answered.
        public static let standard = BlockHold(limit: .milliseconds(15))
        /// Never hold a block open: each block takes what arrived while the last one was written.
        public static let none = BlockHold(limit: .zero)
    }

    /// The name of the writer's thread.
    static let threadName = "vote-writer"

    private let engine: Engine
    private let capacity: Int
    /// The time of the next block (and of an issuance's pre-check).
    let clock: @Sendable () -> Int64

    /// Takes over `ledger` (no one else may use it from now on) and starts the writer's thread. At most
    /// `capacity` commands wait for a block; `clock` gives each block its time (ms since the epoch); `hold`
    /// says how long a block is held open for more commands while they keep arriving.
    public init(
        _ ledger: sending ElectionLedger, capacity: Int = 100_000,
        clock: @escaping @Sendable () -> Int64 = { Clock.now() }, hold: BlockHold = .standard
    ) {
        voterSecret = ledger.voterSecret
        ballotKeys = ledger.ballotKeys
        engine = Engine(ledger, hold: hold)
        self.capacity = capacity
        self.clock = clock
        let engine = engine
        Thread {
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

    /// The head of the last durable block, signed with the authority key the ledger was opened with (so a
    /// server decrypts that key once). Runs between blocks: a head is signed only once its block is on disk.
    public func signedHead() async throws -> SignedNote {
        try await onLedger { try $0.signedHead() }
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
        // The writer's thread only.
        private let ledger: ElectionLedger
        /// When the writer last closed a block (ns); 0 before the first.
        private var lastBlock: UInt64 = 0

        init(_ ledger: sending ElectionLedger, hold: BlockHold) {
            self.ledger = ledger
            self.hold = hold
            meanGap = Engine.nanoseconds(hold.limit)
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
                        let gap = min(arrived &- lastArrival, Engine.nanoseconds(hold.limit))
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

        /// The writer's thread: takes the next block's commands, or a batch, a job or the end, until the end.
        func run(clock: @Sendable () -> Int64) {
            var closed = false
            while true {
                switch next() {
                case .commands(let commands, let replies):
                    write(commands, replies: replies, now: clock())
                case .batch(let commands, let proofs, let beforeWriting, let reply):
                    reply.resume(
                        with: Result {
                            try ledger.submit(commands, now: clock(), proofs: proofs, beforeWriting: beforeWriting)
                        })
                case .job(let body):
                    body(ledger)
                case .stop(let reply):
                    if !closed {
                        ledger.close()
                        closed = true
                    }
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
            case commands([Command], [(receipt: Bool, reply: CheckedContinuation<Recorded, any Error>)])
            case batch([Command], proofs: Bool, BeforeWriting, CheckedContinuation<BatchOutcome, any Error>)
            case job(@Sendable (ElectionLedger?) -> Void)
            case stop(CheckedContinuation<Void, Never>?)
        }

        /// The next work, waiting for some; commands are held open as `hold` says, then taken together.
        private func next() -> Work {
            condition.lock()
            defer { condition.unlock() }
            while first == queue.count { condition.wait() }
            switch queue[first] {
            case .command(_, _, _, let arrived):
                holdOpen(since: arrived)
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
                take(count: commands.count)
                return .batch(commands, proofs: proofs, beforeWriting, reply)
            case .job(let body):
                take(count: 0)
                return .job(body)
            case .stop(let reply):
                take(count: 0)
                return .stop(reply)
            }
        }

        /// Waits (the lock held, as `condition` waits do) while the block whose first command arrived at
        /// `arrived` should stay open for more (`BlockHold`).
        private func holdOpen(since arrived: UInt64) {
            let limit = Engine.nanoseconds(hold.limit)
            guard limit > 0, lastBlock > 0, Engine.now() &- lastBlock < limit else { return }
            let deadline = arrived + limit
            while barriers == 0, waiting < LedgerWriter.maxCommandsPerBlock {
                let quiet = hold.quiet.map(Engine.nanoseconds) ?? min(limit, 4 * meanGap)
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

        /// Decides `commands` at one block time, appends the accepted ones as one durable block, and answers
        /// each caller its own outcome.
        private func write(
            _ commands: [Command], replies: [(receipt: Bool, reply: CheckedContinuation<Recorded, any Error>)],
            now: Int64
        ) {
            do {
                let outcome = try ledger.submit(commands, now: now, proofs: replies.contains { $0.receipt })
                for ((receipt, reply), result) in zip(replies, outcome.results) {
                    switch result {
                    case .success(let event):
                        let proof = receipt ? try? outcome.tlogProof(for: event) : nil
                        reply.resume(returning: Recorded(event: event, receipt: proof))
                    case .failure(let violation): reply.resume(throwing: VoteError(violation))
                    }
                }
            } catch {
                for (_, reply) in replies { reply.resume(throwing: VoteError(error)) }
            }
        }
    }
}
