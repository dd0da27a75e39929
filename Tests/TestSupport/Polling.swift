import Foundation

// Waiting for something another process or thread does (a standby catching up, a server reading the others'
// blocks, a writer queueing): poll with a deadline. The deadline is generous, so a slow or loaded machine only
// waits longer, and a regression fails the test, naming the last value seen, instead of hanging CI.

/// A wait that ended without what it waited for: what it waited for, for how long, and the last value it saw.
public struct WaitTimedOut: Error, CustomStringConvertible {
    /// One line: what was awaited, the deadline and the last value read.
    public let description: String

    init(_ what: String, deadline: Duration, last: Any) {
        description = "waited \(deadline) for \(what); the last value seen was \(last)"
    }
}

/// How long a test waits for something before it fails: five minutes, far beyond what any wait takes on a
/// loaded machine.
public let waitDeadline: Duration = .seconds(300)

/// Reads `read()` every `interval` until `done` holds for what it returned, and returns that value; once
/// `deadline` has been spent, throws `WaitTimedOut` naming `what` and the last value read. Errors of `read` and
/// `done` end the wait.
///
/// The deadline is spent by the time from one read to the next, each gap counted for at most `interval` plus a
/// second: a test task that the scheduler left waiting (every thread of Swift concurrency's pool, one per core,
/// busy with other tests' blocking work) has not waited for its condition meanwhile. A wait of 1 ms resumed
/// five minutes late once failed CI that way, after two reads.
@discardableResult
public func waitFor<Value>(
    _ what: String, deadline: Duration = waitDeadline, every interval: Duration = .milliseconds(20),
    read: () async throws -> Value, until done: (Value) throws -> Bool
) async throws -> Value {
    var budget = WaitBudget(deadline, interval: interval)
    while true {
        let value = try await read()
        if try done(value) { return value }
        guard budget.spend() else { throw WaitTimedOut(what, deadline: deadline, last: value) }
        try await Task.sleep(for: interval)
    }
}

/// What is left of a wait's deadline (see `waitFor`).
struct WaitBudget {
    private let clock = ContinuousClock()
    private var left: Duration
    private var last: ContinuousClock.Instant
    private let longestGap: Duration

    init(_ deadline: Duration, interval: Duration) {
        left = deadline
        last = clock.now
        longestGap = interval + .seconds(1)
    }

    /// Counts the time since the last call (at most `longestGap` of it); whether some of the deadline is left.
    mutating func spend() -> Bool {
        let now = clock.now
        left -= min(now - last, longestGap)
        last = now
        return left > .zero
    }
}

/// `waitFor` for a caller that cannot suspend (a synchronous test, a thread of its own): it sleeps the thread
/// between reads.
@discardableResult
public func waitForBlocking<Value>(
    _ what: String, deadline: Duration = waitDeadline, every interval: Duration = .milliseconds(10),
    read: () throws -> Value, until done: (Value) throws -> Bool
) throws -> Value {
    var budget = WaitBudget(deadline, interval: interval)
    while true {
        let value = try read()
        if try done(value) { return value }
        guard budget.spend() else { throw WaitTimedOut(what, deadline: deadline, last: value) }
        usleep(useconds_t(interval / .microseconds(1)))
    }
}
