import Election
import Foundation
import Ledger
import TestSupport
import Testing
import VoteLedger

/// The writer actor, on every store: many concurrent callers, one block per write (group commit), each
/// caller its own outcome. A first block that waits for the test before it is written makes "arrived while
/// the last block was being written" a certainty rather than a race, so nothing here depends on the
/// machine's speed.
@Suite struct LedgerWriterTests {
    static let t0 = ServiceTests.t0
    /// Inside the voting window of `ServiceTests.election`.
    static let votingTime = t0 + 3000

    /// Holds the writer inside a block: a batch whose `beforeWriting` calls `hold()` waits there, on the
    /// writer's I/O queue, until `release()`. The writer is busy as it is while a block syncs, on any store.
    final class Gate: @unchecked Sendable {
        private let condition = NSCondition()
        private var holding = false
        private var released = false

        /// Waits for `release()`.
        func hold() {
            condition.withLock {
                holding = true
                while !released { condition.wait() }
                holding = false
            }
        }
        /// Whether the writer is held now.
        var isHolding: Bool { condition.withLock { holding } }
        func release() {
            condition.withLock {
                released = true
                condition.broadcast()
            }
        }
    }

    /// Polls until `condition` holds, every millisecond, for up to `waitDeadline` (TestSupport): a slow machine
    /// only waits longer, and a writer that never gets there fails the test instead of hanging it.
    static func waitUntil(_ what: String, _ condition: () async -> Bool) async throws {
        try await waitFor(what, every: .milliseconds(1), read: condition, until: { $0 })
    }

    /// Polls until `writer` holds `count` commands in its queue; a timeout names the last count seen.
    static func waitUntil(queued count: Int, in writer: LedgerWriter) async throws {
        try await waitFor(
            "\(count) commands queued", every: .milliseconds(1), read: { await writer.queued }, until: { $0 == count })
    }

    /// A writer over a fresh election with `voters` authorised voters, held in the block of its first vote.
    struct HeldWriter {
        let writer: LedgerWriter
        let gate: Gate
        let tokens: [VotingToken]
        /// The block of the vote of `tokens[0]` (its receipt too, with `proofs`), waiting for `gate`.
        let opener: Task<BatchOutcome, any Error>
        /// Reads back what the writer wrote.
        let read: @Sendable () throws -> any BlockSource
        let configuration: StoreConfiguration

        init(_ store: ServiceStore, voters: Int, capacity: Int = 100_000, proofs: Bool = false) async throws {
            configuration = store.configuration()
            let (ledger, tokens) = try ServiceTests.election(configuration, voters: voters, votes: 0)
            read = try ledger.reader()
            let writer = LedgerWriter(ledger, capacity: capacity, clock: { LedgerWriterTests.votingTime })
            let gate = Gate()
            opener = Task {
                try await writer.submit(
                    batch: [.castVote(place: 1, candidate: 1, tokenHash: tokens[0].hash)], proofs: proofs,
                    beforeWriting: { _ in gate.hold() })
            }
            try await LedgerWriterTests.waitUntil("the writer held at its first block") { gate.isHolding }
            self.writer = writer
            self.gate = gate
            self.tokens = tokens
        }
    }

    /// 64 concurrent tasks that arrive while a block is being written: all go into the next block, each gets
    /// the receipt of its own vote, and of two tasks casting the same token exactly one is refused.
    @Test(arguments: ServiceStore.allCases) func sixtyFourConcurrentCallersShareOneBlock(
        _ store: ServiceStore
    )
        async throws
    {
        let held = try await HeldWriter(store, voters: 64)
        defer { held.configuration.removeLedger() }
        let (writer, tokens) = (held.writer, held.tokens)

        // Tasks 0-61 cast tokens 1-62; tasks 62 and 63 both cast token 63.
        let casts: [Command] = (0..<64).map { task in
            .castVote(place: 1, candidate: UInt32(task % 2 + 1), tokenHash: tokens[min(task + 1, 63)].hash)
        }
        let outcomes = try await withThrowingTaskGroup(of: (Int, Result<EventReceipt, VoteError>).self) { group in
            for (task, command) in casts.enumerated() {
                group.addTask {
                    do { return (task, .success(try await writer.submit(command))) } catch {
                        return (task, .failure(VoteError(error)))
                    }
                }
            }
            try await LedgerWriterTests.waitUntil(queued: 64, in: writer)
            held.gate.release()
            var outcomes: [Int: Result<EventReceipt, VoteError>] = [:]
            for try await (task, outcome) in group { outcomes[task] = outcome }
            return outcomes
        }
        let openerHeight = try await held.opener.value.receipt(of: 0).height

        var heights: Set<UInt64> = []
        var eventIndexes: Set<UInt64> = []
        for task in 0..<62 {
            guard case .success(let receipt) = outcomes[task] else {
                Issue.record("task \(task): \(String(describing: outcomes[task]))")
                continue
            }
            #expect(
                receipt.event
                    == .voteCast(place: 1, candidate: UInt32(task % 2 + 1), tokenHash: tokens[task + 1].hash))
            heights.insert(receipt.height)
            eventIndexes.insert(receipt.index)
        }
        // The same token twice in one block: exactly one vote, and the other caller is told why.
        let pair = [outcomes[62], outcomes[63]]
        let accepted = pair.compactMap { outcome -> EventReceipt? in
            if case .success(let receipt) = outcome { return receipt }
            return nil
        }
        let refused = pair.compactMap { outcome -> VoteError? in
            if case .failure(let error) = outcome { return error }
            return nil
        }
        #expect(accepted.count == 1 && refused.count == 1)
        #expect(refused.first?.reason == .violation(.alreadyVoted))
        if let vote = accepted.first {
            guard case .voteCast(_, _, let tokenHash) = vote.event else { Issue.record("not a vote"); return }
            #expect(tokenHash == tokens[63].hash)
            heights.insert(vote.height)
            eventIndexes.insert(vote.index)
        }
        // Everything that arrived during the held block is in the one next block, with distinct leaves.
        #expect(heights == [openerHeight + 1])
        #expect(eventIndexes.count == 63)
        await writer.close()

