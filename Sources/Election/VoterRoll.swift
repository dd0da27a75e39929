public import LedgerCrypto

/// What the contract asks of the voter roll: the entry under a key (a voter tag or a token hash in one
/// place). The roll is the only part of the election state that grows with the electorate, so a writer
/// keeps the committed part of it outside the state (a table in a mapped file) and hands it to the
/// contract beside the state; `VoterRoll` is the plain in-memory implementation.
public protocol VoterRegistry {
    /// The entry under `key`, if any.
    func entry(_ key: VoterRoll.Key) -> VoterRoll.Entry?
}

extension VoterRegistry {
    /// Whether the voter with `tag` is authorised in `place`.
    public func isAuthorized(voterTag tag: Digest, place: UInt32) -> Bool {
        entry(VoterRoll.Key(digest: tag, place: place, kind: .voter)) != nil
    }

    /// Whether an authorised token has voted in `place`; `nil` if it is not authorised there.
    public func hasVoted(tokenHash: Digest, place: UInt32) -> Bool? {
        entry(VoterRoll.Key(digest: tokenHash, place: place, kind: .token)).map { $0 == .voted }
    }
}

/// Who may vote where, as a value: the voter tags authorised in each place and each token's state. It is
/// the reference roll (a dictionary, which every other `VoterRegistry` must agree with), and in the writer
/// the changes of the batch being decided, over the committed table (see `ElectionState.roll`).
public struct VoterRoll: VoterRegistry, Equatable, Sendable {
    /// What a key names: a voter tag or a token hash, in one place.
    public struct Key: Hashable, Sendable {
        public enum Kind: UInt32, Sendable {
            case voter = 1
            case token = 2
        }
        public var digest: Digest
        public var place: UInt32
        public var kind: Kind

        public init(digest: Digest, place: UInt32, kind: Kind) {
            self.digest = digest
            self.place = place
            self.kind = kind
        }

        /// Digests are uniformly random: one word of it (with the place and kind) is hash enough.
        public func hash(into hasher: inout Hasher) {
            hasher.combine(
                digest.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) } ^ UInt64(place) << 32
                    ^ UInt64(kind.rawValue))
        }
    }

    /// A key's state: authorised, or (tokens only) voted.
    public enum Entry: UInt32, Sendable {
        case authorized = 1
        case voted = 2
    }

    /// Every entry, by key.
    public private(set) var entries: [Key: Entry] = [:]

    /// An empty roll.
    public init() {}

    public func entry(_ key: Key) -> Entry? { entries[key] }

    /// Number of entries.
    public var count: Int { entries.count }

    /// Folds one event in.
    public mutating func apply(_ event: ElectionEvent) {
        VoterRoll.forEachChange(of: event) { key, entry in entries[key] = entry }
    }

    /// Empties the roll, keeping its storage (the writer, once it has moved a batch's changes on).
    public mutating func removeAll() {
        entries.removeAll(keepingCapacity: true)
    }

    /// The roll entries `event` sets: an authorisation its voter tag and token, a vote its token. Every
    /// implementation of the roll folds events through this one function.
    public static func forEachChange(of event: ElectionEvent, _ body: (Key, Entry) -> Void) {
        switch event {
        case .voterAuthorized(let place, let tag, let token):
            body(Key(digest: tag, place: place, kind: .voter), .authorized)
            body(Key(digest: token, place: place, kind: .token), .authorized)
        case .voteCast(let place, _, let token):
            body(Key(digest: token, place: place, kind: .token), .voted)
        case .placeCreated, .candidateRegistered, .candidateWithdrawn, .resultsCertified, .voterSecretCommitment: break
        }
    }

    /// The keys `event` reads or writes (to prefetch them from a large table): the ones it sets.
    public static func keys(of event: ElectionEvent, into keys: inout [Key]) {
        forEachChange(of: event) { key, _ in keys.append(key) }
    }

    /// How many keys `keys(of:into:)` lists for `command`, without listing them.
    public static func keyCount(of command: Command) -> Int {
        switch command {
        case .authorizeVoter: 2
        case .castVote: 1
        case .createPlace, .registerCandidate, .withdrawCandidate, .certifyResults: 0
        }
    }

    /// The keys deciding `command` reads (to prefetch them from a large table): the ones its event would set.
    public static func keys(of command: Command, into keys: inout [Key]) {
        switch command {
        case .authorizeVoter(let place, let voterTag, let tokenHash):
            Self.keys(of: .voterAuthorized(place: place, voterTag: voterTag, tokenHash: tokenHash), into: &keys)
        case .castVote(let place, let candidate, let tokenHash):
            Self.keys(of: .voteCast(place: place, candidate: candidate, tokenHash: tokenHash), into: &keys)
        case .createPlace, .registerCandidate, .withdrawCandidate, .certifyResults: break
        }
    }
}
