import Dispatch
public import Election
public import Ledger

/// The one writer of an open ledger, shared by any number of concurrent callers (a server's requests,
/// workers of a bulk job). Commands are decided in arrival order; every command that arrives while a block
/// is being written and synced goes into the next block (group commit), so one fsync acknowledges them
/// all, and each caller gets its own outcome (its receipt, or its violation) only once that block is
/// durable. The queue is bounded: a caller that finds it full is told so and nothing of its is recorded.
public actor LedgerWriter {
    /// Commands one block takes at most (the CLI's default bulk batch); the rest wait for the next block.
    public static let maxCommandsPerBlock = 10_000

    /// What runs just before a batch's block is written, with each command's decision (bulk authorisation
    /// saves the issued tokens there); if it throws, nothing of the batch is recorded.
    public typealias BeforeWriting = @Sendable ([Result<EventReceipt, Violation>]) throws -> Void

    /// Commands waiting for their block, and the caller waiting for their outcome: one command that shares a
    /// block with whatever else arrived, or a caller's whole batch (a bulk job), which gets a block of its
    /// own so that its `beforeWriting` sees exactly its own commands.
    private enum Pending {
        case command(Command, receipt: Bool, CheckedContinuation<Recorded, any Error>)
        case batch([Command], proofs: Bool, BeforeWriting, CheckedContinuation<BatchOutcome, any Error>)

        var count: Int {
            switch self {
            case .command: 1
            case .batch(let commands, _, _, _): commands.count
            }
        }
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
    /// Commands that may wait for a block at once; beyond it callers are refused as overloaded.
    public nonisolated let capacity: Int
    /// The time of the next block (and of an issuance's pre-check), in ms since the epoch.
    public nonisolated let clock: @Sendable () -> Int64
    private var queue: [Pending] = []
    /// Commands in `queue`, counting each of a batch.
    private var waiting = 0
    private var writing = false
    private var closed = false
    private var drained: [CheckedContinuation<Void, Never>] = []

    /// Takes over `ledger` (no one else may use it from now on). At most `capacity` commands wait for a
    /// block; `clock` gives each block its time (ms since the epoch).
    public init(
        _ ledger: sending ElectionLedger, capacity: Int = 100_000,
        clock: @escaping @Sendable () -> Int64 = { Clock.now() }
    ) {
        voterSecret = ledger.voterSecret
        ballotKeys = ledger.ballotKeys
        published = ledger.published
        owned = OwnedLedger(ledger)
        self.capacity = capacity
        self.clock = clock
    }

    /// Commands waiting for the next block (not counting the block being written).
    public var queued: Int { waiting }

    /// The ledger's voter secret, so callers tag identities without waiting for the writer.
    public nonisolated let voterSecret: any VoterSecretKey

    /// The private halves of the ledger's ballot keys (anonymous places).
    public nonisolated let ballotKeys: BallotKeys

    /// The election at the last durable block, which the writer publishes after each block: what readers
    /// (a server's routes) take instead of replaying the ledger.
    public nonisolated let published: PublishedView

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
        try admit(1)
        return try await withCheckedThrowingContinuation { reply in enqueue(.command(command, receipt: receipt, reply))
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
        try admit(commands.count)
        return try await withCheckedThrowingContinuation { reply in
            enqueue(.batch(commands, proofs: proofs, beforeWriting, reply))
        }
    }

    /// Refuses `count` more commands when the writer is closed or they do not fit in the queue.
    private func admit(_ count: Int) throws {
        guard !closed else { throw VoteError(.refused, "the ledger's writer is closed") }
        guard waiting + count <= capacity else {
            throw VoteError(
                .overloaded, "the ledger's writer has \(waiting) commands waiting; nothing was recorded, try again")
        }
    }

    private func enqueue(_ pending: Pending) {
        queue.append(pending)
        waiting += pending.count
        if !writing {
            writing = true
            Task { await drain() }
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

    /// `body` with the ledger, on `io` between blocks.
    func onLedger<T: Sendable>(_ body: @escaping @Sendable (ElectionLedger) throws -> T) async throws -> T {
        let owned = owned
        return try await withCheckedThrowingContinuation { done in
            io.async { done.resume(with: Result { try body(owned.ledger) }) }
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
    /// one was being written, except that a caller's batch is a block of its own.
    private func drain() async {
        while let first = queue.first {
            if case .batch(let commands, let proofs, let beforeWriting, let reply) = first {
                queue.removeFirst()
                waiting -= commands.count
                reply.resume(with: await write(commands, proofs: proofs, beforeWriting: beforeWriting))
                continue
            }
            var replies: [(receipt: Bool, reply: CheckedContinuation<Recorded, any Error>)] = []
            var commands: [Command] = []
            for pending in queue.prefix(LedgerWriter.maxCommandsPerBlock) {
                guard case .command(let command, let receipt, let reply) = pending else { break }
                commands.append(command)
                replies.append((receipt, reply))
            }
            queue.removeFirst(commands.count)
            waiting -= commands.count
            switch await write(commands, proofs: replies.contains { $0.receipt }) {
            case .success(let outcome):
                for ((receipt, reply), result) in zip(replies, outcome.results) {
                    switch result {
                    case .success(let event):
                        let proof = receipt ? try? outcome.tlogProof(for: event) : nil
                        reply.resume(returning: Recorded(event: event, receipt: proof))
                    case .failure(let violation): reply.resume(throwing: VoteError(violation))
                    }
                }
            case .failure(let error):
                for (_, reply) in replies { reply.resume(throwing: VoteError(error)) }
            }
        }
        writing = false
        drained.forEach { $0.resume() }
        drained.removeAll()
    }

    /// Decides `commands` at one block time and appends the accepted ones as one durable block, on `io`.
    /// A store failure comes back as a `VoteError`; a failure of `beforeWriting` as it was thrown.
    private func write(
        _ commands: [Command], proofs: Bool = false, beforeWriting: @escaping BeforeWriting = { _ in }
    ) async
        -> Result<BatchOutcome, any Error>
    {
        let now = clock()
        let owned = owned
        return await withCheckedContinuation { done in
            io.async {
                done.resume(
                    returning: Result {
                        try owned.ledger.submit(commands, now: now, proofs: proofs, beforeWriting: beforeWriting)
                    })
            }
        }
    }
}
