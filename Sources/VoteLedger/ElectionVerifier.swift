public import Election
import Foundation
public import Ledger
import LedgerCrypto

/// A verified block's election events, decoded on the verifier's checking thread; decoding stops at the
/// first event that is not one (`failure`: its offset and why).
struct DecodedBlock: Sendable {
    var header: BlockHeader
    var events: [ElectionEvent] = []
    var failure: (offset: Int, error: DecodeError)?

    init(_ block: EncodedBlock) {
        header = block.header
        guard header.height > 0 else { return }
        events.reserveCapacity(Int(header.eventCount))
        for (offset, stored) in block.events.enumerated() {
            do { events.append(try ElectionEvent(type: stored.type, payload: stored.payload)) } catch {
                failure = (offset, error)
                return
            }
        }
    }
}

/// Full verification: the chain (frames, hashes, tree heads, signatures) and every election event
/// re-decided by the contract at its block's time.
public enum ElectionVerifier {
    public struct Report {
        public var chain: VerificationReport
        /// The places and counts (a counts-only state: the voter roll is `roll`).
        public var state: ElectionState
        /// The voter roll the log builds.
        var roll: VoterTable
    }

    /// Verifies the chain of `source` and re-decides every election event in it.
    public static func verify(_ source: some BlockSource) throws -> Report {
        // Room for the roll up front, so it does not regrow (and briefly double) on the way: an authorisation
        // adds two entries and a vote none, so 1.5 entries per event fits any election with a turnout of at
        // least a third; a lower turnout grows the table once.
        let events = (try? source.lastBlock().treeSize) ?? 0
        let capacity = Int(min(events, 1 << 26)) * 3 / 2
        // The roll is folded straight into the table (the log is final), the places and counts into the state.
        let roll = VoterTable(capacity: capacity)
        var state = ElectionState(roll: nil)
        let chain = try ElectionLedger.wrap {
            var keys: [VoterTable.Key] = []
            return try ChainVerifier.verify(source, prepare: DecodedBlock.init) { block in
                guard block.header.height > 0 else { return }
                if let (offset, error) = block.failure {
                    throw VoteError(
                        .integrity(block: block.header.height, offset: nil),
                        "integrity failure: block \(block.header.height), event \(offset): \(error)")
                }
                keys.removeAll(keepingCapacity: true)
                for event in block.events { VoterRoll.keys(of: event, into: &keys) }
                roll.prefetch(keys)
                for (offset, event) in block.events.enumerated() {
                    let index = block.header.treeSize - UInt64(block.header.eventCount) + UInt64(offset)
                    do {
                        try Contract.recheck(
                            event, state: state, committed: roll, at: block.header.timestamp, index: index)
                    } catch let violation as Violation {
                        throw VoteError(
                            .integrity(block: block.header.height, offset: nil),
                            "integrity failure: block \(block.header.height), event \(offset) breaks the rules: \(violation)"
                        )
                    }
                    state.apply(event)
                    roll.apply(event)
                }
            }
        }
        return Report(chain: chain, state: state, roll: roll)
    }
}
