public import LedgerCrypto

/// What the contract asks of the voter roll: the entry under a key (a voter tag, a token hash, or a voter's
/// binding to its current token, in one place). The roll is the only part of the election state that grows
/// with the electorate, so a writer keeps the committed part of it outside the state (a table in a mapped
/// file) and hands it to the contract beside the state; `VoterRoll` is the plain in-memory implementation.
public protocol VoterRegistry {
    /// The entry under `key`, if any.
    func entry(_ key: VoterRoll.Key) -> VoterRoll.Entry?
}

extension VoterRegistry {
    /// Whether the voter with `tag` is authorised in `place`.
    public func isAuthorized(voterTag tag: Digest, place: UInt32) -> Bool {
        entry(VoterRoll.Key(digest: tag, place: place, kind: .voter)) != nil
    }

    /// Whether the authorisation of the voter with `tag` in `place` was withdrawn (§11.29).
    public func isWithdrawn(voterTag tag: Digest, place: UInt32) -> Bool {
        entry(VoterRoll.Key(digest: tag, place: place, kind: .voter)) == .revoked
    }

    /// Whether an authorised token has voted in `place`; `nil` if it is not authorised there (never issued,
    /// or replaced by a re-issue).
    public func hasVoted(tokenHash: Digest, place: UInt32) -> Bool? {
        switch entry(VoterRoll.Key(digest: tokenHash, place: place, kind: .token)) {
        case .authorized: false
        case .voted: true
        case .revoked, nil: nil
        }
    }

    /// Whether `tokenHash` was ever issued in `place` (authorised, voted or replaced).
    public func isIssued(tokenHash: Digest, place: UInt32) -> Bool {
        entry(VoterRoll.Key(digest: tokenHash, place: place, kind: .token)) != nil
    }

    /// Whether `tokenHash` is the current token of the voter with `tag` in `place`.
    public func isCurrent(tokenHash: Digest, voterTag tag: Digest, place: UInt32) -> Bool {
        entry(VoterRoll.Key.binding(voterTag: tag, tokenHash: tokenHash, place: place)) == .authorized
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
            /// A voter's token: the digest is SHA-256(voter tag || token hash), so the roll can tell whether
            /// a token is a voter's current one without a value wider than an entry.
            case binding = 3
            /// An issuance code's credential: the digest is SHA-256(token hash || blinded message hash), so a
            /// repeated request with the same code and blinded message is told apart from a second one.
            case issuance = 4
            /// A credential that voted in an anonymous place: the digest is SHA-256(credential).
            case credential = 5
        }
        public var digest: Digest
        public var place: UInt32
        public var kind: Kind

        public init(digest: Digest, place: UInt32, kind: Kind) {
            self.digest = digest
            self.place = place
            self.kind = kind
        }

        /// The key binding the voter with `tag` to the token with hash `tokenHash` in `place`.
        public static func binding(voterTag tag: Digest, tokenHash: Digest, place: UInt32) -> Key {
            Key(digest: pairHash(tag, tokenHash), place: place, kind: .binding)
        }

        /// The key recording that issuance code `tokenHash` had the blinded message `blindedMessageHash` signed.
        public static func issuance(tokenHash: Digest, blindedMessageHash: Digest, place: UInt32) -> Key {
            Key(digest: pairHash(tokenHash, blindedMessageHash), place: place, kind: .issuance)
        }

        /// The key recording that `credential` voted in `place`.
        public static func credential(_ credential: [UInt8], place: UInt32) -> Key {
            Key(digest: SHA256.hash(credential), place: place, kind: .credential)
        }

