import Ballots
public import Election
public import Foundation
public import Ledger
import LedgerCrypto
public import VoteLedger

// The JSON shapes of read and write commands. Keys are stable (snake_case) and documented in the README.

public struct WindowJSON: Encodable {
    var start: String
    var end: String

    public init(_ window: TimeWindow) {
        start = Timestamp.format(window.start)
        end = Timestamp.format(window.end)
    }
}

public struct TallyRowJSON: Encodable, Sendable {
    var candidate: UInt32
    var name: String
    var votes: UInt64
    var share: Double
    var withdrawn: Bool

    public init(_ row: Projections.TallyRow) {
        candidate = row.candidate
        name = row.name
        votes = row.votes
        share = row.share
        withdrawn = row.withdrawn
    }
}

public struct TurnoutJSON: Encodable, Sendable {
    var authorized: UInt64
    var voted: UInt64
    var percentage: Double
    /// Credentials issued: anonymous places only (the key is absent for others).
    var issued: UInt64?
    /// Places that ask questions only: the authorised voters' summed weight, and that of those who voted.
    var authorizedWeight: UInt64?
    var votedWeight: UInt64?

    public init(_ turnout: Projections.Turnout) {
        authorized = turnout.authorized
        voted = turnout.voted
        percentage = turnout.percentage
        issued = turnout.issued
    }

    enum CodingKeys: String, CodingKey {
        case authorized, voted, percentage, issued
        case authorizedWeight = "authorized_weight"
        case votedWeight = "voted_weight"
    }
}

public struct ResultsJSON: Encodable {
    var tally: [TallyRowJSON]
    var turnout: TurnoutJSON

    public init(_ place: PlaceState) {
        tally = Projections.tally(place).map(TallyRowJSON.init)
        turnout = TurnoutJSON(Projections.turnout(place))
    }
}

/// When the public routes and pages show a place's counts, as `vote place create --results` and the HTTP
/// `"results"` field name it: `live` while voting runs (the default), or `after-close` (a results embargo,
/// `Place.resultsAfterClose`).
public enum ResultsRelease: String, CaseIterable, Sendable {
    case live
    case afterClose = "after-close"

    /// The choice named `text`, or a one-line error that lists the names.
    public static func named(_ text: String, field: String) throws -> ResultsRelease {
        guard let release = ResultsRelease(rawValue: text) else {
            throw VoteError(.usage, "\(field) must be live or after-close")
        }
        return release
    }
}

public struct PlaceJSON: Encodable {
    var id: UInt32
    var name: String
    var description: String
    var status: String
    var registration: WindowJSON
    var voting: WindowJSON
    var maxCandidates: UInt32?
    var candidates: Int
    /// Whether the public sees the counts only once voting ends ("results": "after-close" at creation).
    var resultsAfterClose: Bool
    /// Present for ended places only.
    var results: ResultsJSON?
    /// "anonymous" (blind-signed ballot credentials) or "token".
    var ballot: String
    /// Anonymous places only: the ballot key's DER SubjectPublicKeyInfo, base64url without padding.
    var ballotKey: String?
    /// Anonymous places only: credentials issued so far.
    var credentialsIssued: UInt64?
    /// Places that ask questions only: the questions, as `vote place create --questions` reads them.
    var questions: [QuestionJSON]?
    /// Places that ask questions only: whether a voter may cast again until voting ends, the last ballot counting.
    var revoting: Bool?
    /// Amended places only (§11.28): how many corrections were recorded; the name, description and voting window
    /// above are the amended ones.
    var amendments: UInt32?
    /// Places a voter was withdrawn from (§11.29): how many; `authorized` no longer counts them.
    var withdrawn: UInt64?
    /// Cancelled places only (§11.30; `status` is `cancelled`): why, as recorded (may be empty).
    var cancellationReason: String?
    /// Anonymous places that write their ballots in batches only (§11.31): the rule.
    var batches: BatchesJSON?

