import Election
public import Ledger
public import LedgerCrypto

// The event a voter cast, found again from what the voter holds: the token (an ordinary place) or the
// credential (an anonymous place). A server hands its receipt again to a voter whose answer was lost.

extension ElectionView {
    /// The vote cast with the token whose hash is `tokenHash` in `place` by this view's head; nil if that token
    /// cast none there (never issued there, replaced by a re-issue, or not voted yet). Found through the status
    /// index (`StatusIndex`, kept in `derived`), and checked against the event it points to in the log.
    public func castVote(
        _ source: any BlockSource, place: UInt32, tokenHash: Digest, derived: any DerivedStore
    ) throws -> EventReceipt? {
        guard
            let record = try StatusIndex.record(
                source: source, head: head, place: place, tokenHash: tokenHash, derived: derived),
            record.hasVoted == true, let found = try ElectionView.event(at: record.voted, in: source),
            found.event.isVote(in: place, tokenHash: tokenHash)
        else { return nil }
        return found
    }

    /// The anonymous ballot cast with `credential` in `place` by this view's head; nil if none was. The log is
    /// read from the start (no index names ballots by credential): a caller bounds how many run at once.
    public func castBallot(_ source: any BlockSource, place: UInt32, credential: [UInt8]) throws -> EventReceipt? {
        let cast = [ElectionEvent.Tag.anonymousVoteCast.rawValue, ElectionEvent.Tag.anonymousBallotCast.rawValue]
        var found: EventReceipt?
        try source.forEachBlock(from: 1) { block in
            guard found == nil, block.header.height <= head.height else { return }
            let first = block.header.treeSize - UInt64(block.header.eventCount)
            for (offset, event) in block.events.enumerated() where cast.contains(event.type) {
                switch try? ElectionEvent(event.ledgerEvent) {
                case .anonymousVoteCast(place, _, credential, _)?, .anonymousBallotCast(place, credential, _, _)?: break
                default: continue
                }
                found = EventReceipt(
                    height: block.header.height, index: first + UInt64(offset), eventHash: event.leafHash,
                    event: try ElectionEvent(event.ledgerEvent))
                return
            }
        }
        return found
    }

    /// The event that created `place`, by this view's head; nil if none did. The log is read from its start up to
    /// that event (no index names it): a place is created before its voters are authorised, so it is read early.
    public func placeCreation(_ source: any BlockSource, place: UInt32) throws -> EventReceipt? {
        let created = ElectionEvent.Tag.placeCreated.rawValue
        var height: UInt64 = 1
        while height <= head.height, let block = try source.block(at: height) {
            let first = block.header.treeSize - UInt64(block.header.eventCount)
            for (offset, event) in block.events.enumerated() where event.type == created {
                guard let decoded = try? ElectionEvent(event.ledgerEvent), case .placeCreated(let made) = decoded,
                    made.id == place
                else { continue }
                return EventReceipt(
                    height: height, index: first + UInt64(offset), eventHash: event.leafHash, event: decoded)
            }
            height += 1
        }
        return nil
    }

    /// The event at leaf `index` of `source`, as a receipt names it; nil if the log has no such event or it
    /// does not decode.
    private static func event(at index: UInt64, in source: any BlockSource) throws -> EventReceipt? {
        guard let height = try source.height(ofEvent: index), let raw = try source.storedBlock(at: height),
            let block = try? EncodedBlock(decoding: raw), block.header.height == height
        else { return nil }
        let first = block.header.treeSize - UInt64(block.header.eventCount)
        guard index >= first, index - first < UInt64(block.events.count) else { return nil }
        let stored = block.events[Int(index - first)]
        guard let event = try? ElectionEvent(stored.ledgerEvent) else { return nil }
        return EventReceipt(height: height, index: index, eventHash: stored.leafHash, event: event)
    }
}

extension ElectionEvent {
    /// Whether this is the vote (a candidate's or a ballot's answers) cast in `place` with `tokenHash`.
    func isVote(in place: UInt32, tokenHash: Digest) -> Bool {
        switch self {
        case .voteCast(place, _, tokenHash), .ballotCast(place, tokenHash, _): true
        default: false
        }
    }
}
