public import LedgerCrypto

/// A candidate as the state holds it.
public struct Candidate: Equatable, Sendable {
    /// Sequential from 1 within the place.
    public var id: UInt32
    public var name: String
    public var pledge: String
    public var withdrawn: Bool
    /// Votes received so far.
    public var votes: UInt64
}

/// Everything known about one place: the contract's facts and the projections' counters, one fold.
public struct PlaceState: Equatable, Sendable {
    public var place: Place
    /// Candidates by id - 1.
    public var candidates: [Candidate] = []
    /// Number of authorised voters (who they are is in the `VoterRoll`).
    public internal(set) var authorized: UInt64 = 0
    /// The authorised voters' summed weight (`authorized` where every weight is 1).
    public internal(set) var authorizedWeight: UInt64 = 0
    /// Number of votes cast.
    public internal(set) var voted: UInt64 = 0
    /// Number of ballot credentials issued (anonymous places; always 0 in others).
    public internal(set) var issued: UInt64 = 0
    /// The place's ballot key, parsed, if it takes anonymous ballots.
    public let ballotKey: BallotKey?
    /// The keys of the candidates' names (`NameKey`), for the uniqueness rule.
    var nameKeys: Set<[Unicode.Scalar]> = []
    /// The certified results, once recorded.
    public internal(set) var certified: CertifiedResults?
    /// A place that asks questions: its certified results, once recorded (§11.26).
    public internal(set) var ballotResults: BallotResults?
    /// How many times the place was corrected (§11.28): its name, description or voting window changed after
    /// its creation.
    public internal(set) var amendments: UInt32 = 0
    /// How many voters' authorisations were withdrawn (§11.29); `authorized` and `authorizedWeight` no longer
    /// count them.
    public internal(set) var withdrawn: UInt64 = 0
    /// The weight of each voter authorised with a weight other than 1 (§11.25), by voter tag: what a withdrawal
    /// (§11.29) takes off `authorizedWeight`. Few places weigh their voters, so this stays empty in most.
    public internal(set) var weights: [Digest: UInt64] = [:]
    /// Why the place was cancelled (§11.30), once it was (the reason may be empty); `nil` while it stands.
    public internal(set) var cancellation: String?

    /// Whether the place was cancelled (§11.30): every later command on it is refused.
    public var cancelled: Bool { cancellation != nil }

    /// The leaf index of the place's certification (the tree size it covers), if its results are certified.
    public var certifiedAt: UInt64? { certified?.treeSize ?? ballotResults?.treeSize }

    /// The state of a new place. Its ballot key, if any, was checked by the contract (rule 11.7.8).
    init(place: Place) {
        self.place = place
        ballotKey = place.ballotKey.flatMap { try? BallotKey(der: $0) }
    }

    /// The weight of the authorised voter with `tag` (§11.25): 1 unless authorised with another.
    public func weight(ofVoter tag: Digest) -> UInt64 { weights[tag] ?? 1 }

    /// Status of the place at `time`.
    public func status(at time: Int64) -> PlaceStatus {
        if cancelled { return .cancelled }
        if time < place.registration.start { return .upcoming }
        if time < place.registration.end { return .registration }
        if time < place.voting.start { return .waiting }
        if time < place.voting.end { return .voting }
        return .ended
    }

    /// Whether the public may not see this place's counts at `time`: its results are embargoed until voting
    /// ends (`Place.resultsAfterClose`) and voting has not ended. The ledger itself stays public.
    public func countsHidden(at time: Int64) -> Bool { place.resultsAfterClose && time < place.voting.end }

    /// Whether the public routes and copies withhold the contents of this place's events of type `type` at
    /// `time` (FORMAT.md §11.20): while its counts are hidden, every vote, since a vote names its candidate; and
    /// in a token place also every authorisation and re-issue, since they name the token hashes that a vote's
    /// leaf hash could otherwise be matched against, one candidate at a time.
    public func withholds(_ type: ElectionEvent.Tag, at time: Int64) -> Bool {
        countsHidden(at: time) && PlaceState.withheldTypes(anonymous: place.isAnonymous).contains(type)
    }