    enum CodingKeys: String, CodingKey {
        case id, name, description, status, registration, voting, candidates, results, ballot, batches
        case maxCandidates = "max_candidates"
        case resultsAfterClose = "results_after_close"
        case ballotKey = "ballot_key"
        case credentialsIssued = "credentials_issued"
        case questions, revoting, amendments, withdrawn
        case cancellationReason = "cancellation_reason"
    }

    public init(_ place: PlaceState, at time: Int64) {
        let status = place.status(at: time)
        id = place.place.id
        name = place.place.name
        description = place.place.description
        self.status = status.rawValue
        registration = WindowJSON(place.place.registration)
        voting = WindowJSON(place.place.voting)
        maxCandidates = place.place.maxCandidates
        candidates = place.candidates.count
        resultsAfterClose = place.place.resultsAfterClose
        results = status == .ended ? ResultsJSON(place) : nil
        ballot = place.place.isAnonymous ? "anonymous" : "token"
        amendments = place.amendments > 0 ? place.amendments : nil
        withdrawn = place.withdrawn > 0 ? place.withdrawn : nil
        cancellationReason = place.cancellation
        ballotKey = place.place.ballotKey.map { Base64URL.encode($0) }
        credentialsIssued = place.place.isAnonymous ? place.issued : nil
        questions = place.place.ballot?.questions.map(QuestionJSON.init)
        revoting = place.place.ballot == nil ? nil : place.place.revoting
        batches = place.place.batching.map(BatchesJSON.init)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(name, forKey: .name)
        try container.encode(description, forKey: .description)
        try container.encode(status, forKey: .status)
        try container.encode(registration, forKey: .registration)
        try container.encode(voting, forKey: .voting)
        try container.encode(maxCandidates, forKey: .maxCandidates)
        try container.encode(candidates, forKey: .candidates)
        try container.encode(resultsAfterClose, forKey: .resultsAfterClose)
        try container.encodeIfPresent(results, forKey: .results)
        try container.encode(ballot, forKey: .ballot)
        try container.encodeIfPresent(ballotKey, forKey: .ballotKey)
        try container.encodeIfPresent(credentialsIssued, forKey: .credentialsIssued)
        try container.encodeIfPresent(questions, forKey: .questions)
        try container.encodeIfPresent(revoting, forKey: .revoting)
        try container.encodeIfPresent(amendments, forKey: .amendments)
        try container.encodeIfPresent(withdrawn, forKey: .withdrawn)
        try container.encodeIfPresent(cancellationReason, forKey: .cancellationReason)
        try container.encodeIfPresent(batches, forKey: .batches)
    }
}

/// An anonymous place's batch rule (§11.31): `{"interval_seconds": 600, "size": 10}`, each only when set.
public struct BatchesJSON: Encodable, Sendable {
    var intervalSeconds: Int64?
    var size: UInt32?

    enum CodingKeys: String, CodingKey {
        case size
        case intervalSeconds = "interval_seconds"
    }

    public init(_ batching: BallotBatching) {
        intervalSeconds = batching.interval.map { $0 / 1000 }
        size = batching.size
    }
}

/// base64url without padding (RFC 4648 §5), how JSON carries a ballot key, blinded message or signature.
public enum Base64URL {
    /// `bytes` as base64url, no padding.
    public static func encode(_ bytes: [UInt8]) -> String {
        Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
    }

    /// The bytes of base64url text as `encode` writes it: no padding, and canonical (the unused low bits of the
    /// last character zero), so one value has one spelling; `nil` otherwise.
    public static func decode(_ text: String) -> [UInt8]? {
        guard
            text.utf8.allSatisfy({ $0 != UInt8(ascii: "+") && $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "=") })
        else { return nil }
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        guard let bytes = Data(base64Encoded: base64).map({ Array($0) }), encode(bytes) == text else { return nil }
        return bytes
    }
}

