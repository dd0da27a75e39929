public import Ballots
public import LedgerCrypto

/// A half-open time window [start, end) in ms since the Unix epoch, UTC.
public struct TimeWindow: Equatable, Hashable, Sendable {
    public var start: Int64
    public var end: Int64

    public init(start: Int64, end: Int64) {
        self.start = start
        self.end = end
    }

    /// Whether `time` is inside the window (start included, end excluded).
    public func contains(_ time: Int64) -> Bool { start <= time && time < end }
}

/// An election ("place", after the system this replaces): what is voted on and when.
public struct Place: Equatable, Sendable {
    /// Sequential from 1 in the ledger.
    public var id: UInt32
    public var name: String
    public var description: String
    /// When candidates may register.
    public var registration: TimeWindow
    /// When votes may be cast.
    public var voting: TimeWindow
    /// Most candidates that may register, if limited.
    public var maxCandidates: UInt32?
    /// Whether the public routes and pages keep the counts to themselves until voting ends (a results embargo;
    /// flag bit 0 of the place-created event). The ledger stays public: anyone holding it can count.
    public var resultsAfterClose: Bool
    /// The DER SubjectPublicKeyInfo of the place's RSA key for blind-signed ballot credentials (RFC 9474,
    /// RSABSSA-SHA384-PSS-Randomized) when the place takes anonymous ballots (flag bit 1); `nil` for a place
    /// whose voters vote with their own tokens.
    public var ballotKey: [UInt8]?
    /// The questions the place asks (flag bit 2), when it is voted on with a ballot of one or more questions
    /// rather than one choice among registered candidates; `nil` for a candidates place.
    public var ballot: Ballot?
    /// Whether a voter may cast again until voting ends, the last ballot counting (flag bit 3; a place with a
    /// ballot only): the usual answer to someone looking over a voter's shoulder.
    public var revoting: Bool
    /// How an anonymous place holds its ballots and writes them together (flag bit 4); `nil`: each ballot is
    /// written as it arrives.
    public var batching: BallotBatching?

    public init(
        id: UInt32, name: String, description: String, registration: TimeWindow, voting: TimeWindow,
        maxCandidates: UInt32?, resultsAfterClose: Bool = false, ballotKey: [UInt8]? = nil, ballot: Ballot? = nil,
        revoting: Bool = false, batching: BallotBatching? = nil
    ) {
        self.id = id
        self.name = name
        self.description = description
        self.registration = registration
        self.voting = voting
        self.maxCandidates = maxCandidates
        self.resultsAfterClose = resultsAfterClose
        self.ballotKey = ballotKey
        self.ballot = ballot
        self.revoting = revoting
        self.batching = batching
    }

    /// The place-created event's flags (FORMAT.md §11.1): bit 0 is `resultsAfterClose`, bit 1 anonymous ballots
    /// (a `ballotKey`); no other bit is defined.
    public var flags: UInt32 {
        (resultsAfterClose ? Place.resultsAfterCloseFlag : 0) | (ballotKey != nil ? Place.anonymousBallotFlag : 0)
            | (ballot != nil ? Place.ballotFlag : 0) | (revoting ? Place.revotingFlag : 0)
            | (batching != nil ? Place.batchingFlag : 0)
    }

    /// Whether the place takes anonymous ballots (blind-signed credentials) rather than voters' tokens.
    public var isAnonymous: Bool { ballotKey != nil }

    /// Flag bit 0: results embargoed until voting ends.
    public static let resultsAfterCloseFlag: UInt32 = 1
    /// Flag bit 1: anonymous ballots; the ballot key follows the flags.
    public static let anonymousBallotFlag: UInt32 = 2
    /// Flag bit 2: a ballot of questions (FORMAT.md §11.21) follows the flags (and the ballot key, if any).
    public static let ballotFlag: UInt32 = 4
    /// Flag bit 3: re-voting; a voter may cast again until voting ends and only the last ballot counts (§11.24).
    public static let revotingFlag: UInt32 = 8
    /// Flag bit 4: the ballots of an anonymous place are held and written in batches (§11.31); the rule follows
    /// the ballot (or the ballot key).
    public static let batchingFlag: UInt32 = 16
    /// Every flag bit defined.
    public static let knownFlags: UInt32 =
        resultsAfterCloseFlag | anonymousBallotFlag | ballotFlag | revotingFlag | batchingFlag
}

