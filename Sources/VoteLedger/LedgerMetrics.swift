import CoreMetrics

/// What the ledger's writer records for an operator, through swift-metrics' API only: the backend is whatever
/// the program bootstrapped (`vote serve` exports them in Prometheus' text format at `/metrics`); a program
/// that bootstrapped none keeps nothing. Each record looks its metric up in the backend there is then (once a
/// block, not once a vote), so a metric is never left with the no-op backend of before the bootstrap. The names
/// are the exported ones (README, "Metrics").
public enum LedgerMetrics {
    /// The time from the writer starting a block (deciding its commands) to the block being durable, in seconds.
    public static let blockCommitLabel = "vote_block_commit_seconds"
    /// The events of each durable block the writer wrote.
    public static let blockEventsLabel = "vote_block_events"
    /// Blocks other writers of the store appended that this writer took in (several servers on one database).
    public static let blocksTakenInLabel = "vote_blocks_taken_in_total"

    /// A block the writer wrote is durable: it holds `events` events and took `nanoseconds` from being started.
    static func blockDurable(events: Int, nanoseconds: Int64) {
        CoreMetrics.Timer(label: blockCommitLabel).recordNanoseconds(nanoseconds)
        Recorder(label: blockEventsLabel, aggregate: true).record(events)
    }

    /// The writer took in `count` blocks other writers appended.
    static func tookIn(blocks count: Int) {
        Counter(label: blocksTakenInLabel).increment(by: count)
    }
}
