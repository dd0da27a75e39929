import Election
import Foundation
import Ledger
import LedgerCrypto
import TestSupport
import Testing

@testable import VoteLedger

/// Several writers on one ledger, as several servers on one PostgreSQL database are: each decides its blocks
/// under the store's head after taking in what the others appended, so the chain has no fork and no gap, every
/// token votes once whichever writer it reaches, and each writer's published view follows the others' blocks.
/// Run on the memory store's shared writers (`MemoryBlockSource.openWriter(authority:shared:)`), the same seam
/// (`BlockAppender.write(deciding:)`, `catchUp`) the PostgreSQL store implements.
@Suite(.timeLimit(.minutes(10))) struct SharedWritersTests {
    static let t0 = ServiceTests.t0
    static let votingTime = t0 + 3000

    /// A ledger in memory that writers share, holding only the voter secret's commitment: the store to read it
    /// back, and what opens one more writer of it (an `ElectionLedger`).
    static func sharedLedger() throws -> (store: MemoryBlockSource, open: () throws -> ElectionLedger) {
        let key = try Ed25519PrivateKey()
        let secret = try FileVoterSecret.generate()
        let id = try LedgerID.random()
        let store = try MemoryBlockSource(name: "shared", authority: key, ledgerID: id, timestamp: t0)
        let first = try store.openWriter(authority: key, shared: true)
        try first.append(
            [ElectionEvent.voterSecretCommitment(secret.commitment(ledgerID: id)).ledgerEvent], timestamp: t0)
        first.close()
        return (
            store,
            {
                try ElectionLedger(
                    OpenedStore(
                        appender: store.openWriter(authority: key, shared: true), derived: MemoryDerivedStore(),
                        secret: secret, keys: nil, secretLocation: nil), log: { _ in })
            }
        )
    }

    /// Votes reach two writers at once, each token through both: every token is counted once, the other
    /// writer refusing it as already voted, though it learnt of the vote only from the store; the chain verifies.
    @Test func everyTokenVotesOnceWhicheverWriterItReaches() async throws {
        let (store, open) = try SharedWritersTests.sharedLedger()
        let (first, second) = (try open(), try open())
        let tokens = try ServiceTests.election(through: first, voters: 60, votes: 0)
        let writers = [
            LedgerWriter(first, clock: { SharedWritersTests.votingTime }, hold: .none),
            LedgerWriter(second, clock: { SharedWritersTests.votingTime }, hold: .none),
        ]
        let outcomes = try await withThrowingTaskGroup(of: Bool.self) { group in
            for (index, token) in tokens.enumerated() {
                for writer in index % 2 == 0 ? writers : writers.reversed() {
                    group.addTask {
                        do {
                            _ = try await writer.submit(.castVote(place: 1, candidate: 1, tokenHash: token.hash))
                            return true
                        } catch let error as VoteError {
                            guard case .violation(.alreadyVoted) = error.reason else { throw error }
                            return false
                        }
                    }
                }
            }
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        for writer in writers { await writer.close() }
        #expect(outcomes.count(where: { $0 }) == tokens.count)
        let verified = try ElectionVerifier.verify(store)
        #expect(verified.chain.height == store.lastBlock().height)
        #expect(verified.state.place(1).map(Projections.turnout)?.voted == UInt64(tokens.count))
    }

    /// A writer that writes nothing still shows what the others wrote: its published view follows them.
    @Test func anIdleWriterPublishesTheOthersBlocks() async throws {
        let (store, open) = try SharedWritersTests.sharedLedger()
        let (first, second) = (try open(), try open())
        let tokens = try ServiceTests.election(through: first, voters: 3, votes: 0)
        let idle = LedgerWriter(second, clock: { SharedWritersTests.votingTime })
        let busy = LedgerWriter(first, clock: { SharedWritersTests.votingTime })
        for token in tokens { _ = try await busy.submit(.castVote(place: 1, candidate: 2, tokenHash: token.hash)) }
        let head = store.lastBlock()
        try await waitFor(
            "the idle writer to publish the busy one's head", read: { idle.published.view.head }, until: { $0 == head })
        #expect(idle.published.view.state.place(1).map(Projections.turnout)?.voted == 3)
        await busy.close()
        await idle.close()
    }
}
