import Ballots
import Dispatch
public import Election
import Foundation
public import Ledger
import LedgerCrypto

/// A verified block's election events, decoded on the verifier's checking thread; decoding stops at the
/// first event that is not one (`failure`: its offset and why).
struct DecodedBlock: Sendable {
    var header: BlockHeader
    /// The events whose contents the block holds, in order.
    var events: [ElectionEvent] = []
    /// The position of each of `events` in the block; nil when they are all of the block's events.
    var offsets: [Int]?
    /// The withheld events of a public copy (FORMAT.md §3.8, §11.20), with their positions in the block.
    var withheld: [(offset: Int, event: WithheldEvent)] = []
    var failure: (offset: Int, error: DecodeError)?

    init(_ block: EncodedBlock) {
        header = block.header
        guard header.height > 0 else { return }
        events.reserveCapacity(Int(header.eventCount))
        for (offset, stored) in block.events.enumerated() {
            if stored.type == WithheldEvent.eventType, let withheld = WithheldEvent(stored.ledgerEvent) {
                if offsets == nil { offsets = Array(0..<offset) }
                self.withheld.append((offset, withheld))
                continue
            }
            do {
                events.append(try ElectionEvent(type: stored.type, payload: stored.payload))
                offsets?.append(offset)
            } catch {
                failure = (offset, error)
                return
            }
        }
    }
}

/// The rules applied to a log in order (FORMAT.md §11.6): every election event re-decided by the contract at
/// its block's time, then folded into the places and counts (`state`) and the voter roll (`roll`). `verify`
/// and every replay that counts (tally, export, the results routes, a writer opening its ledger) fold
/// through this one type, so a count never includes an event the rules refuse, and all of them refuse it
/// with the same words.
struct RuleFold {
    /// The places and counts (a counts-only state: the voter roll is `roll`).
    var state: ElectionState
    /// The voter roll: the whole of it from the genesis block, or after a snapshot what the blocks since
    /// then read and write (`ElectionView.replay`).
    let roll: VoterTable
    /// The ledger's genesis time, which the voter secret commitment's block must have (§11.16).
    let createdAt: Int64
    /// The keys of the block being folded, to prefetch (kept to reuse its storage).
    private var keys: [VoterTable.Key] = []
    /// The withheld events of a public copy (FORMAT.md §11.20), per place: their contents are not re-decided
    /// and not counted.
    private(set) var withheld: [UInt32: Int] = [:]
    /// Recounts a place's questions from the ledger's blocks up to a height (`recounting(_:)`), so that a
    /// certification of ballot results is checked against the ballots (FORMAT.md rule 11.26.5).
    let recount: (PlaceState, UInt64) throws -> [QuestionCount]?

    /// The recount of `source`'s ballots that `recount` is: every replay that counts checks certificates with it.
    static func recounting(_ source: some BlockSource) -> (PlaceState, UInt64) throws -> [QuestionCount]? {
        { place, height in
            guard let head = try source.header(at: height) else { return nil }
            return try ElectionView.ballotCount(of: place, in: source, upTo: head)
        }
    }

    /// Folds the blocks of the ledger `genesis` opens, onto `state` and `roll` (after a snapshot, what it holds).
    init(
        _ genesis: Genesis, state: ElectionState = ElectionState(roll: nil), roll: VoterTable,
        recount: @escaping (PlaceState, UInt64) throws -> [QuestionCount]?
    ) {
        createdAt = genesis.createdAt
        self.state = state
        self.roll = roll
        self.recount = recount
    }

    /// Checks and folds the next block; throws the integrity failure `vote verify` reports for its first
    /// event that does not decode (before any rule), else for its first event that breaks a rule.
    mutating func fold(_ block: DecodedBlock) throws {
        let height = block.header.height
        guard height > 0 else { return }
        if let (offset, error) = block.failure {
            throw VoteError(
                .integrity(block: height, offset: nil), "integrity failure: block \(height), event \(offset): \(error)")
        }
        keys.removeAll(keepingCapacity: true)
        for event in block.events { VoterRoll.keys(of: event, into: &keys) }
        roll.prefetch(keys)
        // A replay reads blocks whose chain it has not checked (tally, export): a header whose tree is smaller
        // than its own events is damage, reported as such rather than trapping.
        let (firstIndex, underflow) = block.header.treeSize.subtractingReportingOverflow(
            UInt64(block.header.eventCount))
        guard !underflow else {
            throw VoteError(
                .integrity(block: height, offset: nil),
                "integrity failure: block \(height) holds more events than its tree size")
        }
        try checkWithheldPlaces(at: block.header)
        let verified = RuleFold.verifiedSignatures(block.events, state: state)
        var nextWithheld = 0
        for (position, event) in block.events.enumerated() {
            let offset = block.offsets?[position] ?? position
            while nextWithheld < block.withheld.count, block.withheld[nextWithheld].offset < offset {
                try admit(block.withheld[nextWithheld], in: block.header)
                nextWithheld += 1
            }
            do {
                try Contract.recheck(
                    event, state: state, committed: roll, at: block.header.timestamp,
                    index: firstIndex + UInt64(offset),
                    blockEvents: Int(block.header.eventCount), createdAt: createdAt,
                    signatureVerified: verified?[position] ?? false)
                if case .ballotResultsCertified(let results) = event,
                    let place = state.place(results.place),
                    let counts = try recount(place, height - 1),
                    counts.map(QuestionResult.init) != results.questions
                        || counts.first.map({ $0.ballots.weight }) ?? 0 != results.voted.weight
                {
                    throw Violation.resultsDiffer(place: results.place)  // rule 11.26.5: the recount disagrees
                }
            } catch {
                throw VoteError(
                    .integrity(block: height, offset: nil),
                    "integrity failure: block \(height), event \(offset) breaks the rules: \(error)")
            }
            state.apply(event)
            roll.apply(event)
        }
        for withheld in block.withheld[nextWithheld...] { try admit(withheld, in: block.header) }
    }