public struct CandidateJSON: Encodable {
    var candidate: UInt32
    var name: String
    var pledge: String
    var withdrawn: Bool

    public init(_ candidate: Candidate) {
        self.candidate = candidate.id
        name = candidate.name
        pledge = candidate.pledge
        withdrawn = candidate.withdrawn
    }
}

public struct TallyJSON: Encodable, Sendable {
    var place: UInt32
    var name: String
    var status: String
    var tally: [TallyRowJSON]
    var turnout: TurnoutJSON
    var height: UInt64
    var treeSize: UInt64
    var headHash: String
    /// The block holding the place's results-certified event; nil (JSON null) until the results are certified.
    var certifiedHeight: UInt64?
    /// Whether the counts are left out of this answer (`tally` is empty): the place's results are embargoed
    /// until voting ends and it has not ended.
    var embargoed: Bool
    /// Places that ask questions only (their `tally` is empty): each question's count, recounted from the log;
    /// empty while the counts are embargoed.
    var questions: [QuestionCountJSON]?
    /// Amended places only: how many corrections were recorded (§11.28), so results say the place was amended.
    var amendments: UInt32?
    /// Places a voter was withdrawn from (§11.29): how many; the turnout's electorate no longer counts them.
    var withdrawn: UInt64?

    /// The tally of `state` as of the block `head` of `source`, with the place's status at `time`. `source`
    /// is asked for the block of the certification, if there is one (the state keeps its leaf index only).
    /// `forPublic` leaves the counts out while the place's results are embargoed (the public routes); the
    /// CLI, run by whoever holds the ledger, shows them.
    public init(
        _ state: PlaceState, head: BlockHeader, at time: Int64, source: any BlockSource, forPublic: Bool = false
    ) throws {
        place = state.place.id
        name = state.place.name
        status = state.status(at: time).rawValue
        embargoed = forPublic && state.countsHidden(at: time)
        amendments = state.amendments > 0 ? state.amendments : nil
        withdrawn = state.withdrawn > 0 ? state.withdrawn : nil
        tally = embargoed ? [] : Projections.tally(state).map(TallyRowJSON.init)
        turnout = TurnoutJSON(Projections.turnout(state))
        height = head.height
        treeSize = head.treeSize
        headHash = head.hash.hex
        let counts = embargoed ? nil : try ElectionView.ballotCount(of: state, in: source, upTo: head)
        questions = state.place.ballot.map { ballot in
            counts.map { zip(ballot.questions, $0).map(QuestionCountJSON.init) } ?? []
        }
        if state.place.ballot != nil {
            // The roll's weight is public as its members are; the weight that voted comes from the count, so it
            // waits for the embargo as the count does.
            turnout.authorizedWeight = state.authorizedWeight
            turnout.votedWeight = embargoed ? nil : counts?.first?.ballots.weight ?? 0
        }
        if let certifiedAt = state.certifiedAt {
            // The certification's leaf index is the number of events before it: the tree size it covers.
            certifiedHeight = try Self.height(ofEvent: certifiedAt, in: source, upTo: head)
        }
    }

    /// The block of `source` holding event `index`: from the store's own index, else by binary search over
    /// the block headers up to `head` (the file store's block index is derived and may be gone).
    static func height(ofEvent index: UInt64, in source: any BlockSource, upTo head: BlockHeader) throws -> UInt64? {
        if let height = try source.height(ofEvent: index) { return height }
        guard index < head.treeSize else { return nil }
        var low: UInt64 = 0
        var high = head.height
        // The first block whose tree size exceeds the event index.
        while low < high {
            let middle = (low + high) / 2
            guard let header = try source.header(at: middle) else { return nil }
            if header.treeSize > index { high = middle } else { low = middle + 1 }
        }
        return low
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(place, forKey: .place)
        try container.encode(name, forKey: .name)
        try container.encode(status, forKey: .status)
        try container.encode(tally, forKey: .tally)
        try container.encode(turnout, forKey: .turnout)
        try container.encode(height, forKey: .height)
        try container.encode(treeSize, forKey: .treeSize)
        try container.encode(headHash, forKey: .headHash)
        try container.encode(certifiedHeight, forKey: .certifiedHeight)  // null, not absent, until certified
        try container.encode(embargoed, forKey: .embargoed)
        try container.encodeIfPresent(questions, forKey: .questions)
        try container.encodeIfPresent(amendments, forKey: .amendments)
        try container.encodeIfPresent(withdrawn, forKey: .withdrawn)
    }