        /// SHA-256(first || second).
        private static func pairHash(_ first: Digest, _ second: Digest) -> Digest {
            withUnsafeTemporaryAllocation(byteCount: 64, alignment: 8) { pair in
                first.withUnsafeBytes { pair.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: 32) }
                second.withUnsafeBytes { (pair.baseAddress! + 32).copyMemory(from: $0.baseAddress!, byteCount: 32) }
                return SHA256.hash(UnsafeRawBufferPointer(pair))
            }
        }

        /// Digests are uniformly random: one word of it (with the place and kind) is hash enough.
        public func hash(into hasher: inout Hasher) {
            hasher.combine(
                digest.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) } ^ UInt64(place) << 32
                    ^ UInt64(kind.rawValue))
        }
    }

    /// A key's state: authorised, or (tokens only) voted, or (tokens and bindings) replaced by a re-issue, or
    /// (voter tags, tokens and bindings) withdrawn (§11.29).
    public enum Entry: UInt32, Sendable {
        case authorized = 1
        case voted = 2
        case revoked = 3
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

    /// The roll entries `event` sets: an authorisation its voter tag, token and their binding; a re-issue
    /// revokes the old token and binding and authorises the new ones; a vote its token. Every
    /// implementation of the roll folds events through this one function.
    public static func forEachChange(of event: ElectionEvent, _ body: (Key, Entry) -> Void) {
        switch event {
        case .voterAuthorized(let place, let tag, let token, _):
            body(Key(digest: tag, place: place, kind: .voter), .authorized)
            body(Key(digest: token, place: place, kind: .token), .authorized)
            body(Key.binding(voterTag: tag, tokenHash: token, place: place), .authorized)
        case .voterTokenReissued(let place, let tag, let old, let new):
            body(Key(digest: old, place: place, kind: .token), .revoked)
            body(Key.binding(voterTag: tag, tokenHash: old, place: place), .revoked)
            body(Key(digest: new, place: place, kind: .token), .authorized)
            body(Key.binding(voterTag: tag, tokenHash: new, place: place), .authorized)
        case .voterWithdrawn(let place, let tag, let token, _):
            // The tag stays in the roll (a withdrawn voter is not authorised again); the token votes no more.
            body(Key(digest: tag, place: place, kind: .voter), .revoked)
            body(Key(digest: token, place: place, kind: .token), .revoked)
            body(Key.binding(voterTag: tag, tokenHash: token, place: place), .revoked)
        case .voteCast(let place, _, let token), .ballotCast(let place, let token, _),
            .ballotReplaced(let place, let token, _):
            body(Key(digest: token, place: place, kind: .token), .voted)
        case .credentialIssued(let place, let token, let blinded):
            body(Key(digest: token, place: place, kind: .token), .voted)
            body(Key.issuance(tokenHash: token, blindedMessageHash: blinded, place: place), .authorized)
        case .anonymousVoteCast(let place, _, let credential, _), .anonymousBallotCast(let place, let credential, _, _):
            body(Key.credential(credential, place: place), .voted)
        case .placeCreated, .candidateRegistered, .candidateWithdrawn, .resultsCertified, .voterSecretCommitment,
            .ballotResultsCertified, .placeAmended, .placeCancelled:
            break
        }
    }

    /// The keys `event` reads or writes (to prefetch them from a large table): the ones it sets.
    public static func keys(of event: ElectionEvent, into keys: inout [Key]) {
        forEachChange(of: event) { key, _ in keys.append(key) }
    }

    /// The most keys one event changes (a re-issue: the voter's binding to each token, and both tokens).
    public static let maxKeysPerEvent = 4

    /// How many keys `keys(of:into:)` lists for `command`, without listing them.
    public static func keyCount(of command: Command) -> Int {
        switch command {
        case .authorizeVoter, .withdrawVoter: 3
        case .reissueToken: 4
        case .castVote, .castBallot: 1
        case .issueCredential: 2
        case .castAnonymousVote, .castAnonymousBallot: 1
        case .createPlace, .registerCandidate, .withdrawCandidate, .certifyResults, .certifyBallotResults, .amendPlace,
            .cancelPlace:
            0
        }
    }

    /// The keys deciding `command` reads (to prefetch them from a large table): the ones its event would set.
    public static func keys(of command: Command, into keys: inout [Key]) {
        switch command {
        case .authorizeVoter(let place, let voterTag, let tokenHash, let weight):
            Self.keys(
                of: .voterAuthorized(place: place, voterTag: voterTag, tokenHash: tokenHash, weight: weight),
                into: &keys)
        case .reissueToken(let place, let voterTag, let oldTokenHash, let newTokenHash):
            Self.keys(
                of: .voterTokenReissued(
                    place: place, voterTag: voterTag, oldTokenHash: oldTokenHash, newTokenHash: newTokenHash),
                into: &keys)
        case .withdrawVoter(let place, let voterTag, let tokenHash):
            Self.keys(
                of: .voterWithdrawn(place: place, voterTag: voterTag, tokenHash: tokenHash, weight: 1), into: &keys)
        case .castVote(let place, let candidate, let tokenHash):
            Self.keys(of: .voteCast(place: place, candidate: candidate, tokenHash: tokenHash), into: &keys)
        case .castBallot(let place, let answers, let tokenHash):
            Self.keys(of: .ballotCast(place: place, tokenHash: tokenHash, answers: answers), into: &keys)
        case .issueCredential(let place, let tokenHash, let blindedMessageHash):
            Self.keys(
                of: .credentialIssued(place: place, tokenHash: tokenHash, blindedMessageHash: blindedMessageHash),
                into: &keys)
        case .castAnonymousVote(let place, let candidate, let credential, let signature):
            Self.keys(
                of: .anonymousVoteCast(
                    place: place, candidate: candidate, credential: credential, signature: signature),
                into: &keys)
        case .castAnonymousBallot(let place, let answers, let credential, let signature):
            Self.keys(
                of: .anonymousBallotCast(place: place, credential: credential, signature: signature, answers: answers),
                into: &keys)
        case .createPlace, .registerCandidate, .withdrawCandidate, .certifyResults, .certifyBallotResults, .amendPlace,
            .cancelPlace:
            break
        }
    }
}