/// How an anonymous place's ballots are held and written together (FORMAT.md §11.31), so that the ledger's order
/// and times do not tie a ballot to the issuance just before it: every ballot that arrives is held, and the held
/// ballots are written in one block, in an order no one can predict, at the end of each `interval` (counted from
/// the start of voting) when one is set, once at least `size` are held when a size is set (with both: at the end
/// of an interval, if at least `size` are held), and whatever is held when voting is about to close.
public struct BallotBatching: Equatable, Hashable, Sendable {
    /// The length of each batch's interval in ms, counted from the start of voting; `nil`: no interval.
    public var interval: Int64?
    /// The fewest ballots a batch holds (but the one written as voting closes); `nil`: no minimum.
    public var size: UInt32?

    public init(interval: Int64? = nil, size: UInt32? = nil) {
        self.interval = interval
        self.size = size
    }

    /// The shortest and longest interval a place may set: a second, a week.
    public static let intervals: ClosedRange<Int64> = 1_000...604_800_000
    /// The smallest and largest size a place may set.
    public static let sizes: ClosedRange<UInt32> = 2...1_000_000

    /// The end of the interval that holds `time` (at or after `start`, the start of voting), or `nil` without an
    /// interval: when a ballot arriving at `time` is written at the earliest.
    public func intervalEnd(after time: Int64, start: Int64) -> Int64? {
        guard let interval else { return nil }
        let elapsed = max(0, time - start)
        return start + (elapsed / interval + 1) * interval
    }
}

/// Where a place stands at a given time.
public enum PlaceStatus: String, CaseIterable, Sendable {
    case upcoming, registration, waiting, voting, ended
    /// Cancelled by the authority before its voting opened (FORMAT.md §11.30): whatever the time, nothing more
    /// happens in it.
    case cancelled
}

