import CoreMetrics

/// What the ledger's writer records for an operator, through swift-metrics' API only: the backend is whatever
/// the program bootstrapped (`vote serve` exports them in Prometheus' text format at `/metrics`); a program
/// that bootstrapped none keeps nothing. Each metric is made on first use, so a program bootstraps its backend
/// before it opens a ledger. The names are the exported ones (README, "Metrics").
public enum LedgerMetrics {
    /// The time from the writer starting a block (deciding its commands) to the block being durable, in seconds.
    public static let blockCommitLabel = "vote_block_commit_seconds"
    /// The events of each durable block the writer wrote.
    public static let blockEventsLabel = "vote_block_events"
    /// Blocks other writers of the store appended that this writer took in (several servers on one database).
    public static let blocksTakenInLabel = "vote_blocks_taken_in_total"

    static let blockCommit = CoreMetrics.Timer(label: blockCommitLabel)
    static let blockEvents = Recorder(label: blockEventsLabel, aggregate: true)
    static let blocksTakenIn = Counter(label: blocksTakenInLabel)
}
