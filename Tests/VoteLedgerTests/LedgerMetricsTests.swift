import CoreMetrics
import Election
import MetricsTestKit
import Testing

@testable import VoteLedger

/// What the writer records through swift-metrics (`LedgerMetrics`), into MetricsTestKit's backend. swift-metrics
/// takes one bootstrap per process, so every ledger of every test in this process records into it while these
/// run: each check compares what its own ledger did with the totals before, as at least that much.
@Suite struct LedgerMetricsTests {
    /// This process's backend, bootstrapped by the first test that asks for it.
    static let metrics: TestMetrics = {
        let metrics = TestMetrics()
        MetricsSystem.bootstrap(metrics)
        return metrics
    }()

    /// Blocks another writer appended, taken in by this one, are counted; each block the writer writes is
    /// recorded once durable, with its commit time and its events.
    @Test func writerRecordsItsDurableBlocksAndTheBlocksItTookIn() async throws {
        let metrics = LedgerMetricsTests.metrics
        let (_, open) = try SharedWritersTests.sharedLedger()
        let (first, second) = (try open(), try open())
        // Three blocks by the first writer (the place, its candidates, its voters), which the second takes in.
        let tokens = try ServiceTests.election(through: first, voters: 3, votes: 0)
        let takenIn = metrics.counterTotal(label: LedgerMetrics.blocksTakenInLabel)
        try second.catchUp()
        #expect(metrics.counterTotal(label: LedgerMetrics.blocksTakenInLabel) - takenIn >= 3)

        let timed = LedgerMetricsTests.count(metrics.timers(label: LedgerMetrics.blockCommitLabel).map(\.values))
        let recorded = metrics.recorders(label: LedgerMetrics.blockEventsLabel).flatMap(\.values)
        let writer = LedgerWriter(second, clock: { SharedWritersTests.votingTime }, hold: .none)
        for token in tokens { _ = try await writer.submit(.castVote(place: 1, candidate: 1, tokenHash: token.hash)) }
        await writer.close()
        // One block a vote: submitted one after another, each answered once its block is durable.
        let timers = metrics.timers(label: LedgerMetrics.blockCommitLabel)
        #expect(LedgerMetricsTests.count(timers.map(\.values)) - timed >= 3)
        #expect(timers.allSatisfy { $0.values.allSatisfy { $0 >= 0 } })
        let events = metrics.recorders(label: LedgerMetrics.blockEventsLabel).flatMap(\.values)
        #expect(events.count - recorded.count >= 3)
        #expect(events.allSatisfy { $0 >= 1 })
    }

    private static func count(_ values: [[Int64]]) -> Int { values.reduce(0) { $0 + $1.count } }
}