/// Every fact the election records. Each is one ledger event; the identity of a voter and the voting
/// token never appear, only their keyed hash and hash.
public enum ElectionEvent: Equatable, Sendable {
    case placeCreated(Place)
    case candidateRegistered(place: UInt32, candidate: UInt32, name: String, pledge: String)
    case candidateWithdrawn(place: UInt32, candidate: UInt32)
    /// `voterTag` = HMAC-SHA256(ledger secret, normalised identity); `tokenHash` = SHA-256(token).
    /// `weight` (1 unless the authority gives more, in a place with a ballot): what the voter's ballot counts as
    /// (shares, units); a weight of 1 is recorded as a plain authorisation, any other as a weighted one.
    case voterAuthorized(place: UInt32, voterTag: Digest, tokenHash: Digest, weight: UInt64 = 1)
    case voteCast(place: UInt32, candidate: UInt32, tokenHash: Digest)
    /// A new token for an authorised voter who has not voted (a lost letter): `newTokenHash` replaces
    /// `oldTokenHash`, the voter's current token, which can no longer vote. The voter stays authorised once.
    case voterTokenReissued(place: UInt32, voterTag: Digest, oldTokenHash: Digest, newTokenHash: Digest)
    /// The place's final tally, computed over the first `treeSize` events of the ledger.
    case resultsCertified(CertifiedResults)
    /// Binds the voter secret to this ledger: `VoterSecret.commitment(secret, ledgerID:)`. Written at
    /// creation as the first election event (block 1, event 0), never by a command; a writer refuses a
    /// `voter.secret` that does not match it.
    case voterSecretCommitment(Digest)
    /// An anonymous place's voter was issued a ballot credential: the blind signature of the blinded message
    /// whose SHA-256 is `blindedMessageHash`, for the issuance code whose SHA-256 is `tokenHash` (used up).
    case credentialIssued(place: UInt32, tokenHash: Digest, blindedMessageHash: Digest)
    /// A vote in an anonymous place: `credential` is the RFC 9474 prepared message (64 bytes) and `signature`
    /// its RSASSA-PSS signature under the place's ballot key. Nothing in it names the voter.
    case anonymousVoteCast(place: UInt32, candidate: UInt32, credential: [UInt8], signature: [UInt8])
    /// A vote in a place with a ballot of questions: the voter's answers, one per question, cast with the token
    /// whose SHA-256 is `tokenHash`.
    case ballotCast(place: UInt32, tokenHash: Digest, answers: [Answer])
    /// A voter who has cast a ballot in a re-voting place casts again: these answers replace the token's earlier
    /// ones in the count, and the earlier event stays on the ledger.
    case ballotReplaced(place: UInt32, tokenHash: Digest, answers: [Answer])
    /// The final counts of a place that asks questions, certified once its voting window has closed.
    case ballotResultsCertified(BallotResults)
    /// A ballot of answers in an anonymous place that asks questions: the voter's answers, cast with a credential
    /// (the RFC 9474 prepared message) and its signature under the place's ballot key. Nothing in it names the voter.
    case anonymousBallotCast(place: UInt32, credential: [UInt8], signature: [UInt8], answers: [Answer])
    /// A correction to a place before its voting ends (FORMAT.md §11.28): its name, description and voting window
    /// from now on. The place-created event stays as it was; this one says what changed and when (its block).
    case placeAmended(place: UInt32, name: String, description: String, voting: TimeWindow)
    /// The authority takes back the authorisation of a voter who has not voted, before the place's voting ends
    /// (FORMAT.md §11.29): the voter's current token (`tokenHash`) no longer votes and the voter, with `weight`,
    /// leaves the electorate. The authorisation stays on the ledger; this event says it was withdrawn and when.
    case voterWithdrawn(place: UInt32, voterTag: Digest, tokenHash: Digest, weight: UInt64)
    /// The authority cancels a place before its voting opens (FORMAT.md §11.30), saying why (`reason`, trimmed,
    /// may be empty). Every later command on the place is refused; its events so far stay on the ledger.
    case placeCancelled(place: UInt32, reason: String)
}

/// The final counts of a place with a ballot of questions as certified on the ledger (FORMAT.md §11.26): the
/// electorate and the turnout, members and weight, and each question's totals and outcome, over the first
/// `treeSize` events of the ledger.
public struct BallotResults: Equatable, Sendable {
    public var place: UInt32
    /// Events in the ledger before the certification (the results cover exactly these).
    public var treeSize: UInt64
    /// The place's authorised voters and their summed weight.
    public var electorate: Weighed
    /// The voters who cast a ballot and their summed weight.
    public var voted: Weighed
    /// Per question, in order.
    public var questions: [QuestionResult]

    public init(place: UInt32, treeSize: UInt64, electorate: Weighed, voted: Weighed, questions: [QuestionResult]) {
        self.place = place
        self.treeSize = treeSize
        self.electorate = electorate
        self.voted = voted
        self.questions = questions
    }
}

/// A place's final results as certified on the ledger once its voting window has closed.
public struct CertifiedResults: Equatable, Sendable {
    public var place: UInt32
    /// Events in the ledger before the certification (the results cover exactly these).
    public var treeSize: UInt64
    public var authorized: UInt64
    public var voted: UInt64
    /// (candidate id, votes) for every candidate of the place, in id order.
    public var votes: [(candidate: UInt32, votes: UInt64)]

    public init(
        place: UInt32, treeSize: UInt64, authorized: UInt64, voted: UInt64, votes: [(candidate: UInt32, votes: UInt64)]
    ) {
        self.place = place
        self.treeSize = treeSize
        self.authorized = authorized
        self.voted = voted
        self.votes = votes
    }

