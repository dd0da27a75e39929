import Foundation
import TestSupport
import Testing

/// The tests' one way to wait (`waitFor`, `waitForBlocking` in TestSupport): a wait whose condition never holds
/// ends at its deadline with an error naming what it waited for and the last value it read, instead of hanging.
@Suite struct WaitForTests {
    @Test func aWaitThatNeverSucceedsFailsWithTheLastValue() async throws {
        var reads = 0
        do {
            try await waitFor(
                "a count of -1", deadline: .milliseconds(100), every: .milliseconds(5),
                read: {
                    reads += 1
                    return reads
                }, until: { $0 == -1 })
            Issue.record("the wait succeeded")
        } catch let error as WaitTimedOut {
            #expect(error.description.hasPrefix("waited 0.1 seconds for a count of -1; the last value seen was "))
            #expect(error.description.hasSuffix("was \(reads)"))
        }
        var blockingReads = 0
        #expect(throws: WaitTimedOut.self) {
            try waitForBlocking(
                "never", deadline: .milliseconds(50), every: .milliseconds(5),
                read: {
                    blockingReads += 1
                    return blockingReads
                }, until: { _ in false })
        }
        #expect(blockingReads >= 1)
    }

    /// Time the waiting task could not run does not spend the deadline: a deadline of 1.5 s, and a first read that
    /// holds the wait's thread for 3 s (as a pool busy with other tests' work holds a task back); the second read
    /// succeeds.
    @Test func aStarvedWaitDoesNotSpendItsDeadline() throws {
        var reads = 0
        let value = try waitForBlocking(
            "the second read", deadline: .milliseconds(1500), every: .milliseconds(5),
            read: {
                reads += 1
                if reads == 1 { usleep(3_000_000) }
                return reads
            }, until: { $0 == 2 })
        #expect(value == 2)
    }

    @Test func aWaitReturnsTheValueThatEndedIt() async throws {
        var reads = 0
        let value = try await waitFor(
            "three reads", every: .milliseconds(1),
            read: {
                reads += 1
                return reads
            }, until: { $0 == 3 })
        #expect(value == 3)
    }
}