    /// Checks that a withheld event is one a public copy may withhold at its block's time (FORMAT.md §11.20):
    /// it discloses its place, an existing place whose embargo withholds events of its type then. Its contents
    /// cannot be re-decided: it is counted, not applied.
    private mutating func admit(_ withheld: (offset: Int, event: WithheldEvent), in header: BlockHeader) throws {
        let event = withheld.event
        func fail(_ reason: String) -> VoteError {
            VoteError(
                .integrity(block: header.height, offset: nil),
                "integrity failure: block \(header.height), event \(withheld.offset): withheld event: \(reason)")
        }
        guard let place = Embargo.place(of: event) else {
            throw fail("it must disclose its place (4 bytes), not \(event.disclosed.count) bytes")
        }
        guard let tag = ElectionEvent.Tag(rawValue: event.type) else {
            throw fail("unknown election event type \(event.type)")
        }
        guard let placeState = state.place(place) else { throw fail("place \(place) does not exist") }
        guard placeState.withholds(tag, at: header.timestamp) else {
            throw fail("the embargo of place \(place) does not withhold a \(tag.name) event at this block's time")
        }
        self.withheld[place, default: 0] += 1
    }

    /// Refuses a block at or after the end of voting in a place with withheld events: once voting ends, a copy
    /// holds every event of the place (FORMAT.md §11.20), and its certified results could not be re-decided.
    private func checkWithheldPlaces(at header: BlockHeader) throws {
        for (place, count) in withheld.sorted(by: { $0.key < $1.key }) {
            guard let end = state.place(place)?.place.voting.end, header.timestamp >= end else { continue }
            throw VoteError(
                .integrity(block: header.height, offset: nil),
                "integrity failure: block \(header.height): voting in place \(place) has ended, yet \(count) of its events are withheld"
            )
        }
    }

    /// Which of a block's `events` are anonymous votes whose signature verifies under their place's ballot key
    /// in `state`, checked on every core at once (RSA verification is most of the work of a ledger of anonymous
    /// votes); `nil` if the block has none. A vote whose signature fails here, or whose place `state` does not
    /// know, is left to the contract, which checks it again in order and refuses it in its own words.
    static func verifiedSignatures(_ events: [ElectionEvent], state: ElectionState) -> [Bool]? {
        var ballots: [(offset: Int, key: BallotKey, credential: [UInt8], signature: [UInt8])] = []
        for (offset, event) in events.enumerated() {
            switch event {
            case .anonymousVoteCast(let place, _, let credential, let signature),
                .anonymousBallotCast(let place, let credential, let signature, _):
                if let key = state.place(place)?.ballotKey { ballots.append((offset, key, credential, signature)) }
            default: continue
            }
        }
        guard !ballots.isEmpty else { return nil }
        let checks = ballots
        var verified = [Bool](repeating: false, count: events.count)
        verified.withUnsafeMutableBufferPointer { buffer in
            nonisolated(unsafe) let results = buffer
            DispatchQueue.concurrentPerform(iterations: checks.count) { index in
                let ballot = checks[index]
                results[ballot.offset] = ballot.key.verifies(ballot.signature, for: ballot.credential)
            }
        }
        return verified
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
        /// A public copy's withheld events (FORMAT.md §11.20) per place: events whose contents are not there,
        /// so they were not re-decided and are not in `state`'s counts.
        public var withheld: [UInt32: Int]
    }

    /// Verifies the chain of `source` and re-decides every election event in it.
    public static func verify(_ source: some BlockSource) throws -> Report {
        var rules = RuleFold(
            source.genesis, roll: VoterTable(capacity: rollCapacity(source)),
            recount: RuleFold.recounting(source))
        let chain = try ChainVerifier.verify(source, prepare: DecodedBlock.init) { block in try rules.fold(block) }
        return Report(chain: chain, state: rules.state, roll: rules.roll, withheld: rules.withheld)
    }

    /// Room for the roll of the whole log of `source` up front, so it does not regrow (and briefly double) on
    /// the way: an authorisation adds two entries and a vote none, so 1.5 entries per event fits any election
    /// with a turnout of at least a third; a lower turnout grows the table once.
    static func rollCapacity(_ source: some BlockSource) -> Int {
        let events = (try? source.lastBlock().treeSize) ?? 0
        return Int(min(events, 1 << 26)) * 3 / 2
    }
}
