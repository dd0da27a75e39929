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
/// `deadline` has passed, throws `WaitTimedOut` naming `what` and the last value read. Errors of `read` and
/// `done` end the wait.
@discardableResult
public func waitFor<Value>(
    _ what: String, deadline: Duration = waitDeadline, every interval: Duration = .milliseconds(20),
    read: () async throws -> Value, until done: (Value) throws -> Bool
) async throws -> Value {
    let clock = ContinuousClock()
    let end = clock.now + deadline
    while true {
        let value = try await read()
        if try done(value) { return value }
        guard clock.now < end else { throw WaitTimedOut(what, deadline: deadline, last: value) }
        try await Task.sleep(for: interval)
    }
}

/// `waitFor` for a caller that cannot suspend (a synchronous test, a thread of its own): it sleeps the thread
/// between reads.
@discardableResult
public func waitForBlocking<Value>(
    _ what: String, deadline: Duration = waitDeadline, every interval: Duration = .milliseconds(10),
    read: () throws -> Value, until done: (Value) throws -> Bool
) throws -> Value {
    let clock = ContinuousClock()
    let end = clock.now + deadline
    while true {
        let value = try read()
        if try done(value) { return value }
        guard clock.now < end else { throw WaitTimedOut(what, deadline: deadline, last: value) }
        usleep(useconds_t(interval / .microseconds(1)))
    }
}