    public static func == (lhs: CertifiedResults, rhs: CertifiedResults) -> Bool {
        lhs.place == rhs.place && lhs.treeSize == rhs.treeSize && lhs.authorized == rhs.authorized
            && lhs.voted == rhs.voted && lhs.votes.map(\.candidate) == rhs.votes.map(\.candidate)
            && lhs.votes.map(\.votes) == rhs.votes.map(\.votes)
    }
}

/// What an authority, candidate or voter asks for. The contract turns it into events or a violation.
public enum Command: Equatable, Sendable {
    case createPlace(
        name: String, description: String, registration: TimeWindow, voting: TimeWindow, maxCandidates: UInt32?,
        resultsAfterClose: Bool = false, ballotKey: [UInt8]? = nil, ballot: Ballot? = nil, revoting: Bool = false,
        batching: BallotBatching? = nil)
    case registerCandidate(place: UInt32, name: String, pledge: String)
    case withdrawCandidate(place: UInt32, candidate: UInt32)
    case authorizeVoter(place: UInt32, voterTag: Digest, tokenHash: Digest, weight: UInt64 = 1)
    case castVote(place: UInt32, candidate: UInt32, tokenHash: Digest)
    /// Replace the voter's current token `oldTokenHash` (the service looks it up) with `newTokenHash`.
    case reissueToken(place: UInt32, voterTag: Digest, oldTokenHash: Digest, newTokenHash: Digest)
    /// Certify the place's results; `treeSize` is the number of events in the ledger before this one.
    case certifyResults(place: UInt32, treeSize: UInt64)
    /// Record that the issuance code `tokenHash` was used to have the blinded message `blindedMessageHash`
    /// signed (the service signs it once this is durable).
    case issueCredential(place: UInt32, tokenHash: Digest, blindedMessageHash: Digest)
    /// Cast an anonymous ballot: a credential (prepared message) and its signature under the place's key.
    case castAnonymousVote(place: UInt32, candidate: UInt32, credential: [UInt8], signature: [UInt8])
    /// Cast a token's answers to the questions of a place with a ballot.
    case castBallot(place: UInt32, answers: [Answer], tokenHash: Digest)
    /// Certify the counts of a place that asks questions: `questions` and `votedWeight` are the recount of its
    /// ballots (`ElectionView.ballotCount`), which the contract cannot make (it holds no answers) and a verifier
    /// makes again; `treeSize` as for `certifyResults`.
    case certifyBallotResults(place: UInt32, treeSize: UInt64, votedWeight: UInt64, questions: [QuestionResult])
    /// Correct a place before its voting ends: a new name, description or voting window (`nil` keeps each).
    case amendPlace(place: UInt32, name: String?, description: String?, voting: TimeWindow?)
    /// Withdraw the authorisation of the voter with `voterTag` in `place`, whose current token is `tokenHash` (the
    /// service reads it from the log, as for a re-issue).
    case withdrawVoter(place: UInt32, voterTag: Digest, tokenHash: Digest)
    /// Cancel a place before its voting opens, with a reason (may be empty).
    case cancelPlace(place: UInt32, reason: String)
    /// Cast an anonymous ballot of answers: a credential and its signature under the place's key, and the answers
    /// to the questions of the place.
    case castAnonymousBallot(place: UInt32, answers: [Answer], credential: [UInt8], signature: [UInt8])
}