    enum CodingKeys: String, CodingKey {
        case questions, amendments, withdrawn
        case place, name, status, tally, turnout, height, embargoed
        case treeSize = "tree_size"
        case headHash = "head_hash"
        case certifiedHeight = "certified_height"
    }
}

public struct ReceiptJSON: Encodable {
    var place: UInt32
    /// The candidate of a vote; nil (no key) for an event that is not one (a credential's issuance).
    var candidate: UInt32?
    var height: UInt64
    var index: UInt64
    var eventHash: String
    var treeSize: UInt64
    var root: String
    var proof: [String]
    var extra: String
    var checkpoint: String
    /// The whole receipt as a C2SP tlog-proof document.
    var receipt: String

    enum CodingKeys: String, CodingKey {
        case place, candidate, height, index, proof, extra, checkpoint, receipt, root
        case eventHash = "event_hash"
        case treeSize = "tree_size"
    }

    public init(place: UInt32, candidate: UInt32?, receipt: EventReceipt, proof: TlogProof) {
        self.place = place
        self.candidate = candidate
        height = receipt.height
        index = receipt.index
        eventHash = receipt.eventHash.hex
        let checkpoint = Checkpoint(text: proof.checkpoint.text)
        treeSize = checkpoint?.treeSize ?? 0
        root = checkpoint?.root.hex ?? ""
        self.proof = proof.proof.map(\.hex)
        extra = Base64.encode(proof.extra ?? [])
        self.checkpoint = proof.checkpoint.serialized
        self.receipt = proof.serialized
    }
}

// MARK: - Write commands

/// Where a write command's event went: its block, its leaf index and its leaf hash (`event_hash`), the
/// facts a receipt is built from. Every write command's `--json` carries them.
public struct RecordedJSON: Encodable {
    var height: UInt64
    var index: UInt64
    var eventHash: String

    public init(_ receipt: EventReceipt) {
        height = receipt.height
        index = receipt.index
        eventHash = receipt.eventHash.hex
    }

    enum CodingKeys: String, CodingKey {
        case height, index
        case eventHash = "event_hash"
    }
}

/// What an amendment recorded (`vote place amend --json`, `POST /api/v1/places/P/amend`): the place's name and
/// voting window from now on.
public struct PlaceAmendedJSON: Encodable {
    var place: UInt32
    var name: String
    var voting: WindowJSON
    var recorded: RecordedJSON

    public init(place: UInt32, name: String, voting: TimeWindow, recorded: RecordedJSON) {
        self.place = place
        self.name = name
        self.voting = WindowJSON(voting)
        self.recorded = recorded
    }
}

/// `place create --json`: `{place, name, registration, voting, max_candidates, height, index, event_hash}`.
public struct PlaceCreatedJSON: Encodable {
    var place: Place
    var recorded: RecordedJSON

    public init(place: Place, recorded: RecordedJSON) {
        self.place = place
        self.recorded = recorded
    }

    enum CodingKeys: String, CodingKey {
        case place, name, registration, voting, ballot
        case maxCandidates = "max_candidates"
        case ballotKey = "ballot_key"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(place.id, forKey: .place)
        try container.encode(place.name, forKey: .name)
        try container.encode(WindowJSON(place.registration), forKey: .registration)
        try container.encode(WindowJSON(place.voting), forKey: .voting)
        try container.encode(place.maxCandidates, forKey: .maxCandidates)
        try container.encode(place.isAnonymous ? "anonymous" : "token", forKey: .ballot)
        try container.encodeIfPresent(place.ballotKey.map { Base64URL.encode($0) }, forKey: .ballotKey)
        try recorded.encode(to: encoder)
    }
}

