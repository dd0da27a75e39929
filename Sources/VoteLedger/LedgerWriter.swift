import Dispatch
public import Election

/// The one writer of an open ledger, shared by any number of concurrent callers (a server's requests,
/// workers of a bulk job). Commands are decided in arrival order; every command that arrives while a block
/// is being written and synced goes into the next block (group commit), so one fsync acknowledges them
/// all, and each caller gets its own outcome (its receipts, or its violation) only once that block is
/// durable. The queue is bounded: a caller that finds it full is told so and nothing of its is recorded.
public actor LedgerWriter {
    /// Commands one block takes at most (the CLI's default bulk batch); the rest wait for the next block.
    public static let maxCommandsPerBlock = 10_000

    /// A command waiting for its block, and the caller waiting for its outcome.
    private struct Pending {
        let command: Command
        let reply: CheckedContinuation<[EventReceipt], any Error>
    }

    /// The open ledger, used only on `io` and only by one block at a time: `drain` awaits each block
    /// before it starts the next, and `close` waits for `drain` to finish.
    private final class OwnedLedger: @unchecked Sendable {
        let ledger: ElectionLedger
        init(_ ledger: ElectionLedger) { self.ledger = ledger }
    }

    private let owned: OwnedLedger
    /// Blocking file work (write, fsync) runs here, so the actor keeps accepting commands meanwhile.
    private let io = DispatchQueue(label: "voteledger.writer")
    private let capacity: Int
    private let clock: @Sendable () -> Int64
    private var queue: [Pending] = []
    private var writing = false
    private var closed = false
    private var drained: [CheckedContinuation<Void, Never>] = []

    /// Takes over `ledger` (no one else may use it from now on). At most `capacity` commands wait for a
    /// block; `clock` gives each block its time (ms since the epoch).
    public init(
        _ ledger: sending ElectionLedger, capacity: Int = 100_000,
        clock: @escaping @Sendable () -> Int64 = { Clock.now() }
    ) {
        owned = OwnedLedger(ledger)
        self.capacity = capacity
        self.clock = clock
    }

    /// Commands waiting for the next block (not counting the block being written).
    public var queued: Int { queue.count }

    /// Decides `command` in arrival order and returns its receipts once the block holding it is durable.
    /// Throws `VoteError` with `.violation` if a rule refuses it, `.overloaded` if the queue is full, or
    /// the store's failure if its block could not be written (then nothing of the block was recorded).
    public func submit(_ command: Command) async throws -> [EventReceipt] {
        guard !closed else { throw VoteError(.refused, "the ledger's writer is closed") }
        guard queue.count < capacity else {
            throw VoteError(.overloaded, "the ledger's writer has \(capacity) commands waiting; nothing was recorded, try again")
        }
        return try await withCheckedThrowingContinuation { reply in
            queue.append(Pending(command: command, reply: reply))
            if !writing {
                writing = true
                Task { await drain() }
            }
        }
    }

    /// Waits for every accepted command to be written, then closes the ledger (saving its index and a
    /// snapshot, releasing the writer lock). Later submissions are refused.
    public func close() async {
        closed = true
        if writing { await withCheckedContinuation { drained.append($0) } }
        let owned = owned
        await withCheckedContinuation { done in
            io.async {
                owned.ledger.close()
                done.resume()
            }
        }
    }

    // MARK: - Group commit

    /// Writes blocks until the queue is empty: each block takes everything that arrived while the last
    /// one was being written.
    private func drain() async {
        while !queue.isEmpty {
            let batch = Array(queue.prefix(LedgerWriter.maxCommandsPerBlock))
            queue.removeFirst(batch.count)
            switch await write(batch.map(\.command)) {
            case .success(let outcome):
                for (pending, result) in zip(batch, outcome.results) {
                    switch result {
                    case .success(let receipts): pending.reply.resume(returning: receipts)
                    case .failure(let violation): pending.reply.resume(throwing: VoteError(violation))
                    }
                }
            case .failure(let error):
                for pending in batch { pending.reply.resume(throwing: error) }
            }
        }
        writing = false
        drained.forEach { $0.resume() }
        drained.removeAll()
    }

    /// Decides `commands` at one block time and appends the accepted ones as one durable block, on `io`.
    private func write(_ commands: [Command]) async -> Result<BatchOutcome, VoteError> {
        let now = clock()
        let owned = owned
        return await withCheckedContinuation { done in
            io.async {
                done.resume(returning: Result { try owned.ledger.submit(commands, now: now) }.mapError { VoteError($0) })
            }
        }
    }
}