/// Why the contract refused a command, in words a person understands. Never carries a token or identity.
public enum Violation: Error, Equatable, Sendable, CustomStringConvertible {
    case invalidText(field: String, reason: String)
    case invalidWindows(String)
    case votingMustStartInFuture
    case placeNotFound(UInt32)
    case candidateNotFound(place: UInt32, candidate: UInt32)
    case registrationClosed(place: UInt32, status: PlaceStatus)
    case duplicateCandidateName(String)
    case candidateLimitReached(UInt32)
    case withdrawalClosed(place: UInt32)
    case alreadyWithdrawn(candidate: UInt32)
    case authorizationClosed(place: UInt32)
    case voterAlreadyAuthorized
    case tokenAlreadyIssued
    case reissueClosed(place: UInt32)
    case voterNotAuthorized(place: UInt32)
    case notCurrentToken
    case voterAlreadyVoted
    case invalidIdentity
    /// A correction of place `place` that §11.28 refuses, and why.
    case amendmentRefused(place: UInt32, reason: String)
    /// A voter withdrawal in place `place` that §11.29 refuses, and why.
    case withdrawalRefused(place: UInt32, reason: String)
    /// A cancellation of place `place` that §11.30 refuses, and why.
    case cancellationRefused(place: UInt32, reason: String)
    /// A command on a place that was cancelled (§11.30).
    case placeCancelled(UInt32)
    case votingClosed(place: UInt32, status: PlaceStatus)
    case tokenNotAuthorized(place: UInt32)
    case alreadyVoted
    case candidateWithdrawn(candidate: UInt32)
    case resultsBeforeClose(place: UInt32)
    case resultsAlreadyCertified(place: UInt32)
    case resultsDiffer(place: UInt32)
    case misplacedSecretCommitment
    case secretCommitmentNotAtCreation
    case invalidBallotKey
    case notAnonymous(place: UInt32)
    case onlyAnonymousBallots(place: UInt32)
    case issuanceClosed(place: UInt32)
    case codeNotAuthorized(place: UInt32)
    case credentialAlreadyIssued
    case invalidBallotSignature(place: UInt32)
    case credentialAlreadyVoted
    case noCredentialLeft(place: UInt32)
    /// Not a rule of the format: the store's own voter roll (PostgreSQL's `vote_roll`) holds a row for this
    /// command's voter that is not what the chain gives (it was changed outside the ledger), so the store refused
    /// it; the block's other commands are written without it.
    case voterRollDisagrees(place: UInt32)
    /// A place's ballot breaks a rule of §11.21.
    case invalidBallot(BallotViolation)
    /// Two options of one question with the same name key (§11.4), as two candidates of a place may not.
    case duplicateOption(question: Int, name: String)
    /// A place with a ballot cannot also take anonymous ballots (not defined yet).
    case anonymousRevoting
    /// A batch rule that is not one (§11.31): for a place without anonymous ballots, with neither an interval
    /// nor a size, or with one out of range.
    case invalidBatching(String)
    /// A candidate or a candidate's vote for a place that asks questions instead.
    case placeAsksQuestions(place: UInt32)
    /// Answers for a place that has candidates, not questions.
    case placeHasNoBallot(place: UInt32)
    /// An answer that breaks a rule of its question (§11.21), with the question's number from 1.
    case invalidAnswer(question: Int, AnswerViolation)
    /// The counts of a place with a ballot are not certified on the ledger (yet): `vote tally` recounts them.
    case ballotNotCertifiable(place: UInt32)
    /// Re-voting asked for a place with candidates (only a place with a ballot may allow it).
    case revotingWithoutBallot
    /// A weight out of range, or given where weights are not taken (§11.25).
    case invalidWeight(String)