/// `candidate register --json` and `candidate withdraw --json`: `{place, candidate, name, height, index,
/// event_hash}` (`name` for a registration only).
public struct CandidateRecordedJSON: Encodable {
    var place: UInt32
    var candidate: UInt32
    var name: String?
    var recorded: RecordedJSON

    public init(place: UInt32, candidate: UInt32, name: String?, recorded: RecordedJSON) {
        self.place = place
        self.candidate = candidate
        self.name = name
        self.recorded = recorded
    }

    enum CodingKeys: String, CodingKey {
        case place, candidate, name
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(place, forKey: .place)
        try container.encode(candidate, forKey: .candidate)
        try container.encodeIfPresent(name, forKey: .name)
        try recorded.encode(to: encoder)
    }
}

/// What a cancellation recorded (`vote place cancel --json`, `POST /api/v1/places/P/cancel`): `{place, name,
/// status: "cancelled", reason, height, index, event_hash}`.
public struct PlaceCancelledJSON: Encodable {
    var place: UInt32
    var name: String
    var reason: String
    var recorded: RecordedJSON

    public init(place: UInt32, name: String, reason: String, recorded: RecordedJSON) {
        self.place = place
        self.name = name
        self.reason = reason
        self.recorded = recorded
    }

    enum CodingKeys: String, CodingKey {
        case place, name, status, reason
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(place, forKey: .place)
        try container.encode(name, forKey: .name)
        try container.encode(PlaceStatus.cancelled.rawValue, forKey: .status)
        try container.encode(reason, forKey: .reason)
        try recorded.encode(to: encoder)
    }
}

/// What a voter's withdrawal recorded (`vote voter withdraw --json`, `POST /api/v1/places/P/voters/withdraw`):
/// `{place, weight, authorized, height, index, event_hash}`, `authorized` being the voters still authorised there.
public struct VoterWithdrawnJSON: Encodable {
    var place: UInt32
    var weight: UInt64
    var authorized: UInt64
    var recorded: RecordedJSON

    public init(place: UInt32, weight: UInt64, authorized: UInt64, recorded: RecordedJSON) {
        self.place = place
        self.weight = weight
        self.authorized = authorized
        self.recorded = recorded
    }

    enum CodingKeys: String, CodingKey {
        case place, weight, authorized
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(place, forKey: .place)
        try container.encode(weight, forKey: .weight)
        try container.encode(authorized, forKey: .authorized)
        try recorded.encode(to: encoder)
    }
}

/// `voter authorize --voter ID --json`: `{place, token, height, index, event_hash}`, printed (and synced)
/// before the authorisation is recorded, like the plain token.
public struct VoterAuthorizedJSON: Encodable {
    var place: UInt32
    var token: String
    var recorded: RecordedJSON

    public init(place: UInt32, token: String, recorded: RecordedJSON) {
        self.place = place
        self.token = token
        self.recorded = recorded
    }

    enum CodingKeys: String, CodingKey {
        case place, token
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(place, forKey: .place)
        try container.encode(token, forKey: .token)
        try recorded.encode(to: encoder)
    }
}

/// `place close --json` and the certify route: `{place, tree_size, tally: [{candidate, name, votes}], turnout:
/// {authorized, voted}, height, index, event_hash}`; `tree_size` is the number of events the certified results
/// cover. A place that asks questions has an empty `tally`, `questions` (each question's certified totals and
/// outcome, `{members, weight}` counts) and the weights in `turnout`.
public struct ResultsCertifiedJSON: Encodable {
    struct Row: Encodable {
        var candidate: UInt32
        var name: String
        var votes: UInt64
    }
    struct Turnout: Encodable {
        var authorized: UInt64
        var voted: UInt64
        var authorizedWeight: UInt64?
        var votedWeight: UInt64?

