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
    /// Voter tags already authorised (one authorisation per voter per place).
    var voterTags: Set<Digest> = []
    /// Authorised token hashes and whether each has voted.
    var tokens: [Digest: Bool] = [:]
    /// Number of authorised voters.
    public private(set) var authorized: UInt64 = 0
    /// Number of votes cast.
    public private(set) var voted: UInt64 = 0
    /// Case-folded candidate names, for the uniqueness rule.
    var nameKeys: Set<String> = []
    /// The certified results, once recorded.
    public internal(set) var certified: CertifiedResults?

    init(place: Place) { self.place = place }

    /// Status of the place at `time`.
    public func status(at time: Int64) -> PlaceStatus {
        if time < place.registration.start { return .upcoming }
        if time < place.registration.end { return .registration }
        if time < place.voting.start { return .waiting }
        if time < place.voting.end { return .voting }
        return .ended
    }

    /// Whether an authorised token has voted; `nil` if the token is not authorised here.
    public func hasVoted(tokenHash: Digest) -> Bool? { tokens[tokenHash] }

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
            nameKeys.insert(Contract.nameKey(name))
        case .candidateWithdrawn(_, let id):
            candidates[Int(id) - 1].withdrawn = true
        case .voterAuthorized(_, let tag, let token):
            voterTags.insert(tag)
            tokens[token] = false
            authorized += 1
        case .voteCast(_, let id, let token):
            tokens[token] = true
            candidates[Int(id) - 1].votes += 1
            voted += 1
        case .resultsCertified(let results):
            certified = results
        }
    }

    /// Restores the counters when decoding a snapshot.
    mutating func restoreCounters() {
        authorized = UInt64(tokens.count)
        voted = UInt64(tokens.values.lazy.filter { $0 }.count)
    }
}

/// The state of every place: what the contract decides against and what the projections read.
/// A pure fold over election events: `apply` is the only way it changes.
public struct ElectionState: Equatable, Sendable {
    /// Places by id - 1.
    public internal(set) var places: [PlaceState] = []

    public init() {}

    /// The place with `id`, if it exists.
    public func place(_ id: UInt32) -> PlaceState? {
        guard id >= 1, Int(id) <= places.count else { return nil }
        return places[Int(id) - 1]
    }

    /// Folds one event in. Events come from the contract (or a verified ledger), so they are valid here.
    public mutating func apply(_ event: ElectionEvent) {
        switch event {
        case .placeCreated(let place):
            places.append(PlaceState(place: place))
        case .candidateRegistered(let place, _, _, _), .candidateWithdrawn(let place, _),
            .voterAuthorized(let place, _, _), .voteCast(let place, _, _):
            places[Int(place) - 1].apply(event)
        case .resultsCertified(let results):
            places[Int(results.place) - 1].apply(event)
        }
    }
}