        let verified = try ElectionVerifier.verify(held.read()).state
        #expect(verified.place(1).map(Projections.turnout)?.voted == 64)
    }

    /// A full queue is an error the caller sees at once, and nothing of its command is recorded; the
    /// commands already queued are all written.
    @Test(arguments: ServiceStore.allCases) func fullQueueIsRefusedNotBuffered(_ store: ServiceStore) async throws {
        let held = try await HeldWriter(store, voters: 6, capacity: 4)
        defer { held.configuration.removeLedger() }
        let (writer, tokens) = (held.writer, held.tokens)
        let queued = (1...4).map { index in
            Task { try await writer.submit(.castVote(place: 1, candidate: 2, tokenHash: tokens[index].hash)) }
        }
        try await LedgerWriterTests.waitUntil(queued: 4, in: writer)
        do {
            _ = try await writer.submit(.castVote(place: 1, candidate: 2, tokenHash: tokens[5].hash))
            Issue.record("a fifth command was queued beyond the capacity of 4")
        } catch let error as VoteError {
            #expect(error.reason == .overloaded)
        }
        held.gate.release()
        _ = try await held.opener.value
        for task in queued { _ = try await task.value }
        await writer.close()
        let verified = try ElectionVerifier.verify(held.read()).state
        #expect(verified.place(1).map(Projections.turnout)?.voted == 5)
    }

    /// Receipts asked of the writer come from its memory when the block is written, one signature per block:
    /// each of 32 concurrent callers (sharing one block) gets the receipt of its own vote, as does the batch
    /// before them, and the auditor accepts every one against the ledger as written.
    @Test(arguments: ServiceStore.allCases) func receiptsFromTheWriterAuditAgainstTheLedger(
        _ store: ServiceStore
    )
        async throws
    {
        let held = try await HeldWriter(store, voters: 33, proofs: true)
        defer { held.configuration.removeLedger() }
        let (writer, tokens) = (held.writer, held.tokens)
        let recorded =
            try await withThrowingTaskGroup(of: LedgerWriter.Recorded.self) { group in
                for task in 1...32 {
                    group.addTask {
                        try await writer.submit(
                            .castVote(place: 1, candidate: 2, tokenHash: tokens[task].hash), receipt: true)
                    }
                }
                try await LedgerWriterTests.waitUntil(queued: 32, in: writer)
                held.gate.release()
                var all: [LedgerWriter.Recorded] = []
                for try await one in group { all.append(one) }
                return all
            }
        let opener = try await held.opener.value
        let openerEvent = try opener.receipt(of: 0)
        await writer.close()

        let receipts =
            try recorded.map { one in (one.event, try #require(one.receipt)) } + [
                (openerEvent, try opener.tlogProof(for: openerEvent))
            ]
        let ledger = try AuditedLedger(held.read())
        #expect(Set(receipts.map { $0.0.height }).count == 2)
        for (event, receipt) in receipts {
            #expect(receipt.index == event.index)
            let report = try Auditor.audit(receipt: receipt, ledger: ledger, key: nil, head: nil)
            #expect(report.event == event.event)
        }
    }

    /// Receipts of one block, however they are made, are the same bytes: those a batch's outcome holds from
    /// the writer's memory, those proven from the log under the head right after the block (more than 64 at
    /// once: from the whole tree), and those proven later under that block's head once more blocks follow
    /// (the server's fallback when a head could not be signed). The writer signs its last durable head.
    @Test(arguments: ServiceStore.allCases) func receiptsFromMemoryAndFromTheLogAreTheSame(
        _ store: ServiceStore
    )
        async throws
    {
        let configuration = store.configuration()
        defer { configuration.removeLedger() }
        let (ledger, tokens) = try ServiceTests.election(configuration, voters: 72, votes: 0)
        let writer = LedgerWriter(ledger, clock: { LedgerWriterTests.votingTime })
        let outcome = try await writer.submit(
            batch: tokens.prefix(70).map { Command.castVote(place: 1, candidate: 1, tokenHash: $0.hash) }, proofs: true)
        let events = try (0..<70).map { try outcome.receipt(of: $0) }
        let fromMemory = try events.map(outcome.tlogProof(for:))
        #expect(try await writer.tlogProofs(for: events) == fromMemory)
        let last = try await writer.submit(
            .castVote(place: 1, candidate: 2, tokenHash: tokens[70].hash), receipt: true)
        #expect(try writer.published.signedHead() == last.receipt?.checkpoint)
        let later = try await writer.tlogProofs(for: Array(events.suffix(3)), underBlock: events[0].height)
        #expect(later.map(\.serialized) == fromMemory.suffix(3).map(\.serialized))
        let unasked = try await writer.submit(batch: [.castVote(place: 1, candidate: 1, tokenHash: tokens[71].hash)])
        #expect(throws: VoteError.self) { try unasked.tlogProof(for: try unasked.receipt(of: 0)) }
        await writer.close()
    }
}