        enum CodingKeys: String, CodingKey {
            case authorized, voted
            case authorizedWeight = "authorized_weight"
            case votedWeight = "voted_weight"
        }
    }
    struct Total: Encodable {
        var members: UInt64
        var weight: UInt64
        init(_ weighed: Weighed) { (members, weight) = (weighed.members, weighed.weight) }
    }
    struct Question: Encodable {
        var title: String
        var ballots: Total
        var blank: Total
        var options: [Total]
        /// Yes/no only: whether the motion passed.
        var passed: Bool?
        /// The options elected, numbered from 1, in order.
        var elected: [Int]
    }

    var place: UInt32
    var treeSize: UInt64
    var tally: [Row]
    var turnout: Turnout
    var questions: [Question]?
    var recorded: RecordedJSON

    /// The certification `recorded` (a results-certified or ballot-results-certified event), named with the
    /// candidates and questions of `state`; nil for any other event.
    public init?(_ recorded: EventReceipt, state: ElectionState) {
        switch recorded.event {
        case .resultsCertified(let results):
            let names = state.place(results.place)?.candidates.map(\.name) ?? []
            place = results.place
            treeSize = results.treeSize
            tally = results.votes.map { entry in
                let index = Int(entry.candidate) - 1
                return Row(
                    candidate: entry.candidate, name: names.indices.contains(index) ? names[index] : "",
                    votes: entry.votes)
            }
            turnout = Turnout(authorized: results.authorized, voted: results.voted)
        case .ballotResultsCertified(let results):
            let titles = state.place(results.place)?.place.ballot?.questions.map(\.title) ?? []
            place = results.place
            treeSize = results.treeSize
            tally = []
            turnout = Turnout(
                authorized: results.electorate.members, voted: results.voted.members,
                authorizedWeight: results.electorate.weight, votedWeight: results.voted.weight)
            questions = results.questions.enumerated().map { index, result in
                Question(
                    title: titles.indices.contains(index) ? titles[index] : "", ballots: Total(result.ballots),
                    blank: Total(result.blank), options: result.options.map(Total.init), passed: result.passed,
                    elected: result.elected.map { $0 + 1 })
            }
        default: return nil
        }
        self.recorded = RecordedJSON(recorded)
    }

    enum CodingKeys: String, CodingKey {
        case place, tally, turnout, questions
        case treeSize = "tree_size"
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(place, forKey: .place)
        try container.encode(treeSize, forKey: .treeSize)
        try container.encode(tally, forKey: .tally)
        try container.encode(turnout, forKey: .turnout)
        try container.encodeIfPresent(questions, forKey: .questions)
        try recorded.encode(to: encoder)
    }
}

// MARK: - Event stream

/// One event as a line of `vote export --events` (and the server's `/api/v1/events`): `{height, index, hash,
/// type, time, event: {kind, …}}` with sorted keys, so a monitor gets the same bytes from either.
public struct EventLineJSON: Encodable {
    var height: UInt64
    var index: UInt64
    var hash: String
    var type: UInt16
    var time: String
    var event: [String: String]

    /// The JSON lines of every event of `block` (of those whose index is in `indexes`, if given), each ending
    /// in a newline.
    public static func lines(of block: EncodedBlock, indexes: Range<UInt64>? = nil) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var index = block.header.treeSize - UInt64(block.header.eventCount)
        var chunk = Data()
        for event in block.events {
            defer { index += 1 }
            if let indexes, !indexes.contains(index) { continue }
            let line = EventLineJSON(
                height: block.header.height, index: index, hash: event.leafHash.hex, type: event.type,
                time: Timestamp.format(block.header.timestamp), event: EventDescription.fields(event.ledgerEvent))
            chunk.append(try encoder.encode(line))
            chunk.append(10)
        }
        return chunk
    }
}
