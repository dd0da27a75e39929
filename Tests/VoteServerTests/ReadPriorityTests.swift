import TestSupport
import Testing

@testable import VoteServer

/// Reads yield the cores to votes: the store's reader runs on threads of their own at a lower scheduling priority
/// than the event loops and the writer's thread (`LedgerServer.read`), so a flood of proofs and statuses takes what
/// the votes leave of a busy machine (`Tools/bench-http --trickle 2000 --readers 64` measures it).
@Suite struct ReadPriorityTests {
    @Test func readsRunAtTheReadersLowerPriority() async throws {
        let ledger = try ServedLedger("reads yield")
        for _ in 0..<8 {  // every reader thread the reads land on
            let nice = try await ledger.server.read { source in
                _ = try source.lastBlock()
                return currentThreadNice()
            }
            #expect(nice >= LedgerServer.readerNice, "a read ran at nice \(nice)")
        }
        try await ledger.close()
    }
}
