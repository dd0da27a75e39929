public import Election
public import Ledger

/// What the command line's writing commands read of the ledger beside their commands: the election state
/// at the last durable block and a reader of the ledger. Both run between blocks, on the writer.
extension LedgerWriter {
    /// The election state after the last durable block (counts only: the voter roll is the writer's).
    public func state() async throws -> ElectionState {
        try await onLedger { $0.state }
    }

    /// A reader of this ledger that sees every block written so far, also once the writer is closed.
    public func source() async throws -> any BlockSource {
        try await onLedger { try $0.source() }
    }
}