    public var description: String {
        switch self {
        case .invalidText(let field, let reason): return "\(field) \(reason)"
        case .invalidWindows(let reason): return "invalid windows: \(reason)"
        case .votingMustStartInFuture: return "the voting window must start in the future"
        case .placeNotFound(let place): return "place \(place) does not exist"
        case .candidateNotFound(let place, let candidate):
            return "candidate \(candidate) does not exist in place \(place)"
        case .registrationClosed(let place, let status):
            return "candidate registration for place \(place) is not open (the place is \(status.rawValue))"
        case .duplicateCandidateName(let name): return "a candidate named \"\(name)\" is already registered"
        case .candidateLimitReached(let limit): return "the place already has its maximum of \(limit) candidates"
        case .withdrawalClosed(let place):
            return "candidates of place \(place) can no longer withdraw: voting has opened"
        case .alreadyWithdrawn(let candidate): return "candidate \(candidate) has already withdrawn"
        case .authorizationClosed(let place):
            return "voting in place \(place) has closed; no more voters can be authorised"
        case .voterAlreadyAuthorized: return "voter already authorised"
        case .tokenAlreadyIssued: return "this token is already issued"
        case .reissueClosed(let place): return "voting in place \(place) has closed; no more tokens can be issued"
        case .voterNotAuthorized(let place): return "voter not authorised in place \(place)"
        case .notCurrentToken: return "the replaced token is not the voter's current token"
        case .voterAlreadyVoted: return "this voter has already voted"
        case .invalidIdentity:
            return
                "voter identity must be a phone number in E.164 form (+821012345678), an e-mail address, or a member id of 1-64 characters without control characters"
        case .votingClosed(let place, let status):
            return "voting in place \(place) is not open (the place is \(status.rawValue))"
        case .tokenNotAuthorized(let place): return "this token is not authorised to vote in place \(place)"
        case .alreadyVoted: return "this token has already voted"
        case .candidateWithdrawn(let candidate): return "candidate \(candidate) has withdrawn"
        case .amendmentRefused(let place, let reason): return "place \(place) cannot be amended: \(reason)"
        case .cancellationRefused(let place, let reason): return "place \(place) cannot be cancelled: \(reason)"
        case .placeCancelled(let place): return "place \(place) is cancelled"
        case .withdrawalRefused(let place, let reason):
            return "the voter cannot be withdrawn from place \(place): \(reason)"
        case .resultsBeforeClose(let place):
            return "results of place \(place) can be certified only after voting has closed"
        case .resultsAlreadyCertified(let place): return "results of place \(place) are already certified"
        case .resultsDiffer(let place): return "the certified results of place \(place) differ from the votes cast"
        case .misplacedSecretCommitment:
            return "a voter secret commitment may only be the first election event, alone in block 1"
        case .secretCommitmentNotAtCreation:
            return "a voter secret commitment must have the ledger's creation time as its block time"
        case .invalidBallotKey: return "the ballot key is not an RSA public key of 3072 to 4096 bits"
        case .notAnonymous(let place): return "place \(place) does not use anonymous ballots"
        case .onlyAnonymousBallots(let place): return "place \(place) takes only anonymous ballots"
        case .issuanceClosed(let place):
            return "voting in place \(place) has closed; no more credentials can be issued"
        case .codeNotAuthorized(let place): return "this issuance code is not authorised in place \(place)"
        case .credentialAlreadyIssued: return "a credential has already been issued for this issuance code"
        case .invalidBallotSignature(let place):
            return "the ballot's signature does not verify under place \(place)'s key"
        case .credentialAlreadyVoted: return "this credential has already voted"
        case .noCredentialLeft(let place):
            return "place \(place) has no more credentials issued than votes cast"
        case .voterRollDisagrees(let place):
            return
                "the database's voter roll row for this voter in place \(place) was changed outside the ledger: nothing was recorded (vote verify names the row)"
        case .invalidBallot(let violation): return "the ballot \(violation.text)"
        case .duplicateOption(let question, let name): return "question \(question) has two options named \"\(name)\""
        case .anonymousRevoting: return "an anonymous place cannot allow re-voting: a credential casts one ballot"
        case .invalidBatching(let reason): return "ballot batches: \(reason)"
        case .placeAsksQuestions(let place):
            return "place \(place) asks questions: it has no candidates; cast answers to its ballot"
        case .placeHasNoBallot(let place): return "place \(place) has candidates, not questions: cast a candidate"
        case .invalidAnswer(let question, let violation): return "answer to question \(question): \(violation.text)"
        case .revotingWithoutBallot: return "re-voting is for a place with a ballot of questions"
        case .invalidWeight(let reason): return reason
        case .ballotNotCertifiable(let place):
            return "place \(place) asks questions: its results are certified as ballot results, not as candidate votes"
        }
    }
}