    /// The types of a place's events that an embargo withholds (FORMAT.md §11.20): in an anonymous place its
    /// votes (a credential is random, so its vote's leaf hash gives nothing away); in a token place its votes,
    /// authorisations and re-issues.
    public static func withheldTypes(anonymous: Bool) -> Set<ElectionEvent.Tag> {
        anonymous
            ? [.anonymousVoteCast, .anonymousBallotCast]
            : [
                .voteCast, .ballotCast, .ballotReplaced, .voterAuthorized, .weightedVoterAuthorized,
                .voterTokenReissued,
            ]
    }

    /// The candidate with `id`, if registered.
    public func candidate(_ id: UInt32) -> Candidate? {
        guard id >= 1, Int(id) <= candidates.count else { return nil }
        return candidates[Int(id) - 1]
    }

    mutating func apply(_ event: ElectionEvent) {
        switch event {
        case .placeCreated: break
        case .candidateRegistered(_, let id, let name, let pledge):
            candidates.append(Candidate(id: id, name: name, pledge: pledge, withdrawn: false, votes: 0))
            nameKeys.insert(NameKey.of(name))
        case .candidateWithdrawn(_, let id):
            candidates[Int(id) - 1].withdrawn = true
        case .voterAuthorized(_, let tag, _, let weight):
            authorized += 1
            authorizedWeight += weight
            if weight != 1 { weights[tag] = weight }
        case .voterWithdrawn(_, let tag, _, let weight):
            authorized -= 1
            authorizedWeight -= weight
            withdrawn += 1
            weights[tag] = nil
        case .voteCast(_, let id, _), .anonymousVoteCast(_, let id, _, _):
            candidates[Int(id) - 1].votes += 1
            voted += 1
        case .ballotCast, .anonymousBallotCast:
            voted += 1
        case .ballotReplaced: break
        case .placeAmended(_, let name, let description, let voting):
            place.name = name
            place.description = description
            place.voting = voting
            amendments += 1
        case .placeCancelled(_, let reason):
            cancellation = reason
        case .credentialIssued:
            issued += 1
        case .resultsCertified(let results):
            certified = results
        case .ballotResultsCertified(let results):
            ballotResults = results
        case .voterSecretCommitment, .voterTokenReissued: break
        }
    }
}

/// The state of every place: what the contract decides against and what the projections read.
/// A pure fold over election events: `apply` is the only way it changes. A value: copies are independent
/// (the writer decides a batch on a copy and drops it if the block is not written).
public struct ElectionState: Equatable, Sendable {
    /// Places by id - 1.
    public internal(set) var places: [PlaceState] = []
    /// The voter roll entries folded into this state. Alone (tests, the reference) that is the whole roll;
    /// in the writer it is only the entries of the batch being decided, over the committed roll the
    /// writer passes to the contract beside the state and moves them into once the block is durable, so
    /// no batch copies the whole roll. `nil` in a counts-only state (what the read side replays, and the
    /// verifier, which folds into its table itself): such a state decides voter commands only against
    /// a committed roll.
    public var roll: VoterRoll?

    /// An empty state, with an empty roll unless `roll` says otherwise.
    public init(roll: VoterRoll? = VoterRoll()) {
        self.roll = roll
    }

    /// The place with `id`, if it exists.
    public func place(_ id: UInt32) -> PlaceState? {
        guard id >= 1, Int(id) <= places.count else { return nil }
        return places[Int(id) - 1]
    }

    /// Folds one event in. Events come from the contract (or a verified ledger), so they are valid here.
    public mutating func apply(_ event: ElectionEvent) {
        roll?.apply(event)
        switch event {
        case .placeCreated(let place):
            places.append(PlaceState(place: place))
        case .candidateRegistered(let place, _, _, _), .candidateWithdrawn(let place, _),
            .voterAuthorized(let place, _, _, _), .voterTokenReissued(let place, _, _, _), .voteCast(let place, _, _),
            .credentialIssued(let place, _, _), .anonymousVoteCast(let place, _, _, _), .ballotCast(let place, _, _),
            .ballotReplaced(let place, _, _), .anonymousBallotCast(let place, _, _, _),
            .placeAmended(let place, _, _, _), .voterWithdrawn(let place, _, _, _),
            .placeCancelled(let place, _):
            places[Int(place) - 1].apply(event)
        case .resultsCertified(let results):
            places[Int(results.place) - 1].apply(event)
        case .ballotResultsCertified(let results):
            places[Int(results.place) - 1].apply(event)
        case .voterSecretCommitment:
            break
        }
    }
}
