import Ballots
public import Ledger
public import LedgerCrypto

/// The rules of an election, as a pure reducer: `decide` turns a command into events at the block's time
/// `t` or throws the violated rule; `ElectionState.apply` folds the events. No I/O, no clock.
///
/// This is an implementation of `Ledger/FORMAT.md` §11, which is normative: each command's checks are the
/// numbered rules of its event type, in the order the text lists them.
public enum Contract {
    /// Longest place or candidate name, in Unicode code points after trimming (§11.3.3).
    public static let maxNameLength = 200
    /// Longest description or pledge, in Unicode code points (§11.3.4).
    public static let maxTextLength = 2000
    /// The largest weight one authorisation may carry (§11.25.1).
    public static let maxWeight: UInt64 = 1_000_000
    /// The largest summed weight of a place's voters (§11.25.3): a ranked count keeps votes in hundred-thousandths,
    /// so every total fits in 64 bits.
    public static let maxPlaceWeight: UInt64 = 10_000_000_000_000

    /// The event `command` records against `state` at time `t` (every command records exactly one), or the
    /// rule it breaks. `committed` is the voter roll the state's own `roll` changes sit on (the writer's
    /// table); without it the state's roll is the whole roll.
    public static func decide(
        _ command: Command, state: ElectionState, committed: (any VoterRegistry)? = nil, at t: Int64
    ) throws(Violation) -> ElectionEvent {
        try event(for: command, roll: Roll(state: state, committed: committed), at: t, signatureVerified: false)
    }

    /// The voter roll a decision reads: the state's entries over the committed ones.
    private struct Roll: VoterRegistry {
        let state: ElectionState
        let committed: (any VoterRegistry)?

        func entry(_ key: VoterRoll.Key) -> VoterRoll.Entry? {
            guard state.roll != nil || committed != nil else {
                preconditionFailure("a counts-only state cannot decide voter commands without a committed roll")
            }
            return state.roll?.entry(key) ?? committed?.entry(key)
        }
    }

    /// Every command records exactly one event: this one, or the rule it breaks. `signatureVerified` says the
    /// caller has already checked an anonymous ballot's signature under its place's key (the verifier checks a
    /// block's signatures on every core before it folds the block in order).
    private static func event(
        for command: Command, roll: Roll, at t: Int64, signatureVerified: Bool
    ) throws(Violation) -> ElectionEvent {
        let state = roll.state
        switch command {
        case .createPlace(
            let name, let description, let registration, let voting, let maxCandidates, let resultsAfterClose,
            let ballotKey, let ballot, let revoting, let batching):
            // §11.7: rules 11.7.1-11.7.9, then the check only a command can fail (§11.15).
            let name = try checkName(name, field: "place name")
            let description = try checkText(description, field: "description")
            guard [registration.start, registration.end, voting.start, voting.end].allSatisfy({ $0 >= 0 }) else {
                throw .invalidWindows("times must not be before 1970")
            }
            guard registration.start < registration.end else {
                throw .invalidWindows("registration must start before it ends")
            }
            guard registration.end <= voting.start else {
                throw .invalidWindows("registration must end no later than voting starts")
            }
            guard voting.start < voting.end else { throw .invalidWindows("voting must start before it ends") }
            guard voting.start > t else { throw .votingMustStartInFuture }
            if let maxCandidates, maxCandidates == 0 {
                throw .invalidText(field: "maximum number of candidates", reason: "must be at least 1")
            }
            if let ballotKey { _ = try BallotKey(der: ballotKey) }
            let ballot = try ballot.map { (ballot) throws(Violation) in try checkBallot(ballot) }
            // Rule 11.7.11: an anonymous place takes no re-voting (a credential casts one ballot).
            if ballotKey != nil && revoting { throw .anonymousRevoting }
            // Rule 11.7.12: a ballot of questions has no candidate limit.
            if ballot != nil {
                guard maxCandidates == nil else {
                    throw .invalidText(
                        field: "maximum number of candidates", reason: "is for a place with candidates, not questions")
                }
            }
            // Rule 11.7.13: re-voting is for a place with a ballot.
            if revoting && ballot == nil { throw .revotingWithoutBallot }
            if let batching { try checkBatching(batching, anonymous: ballotKey != nil) }
            let place = Place(
                id: UInt32(state.places.count + 1), name: name, description: description, registration: registration,
                voting: voting, maxCandidates: maxCandidates, resultsAfterClose: resultsAfterClose,
                ballotKey: ballotKey, ballot: ballot, revoting: revoting, batching: batching)
            return .placeCreated(place)

        case .amendPlace(let placeID, let newName, let newDescription, let newVoting):
            // §11.28: rules 11.28.1-11.28.9.
            let place = try existing(placeID, in: state).place
            func refused(_ reason: String) -> Violation { .amendmentRefused(place: placeID, reason: reason) }
            guard t < place.voting.end else { throw refused("its voting has ended, and its results stand as voted") }
            let name = try newName.map { (name) throws(Violation) in try checkName(name, field: "place name") }
            let description = try newDescription.map { (text) throws(Violation) in
                try checkText(text, field: "description")
            }
            let voting = newVoting ?? place.voting
            guard voting.start >= 0, voting.start < voting.end else {
                throw refused("voting must start before it ends")
            }
            if t >= place.voting.start {
                // Voting is open: a voter may already have read the window, so it only grows.
                guard voting.start == place.voting.start else {
                    throw refused("voting has started, so its start stays")
                }
                guard voting.end >= place.voting.end else {
                    throw refused("voting has started, so it may be extended but not shortened")
                }
            } else {
                guard voting.start > t else { throw refused("voting must start in the future") }
                guard voting.start >= place.registration.end else {
                    throw refused("voting must start no earlier than registration ends")
                }
            }
            let (newName, newDescription) = (name ?? place.name, description ?? place.description)
            guard (newName, newDescription, voting) != (place.name, place.description, place.voting) else {
                throw refused("the amendment changes nothing")
            }
            return .placeAmended(place: placeID, name: newName, description: newDescription, voting: voting)

        case .cancelPlace(let placeID, let reason):
            // §11.30: rules 11.30.1-11.30.4.
            guard let place = state.place(placeID) else { throw .placeNotFound(placeID) }
            func refused(_ reason: String) -> Violation { .cancellationRefused(place: placeID, reason: reason) }
            guard !place.cancelled else { throw refused("it is already cancelled") }
            guard t < place.place.voting.start else { throw refused("its voting has opened") }
            return .placeCancelled(place: placeID, reason: try checkReason(reason))

        case .withdrawVoter(let placeID, let voterTag, let tokenHash):
            // §11.29: rules 11.29.1-11.29.6; the weight is the voter's own (11.6.3).
            let place = try existing(placeID, in: state)
            func refused(_ reason: String) -> Violation { .withdrawalRefused(place: placeID, reason: reason) }
            guard t < place.place.voting.end else { throw refused("its voting has ended") }
            guard roll.isAuthorized(voterTag: voterTag, place: placeID) else {
                throw refused("the voter is not authorised there")
            }
            guard !roll.isWithdrawn(voterTag: voterTag, place: placeID) else {
                throw refused("the voter is already withdrawn")
            }
            guard roll.isCurrent(tokenHash: tokenHash, voterTag: voterTag, place: placeID) else {
                throw refused("the token is not the voter's current token")
            }
            guard roll.hasVoted(tokenHash: tokenHash, place: placeID) == false else {
                // In an anonymous place the code bought a credential, which votes without naming the voter.
                throw refused(
                    place.place.isAnonymous
                        ? "a ballot credential was already issued for the voter's code, and a credential cannot be taken back"
                        : "the voter has voted")
            }
            return .voterWithdrawn(
                place: placeID, voterTag: voterTag, tokenHash: tokenHash, weight: place.weight(ofVoter: voterTag))

        case .registerCandidate(let placeID, let name, let pledge):
            // §11.8: rules 11.8.1-11.8.6.
            let place = try existing(placeID, in: state)
            guard place.place.ballot == nil else { throw .placeAsksQuestions(place: placeID) }
            let status = place.status(at: t)
            guard status == .registration else { throw .registrationClosed(place: placeID, status: status) }
            let name = try checkName(name, field: "candidate name")
            let pledge = try checkText(pledge, field: "pledge")
            guard !place.nameKeys.contains(NameKey.of(name)) else { throw .duplicateCandidateName(name) }
            if let limit = place.place.maxCandidates, place.candidates.count >= Int(limit) {
                throw .candidateLimitReached(limit)
            }
            return .candidateRegistered(
                place: placeID, candidate: UInt32(place.candidates.count + 1), name: name, pledge: pledge)

        case .withdrawCandidate(let placeID, let candidateID):
            // §11.9: rules 11.9.1-11.9.4.
            let place = try existing(placeID, in: state)
            guard let candidate = place.candidate(candidateID) else {
                throw .candidateNotFound(place: placeID, candidate: candidateID)
            }
            guard t < place.place.voting.start else { throw .withdrawalClosed(place: placeID) }
            guard !candidate.withdrawn else { throw .alreadyWithdrawn(candidate: candidateID) }
            return .candidateWithdrawn(place: placeID, candidate: candidateID)

        case .authorizeVoter(let placeID, let voterTag, let tokenHash, let weight):
            // §11.10: rules 11.10.1-11.10.4; a weight, §11.25: rules 11.25.1-11.25.3.
            let place = try existing(placeID, in: state)
            guard t < place.place.voting.end else { throw .authorizationClosed(place: placeID) }
            if weight != 1 {
                guard weight >= 1, weight <= Contract.maxWeight else {
                    throw .invalidWeight("a weight must be a whole number from 1 to \(Contract.maxWeight)")
                }
                guard place.place.ballot != nil else {
                    throw .invalidWeight("only a place that asks questions takes weighted voters")
                }
                guard !place.place.isAnonymous else {
                    throw .invalidWeight("an anonymous place takes no weights: each voter casts one credential")
                }
            }
            guard place.authorizedWeight + weight <= Contract.maxPlaceWeight else {
                throw .invalidWeight("the place's voters would weigh more than \(Contract.maxPlaceWeight) in all")
            }
            guard !roll.isAuthorized(voterTag: voterTag, place: placeID) else { throw .voterAlreadyAuthorized }
            guard !roll.isIssued(tokenHash: tokenHash, place: placeID) else { throw .tokenAlreadyIssued }
            return .voterAuthorized(place: placeID, voterTag: voterTag, tokenHash: tokenHash, weight: weight)

        case .reissueToken(let placeID, let voterTag, let oldTokenHash, let newTokenHash):
            // §11.17: rules 11.17.1-11.17.6. Allowed whenever authorisation is (before voting ends).
            let place = try existing(placeID, in: state)
            guard t < place.place.voting.end else { throw .reissueClosed(place: placeID) }
            guard roll.isAuthorized(voterTag: voterTag, place: placeID),
                !roll.isWithdrawn(voterTag: voterTag, place: placeID)
            else { throw .voterNotAuthorized(place: placeID) }
            guard roll.isCurrent(tokenHash: oldTokenHash, voterTag: voterTag, place: placeID) else {
                throw .notCurrentToken
            }
            guard roll.hasVoted(tokenHash: oldTokenHash, place: placeID) == false else {
                // In an anonymous place the old code was used to have a credential issued, not to vote.
                throw place.place.isAnonymous ? .credentialAlreadyIssued : .voterAlreadyVoted
            }
            guard !roll.isIssued(tokenHash: newTokenHash, place: placeID) else { throw .tokenAlreadyIssued }
            return .voterTokenReissued(
                place: placeID, voterTag: voterTag, oldTokenHash: oldTokenHash, newTokenHash: newTokenHash)

        case .castVote(let placeID, let candidateID, let tokenHash):
            // §11.11: rules 11.11.1-11.11.6, and 11.11.1a for anonymous places.
            let place = try existing(placeID, in: state)
            guard !place.place.isAnonymous else { throw .onlyAnonymousBallots(place: placeID) }
            guard place.place.ballot == nil else { throw .placeAsksQuestions(place: placeID) }
            let status = place.status(at: t)
            guard status == .voting else { throw .votingClosed(place: placeID, status: status) }
            guard let voted = roll.hasVoted(tokenHash: tokenHash, place: placeID) else {
                throw .tokenNotAuthorized(place: placeID)
            }
            guard !voted else { throw .alreadyVoted }
            guard let candidate = place.candidate(candidateID) else {
                throw .candidateNotFound(place: placeID, candidate: candidateID)
            }
            guard !candidate.withdrawn else { throw .candidateWithdrawn(candidate: candidateID) }
            return .voteCast(place: placeID, candidate: candidateID, tokenHash: tokenHash)

        case .castBallot(let placeID, let answers, let tokenHash):
            // §11.22: rules 11.22.1-11.22.5.
            let place = try existing(placeID, in: state)
            guard let ballot = place.place.ballot else { throw .placeHasNoBallot(place: placeID) }
            guard !place.place.isAnonymous else { throw .onlyAnonymousBallots(place: placeID) }
            let status = place.status(at: t)
            guard status == .voting else { throw .votingClosed(place: placeID, status: status) }
            guard let voted = roll.hasVoted(tokenHash: tokenHash, place: placeID) else {
                throw .tokenNotAuthorized(place: placeID)
            }
            guard !voted || place.place.revoting else { throw .alreadyVoted }
            if let (question, violation) = ballot.violation(of: answers) {
                throw .invalidAnswer(question: question + 1, violation)
            }
            return voted
                ? .ballotReplaced(place: placeID, tokenHash: tokenHash, answers: answers)
                : .ballotCast(place: placeID, tokenHash: tokenHash, answers: answers)

        case .certifyResults(let placeID, let treeSize):
            // §11.12: rules 11.12.1-11.12.3; `recheck` compares the results (11.12.4).
            let place = try existing(placeID, in: state)
            guard place.place.ballot == nil else { throw .ballotNotCertifiable(place: placeID) }
            guard t >= place.place.voting.end else { throw .resultsBeforeClose(place: placeID) }
            guard place.certified == nil else { throw .resultsAlreadyCertified(place: placeID) }
            return .resultsCertified(results(of: place, treeSize: treeSize))

        case .certifyBallotResults(let placeID, let treeSize, let votedWeight, let questions):
            // §11.26: rules 11.26.1-11.26.4, and of 11.26.5 what the state holds (the totals of the electorate and
            // the turnout, a result per question and per option); the verifier recounts the rest.
            let place = try existing(placeID, in: state)
            guard let ballot = place.place.ballot else { throw .placeHasNoBallot(place: placeID) }
            guard t >= place.place.voting.end else { throw .resultsBeforeClose(place: placeID) }
            guard place.ballotResults == nil else { throw .resultsAlreadyCertified(place: placeID) }
            let shaped =
                questions.count == ballot.questions.count
                && zip(ballot.questions, questions).allSatisfy { question, result in
                    if case .yesNo = question.method { return result.options.count == 3 }
                    return result.options.count == question.options.count
                }
            guard shaped else { throw .resultsDiffer(place: placeID) }
            return .ballotResultsCertified(
                BallotResults(
                    place: placeID, treeSize: treeSize,
                    electorate: Weighed(members: place.authorized, weight: place.authorizedWeight),
                    voted: Weighed(members: place.voted, weight: votedWeight), questions: questions))

        case .issueCredential(let placeID, let tokenHash, let blindedMessageHash):
            // §11.18: rules 11.18.1-11.18.5.
            let place = try existing(placeID, in: state)
            guard place.place.isAnonymous else { throw .notAnonymous(place: placeID) }
            guard t < place.place.voting.end else { throw .issuanceClosed(place: placeID) }
            guard let used = roll.hasVoted(tokenHash: tokenHash, place: placeID) else {
                throw .codeNotAuthorized(place: placeID)
            }
            guard !used else { throw .credentialAlreadyIssued }
            return .credentialIssued(place: placeID, tokenHash: tokenHash, blindedMessageHash: blindedMessageHash)

        case .castAnonymousVote(let placeID, let candidateID, let credential, let signature):
            // §11.19: rules 11.19.1-11.19.8.
            let place = try credentialPlace(
                placeID, credential: credential, signature: signature, signatureVerified: signatureVerified, roll: roll,
                at: t)
            guard place.place.ballot == nil else { throw .placeAsksQuestions(place: placeID) }
            guard let candidate = place.candidate(candidateID) else {
                throw .candidateNotFound(place: placeID, candidate: candidateID)
            }
            guard !candidate.withdrawn else { throw .candidateWithdrawn(candidate: candidateID) }
            return .anonymousVoteCast(
                place: placeID, candidate: candidateID, credential: credential, signature: signature)

        case .castAnonymousBallot(let placeID, let answers, let credential, let signature):
            // §11.27: the rules of §11.19 for the credential, then those of §11.22 for the answers.
            let place = try credentialPlace(
                placeID, credential: credential, signature: signature, signatureVerified: signatureVerified, roll: roll,
                at: t)
            guard let ballot = place.place.ballot else { throw .placeHasNoBallot(place: placeID) }
            if let (question, violation) = ballot.violation(of: answers) {
                throw .invalidAnswer(question: question + 1, violation)
            }
            return .anonymousBallotCast(place: placeID, credential: credential, signature: signature, answers: answers)
        }
    }

    /// Place `placeID` if `credential` may cast a ballot there at `t` (rules 11.19.1-11.19.6, which §11.27 shares):
    /// an anonymous place, voting open, the signature valid under its ballot key (or already checked, with
    /// `signatureVerified`), the credential unused and a credential issued for it.
    private static func credentialPlace(
        _ placeID: UInt32, credential: [UInt8], signature: [UInt8], signatureVerified: Bool, roll: Roll, at t: Int64
    ) throws(Violation) -> PlaceState {
        let place = try existing(placeID, in: roll.state)
        guard let key = place.ballotKey else { throw .notAnonymous(place: placeID) }
        let status = place.status(at: t)
        guard status == .voting else { throw .votingClosed(place: placeID, status: status) }
        guard credential.count == BallotKey.credentialByteCount,
            signatureVerified || key.verifies(signature, for: credential)
        else { throw .invalidBallotSignature(place: placeID) }
        guard roll.entry(VoterRoll.Key.credential(credential, place: placeID)) == nil else {
            throw .credentialAlreadyVoted
        }
        guard place.voted < place.issued else { throw .noCredentialLeft(place: placeID) }
        return place
    }

    /// The results of `place` as they stand: what a certification must record.
    public static func results(of place: PlaceState, treeSize: UInt64) -> CertifiedResults {
        CertifiedResults(
            place: place.place.id, treeSize: treeSize, authorized: place.authorized, voted: place.voted,
            votes: place.candidates.map { ($0.id, $0.votes) })
    }

    /// Re-decides a recorded event (§11.6): the command it records must be accepted at `t` and produce
    /// exactly it, byte for byte.
    /// This is how `verify` proves every event on the ledger obeyed the rules when it was written.
    /// `index` is the event's leaf index: certified results must cover exactly the events before it.
    /// `blockEvents` is the number of events in its block and `createdAt` the ledger's genesis time, which
    /// a voter secret commitment is checked against (nil: its time is not checked). `committed` is as for
    /// `decide`.
    /// `signatureVerified` says an anonymous vote's signature was already checked under its place's key.
    public static func recheck(
        _ event: ElectionEvent, state: ElectionState, committed: (any VoterRegistry)? = nil, at t: Int64, index: UInt64,
        blockEvents: Int = 1, createdAt: Int64? = nil, signatureVerified: Bool = false
    ) throws(Violation) {
        let command: Command
        switch event {
        case .placeCreated(let place):
            command = .createPlace(
                name: place.name, description: place.description, registration: place.registration,
                voting: place.voting, maxCandidates: place.maxCandidates, resultsAfterClose: place.resultsAfterClose,
                ballotKey: place.ballotKey, ballot: place.ballot, revoting: place.revoting, batching: place.batching)
        case .candidateRegistered(let place, _, let name, let pledge):
            command = .registerCandidate(place: place, name: name, pledge: pledge)
        case .candidateWithdrawn(let place, let candidate):
            command = .withdrawCandidate(place: place, candidate: candidate)
        case .placeAmended(let place, let name, let description, let voting):
            command = .amendPlace(place: place, name: name, description: description, voting: voting)
        case .placeCancelled(let place, let reason):
            command = .cancelPlace(place: place, reason: reason)
        case .voterWithdrawn(let place, let voterTag, let tokenHash, _):
            command = .withdrawVoter(place: place, voterTag: voterTag, tokenHash: tokenHash)
        case .voterAuthorized(let place, let voterTag, let tokenHash, let weight):
            command = .authorizeVoter(place: place, voterTag: voterTag, tokenHash: tokenHash, weight: weight)
        case .voterTokenReissued(let place, let voterTag, let oldTokenHash, let newTokenHash):
            command = .reissueToken(
                place: place, voterTag: voterTag, oldTokenHash: oldTokenHash, newTokenHash: newTokenHash)
        case .voteCast(let place, let candidate, let tokenHash):
            command = .castVote(place: place, candidate: candidate, tokenHash: tokenHash)
        case .ballotCast(let place, let tokenHash, let answers), .ballotReplaced(let place, let tokenHash, let answers):
            command = .castBallot(place: place, answers: answers, tokenHash: tokenHash)
        case .resultsCertified(let results):
            command = .certifyResults(place: results.place, treeSize: index)
        case .ballotResultsCertified(let results):
            command = .certifyBallotResults(
                place: results.place, treeSize: index, votedWeight: results.voted.weight, questions: results.questions)
        case .credentialIssued(let place, let tokenHash, let blindedMessageHash):
            command = .issueCredential(place: place, tokenHash: tokenHash, blindedMessageHash: blindedMessageHash)
        case .anonymousVoteCast(let place, let candidate, let credential, let signature):
            command = .castAnonymousVote(
                place: place, candidate: candidate, credential: credential, signature: signature)
        case .anonymousBallotCast(let place, let credential, let signature, let answers):
            command = .castAnonymousBallot(place: place, answers: answers, credential: credential, signature: signature)
        case .voterSecretCommitment:
            // §11.16: written at creation, alone in block 1 at the genesis time, not decided from a command.
            // Leaf 0 is the genesis event, so leaf 1 is the first election event; only one event has that
            // index, so this also allows at most one.
            guard index == 1, blockEvents == 1 else { throw .misplacedSecretCommitment }
            guard createdAt == nil || t == createdAt else { throw .secretCommitmentNotAtCreation }
            return
        }
        let roll = Roll(state: state, committed: committed)
        guard sameRecord(try self.event(for: command, roll: roll, at: t, signatureVerified: signatureVerified), event)
        else {
            if case .resultsCertified(let results) = event { throw .resultsDiffer(place: results.place) }
            if case .ballotResultsCertified(let results) = event { throw .resultsDiffer(place: results.place) }
            throw .invalidText(field: "recorded event", reason: "differs from what the contract decides")
        }
    }

    /// Whether two events record the same thing (rule 11.6.3): the same bytes on the ledger. Events holding
    /// text are compared by their encoding, since Swift's `==` on strings is canonical equivalence.
    private static func sameRecord(_ derived: ElectionEvent, _ recorded: ElectionEvent) -> Bool {
        switch derived {
        case .placeCreated, .candidateRegistered, .placeCancelled: derived.ledgerEvent == recorded.ledgerEvent
        default: derived == recorded
        }
    }

    // MARK: Rules shared by several commands

    /// Rules 11.7.14-11.7.16: a batch rule is for an anonymous place, sets an interval or a size, and each within
    /// its range.
    private static func checkBatching(_ batching: BallotBatching, anonymous: Bool) throws(Violation) {
        guard anonymous else { throw .invalidBatching("are for a place with anonymous ballots") }
        guard batching.interval != nil || batching.size != nil else {
            throw .invalidBatching("need an interval, a size or both")
        }
        if let interval = batching.interval, !BallotBatching.intervals.contains(interval) || interval % 1000 != 0 {
            throw .invalidBatching("the interval must be whole seconds, 1 second to 7 days")
        }
        if let size = batching.size, !BallotBatching.sizes.contains(size) {
            throw .invalidBatching("the size must be 2 to 1000000 ballots")
        }
    }

    /// A ballot (§11.21) whose texts are names and free text (§11.3), trimmed as a place's name is, and whose
    /// structure is sound.
    private static func checkBallot(_ ballot: Ballot) throws(Violation) -> Ballot {
        var checked = ballot
        for index in checked.questions.indices {
            let field = "question \(index + 1)"
            checked.questions[index].title = try checkName(ballot.questions[index].title, field: field + " title")
            checked.questions[index].description = try checkText(
                ballot.questions[index].description, field: field + " description")
            var keys: Set<[Unicode.Scalar]> = []
            for option in checked.questions[index].options.indices {
                let name = try checkName(
                    ballot.questions[index].options[option], field: field + " option \(option + 1)")
                guard keys.insert(NameKey.of(name)).inserted else {
                    throw .duplicateOption(question: index + 1, name: name)
                }
                checked.questions[index].options[option] = name
            }
        }
        if let violation = checked.violation { throw .invalidBallot(violation) }
        return checked
    }

    /// Place `id`, if it exists and was not cancelled (§11.30: every command on a cancelled place is refused).
    private static func existing(_ id: UInt32, in state: ElectionState) throws(Violation) -> PlaceState {
        guard let place = state.place(id) else { throw .placeNotFound(id) }
        guard !place.cancelled else { throw .placeCancelled(id) }
        return place
    }

    /// The longest reason a cancellation records, in UTF-8 bytes (§11.30.4).
    public static let maxReasonBytes = 500

    /// A cancellation's reason (§11.30.4): trimmed as a name is (11.3.1), then a text (11.3.4) of at most
    /// `maxReasonBytes` bytes.
    static func checkReason(_ reason: String) throws(Violation) -> String {
        let trimmed = try checkText(reason.trimmingWhitespace(), field: "cancellation reason")
        guard trimmed.utf8.count <= maxReasonBytes else {
            throw .invalidText(field: "cancellation reason", reason: "must be at most \(maxReasonBytes) bytes")
        }
        return trimmed
    }

    /// A name (§11.3.3) trimmed of surrounding White_Space: 1 to 200 code points, none forbidden.
    static func checkName(_ name: String, field: String) throws(Violation) -> String {
        let trimmed = name.trimmingWhitespace()
        guard !trimmed.isEmpty else { throw .invalidText(field: field, reason: "must not be empty") }
        guard trimmed.unicodeScalars.count <= maxNameLength else {
            throw .invalidText(field: field, reason: "must be at most \(maxNameLength) code points")
        }
        guard !trimmed.unicodeScalars.contains(where: isForbidden) else {
            throw .invalidText(field: field, reason: "must not contain control or text-direction characters")
        }
        return trimmed
    }

    /// Free text (§11.3.4: description, pledge), not trimmed: up to 2000 code points; line feed allowed,
    /// the other forbidden code points not.
    static func checkText(_ text: String, field: String) throws(Violation) -> String {
        guard text.unicodeScalars.count <= maxTextLength else {
            throw .invalidText(field: field, reason: "must be at most \(maxTextLength) code points")
        }
        guard !text.unicodeScalars.contains(where: { $0 != "\n" && isForbidden($0) }) else {
            throw .invalidText(field: field, reason: "must not contain control or text-direction characters")
        }
        return text
    }

    /// The forbidden code points of §11.3.2, listed rather than taken from a Unicode property of some
    /// version: the controls U+0000-U+001F and U+007F-U+009F (General_Category Cc), and the bidi marks,
    /// embeddings, overrides and isolates (Bidi_Control) that make text display differently from what it
    /// says (CVE-2021-42574).
    static func isForbidden(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }
}

/// Voter identities: checked and normalised before they are keyed into a voter tag. The identity itself
/// never reaches the ledger.
public enum VoterIdentity {
    /// The longest member id, in Unicode scalars, and the longest e-mail address, in UTF-8 bytes (RFC 5321's
    /// path limit less its angle brackets).
    static let maxMemberID = 64
    static let maxEmail = 254

    /// The canonical form of `identity` (FORMAT.md §11.15), with surrounding white space removed:
    /// - starting with "+", an E.164 phone number: "+" and 8-15 digits, the first not 0, once spaces, dots,
    ///   dashes and parentheses are removed;
    /// - holding "@", an e-mail address: one "@" with text on both sides, no white space, at most 254 bytes;
    /// - anything else, a member id of 1-64 characters (names with accents or spaces, unit numbers, keys in any
    ///   script), each run of white space inside it one space.
    /// No control or bidirectional formatting character is allowed (`Contract.isForbidden`). E-mail addresses and member
    /// ids are lowercased (Unicode's default case mapping) and put in Unicode Normalization Form C, so
    /// "José", "JOSÉ" and "Jose\u{301}" are one voter; an ASCII member id keeps the form it always had.
    public static func normalize(_ identity: String) throws(Violation) -> String {
        let trimmed = identity.trimmingWhitespace()
        if trimmed.hasPrefix("+") {
            let digits = trimmed.unicodeScalars.dropFirst().filter { !" .-()".unicodeScalars.contains($0) }
            guard (8...15).contains(digits.count), digits.allSatisfy({ ("0"..."9").contains($0) }),
                digits.first != "0"
            else { throw .invalidIdentity }
            return "+" + String(String.UnicodeScalarView(digits))
        }
        // White space inside (a tab between two names) is not refused: a member id makes it one space.
        guard !trimmed.isEmpty,
            !trimmed.unicodeScalars.contains(where: { Contract.isForbidden($0) && !$0.isWhiteSpace })
        else {
            throw .invalidIdentity
        }
        if trimmed.utf8.contains(UInt8(ascii: "@")) {
            let parts = trimmed.split(separator: "@", omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty,
                !trimmed.unicodeScalars.contains(where: \.isWhiteSpace)
            else { throw .invalidIdentity }
            let email = folded(trimmed)
            guard email.utf8.count <= maxEmail else { throw .invalidIdentity }
            return email
        }
        // One space for each run of white space inside the id, as a spreadsheet cell may hold two.
        var spaced = String.UnicodeScalarView()
        for scalar in trimmed.unicodeScalars {
            if scalar.isWhiteSpace {
                if spaced.last != " " { spaced.append(" ") }
            } else {
                spaced.append(scalar)
            }
        }
        let member = folded(String(spaced))
        guard member.unicodeScalars.count <= maxMemberID else { throw .invalidIdentity }
        return member
    }

    /// `text` lowercased, then in Normalization Form C (the standard library's composition: Election imports no
    /// Foundation).
    private static func folded(_ text: String) -> String {
        let lower = text.lowercased()
        if lower.utf8.allSatisfy({ $0 < 0x80 }) { return lower }
        return String(decoding: lower._nfcCodeUnits, as: UTF8.self)
    }

    /// The voter tag: HMAC-SHA256 under the ledger's voter secret of the normalised identity.
    public static func tag(_ identity: String, secret: [UInt8]) throws(Violation) -> Digest {
        HMACSHA256.authenticationCode(for: Array(try normalize(identity).utf8), key: secret)
    }
}

/// The voter secret's binding to one ledger (FORMAT.md §11.16): a ledger records the commitment when it is
/// created, and a writer refuses a `voter.secret` whose commitment differs, so a secret copied in from
/// another ledger cannot tag the same person a second time.
public enum VoterSecret {
    /// Separates the commitment from every other HMAC under the secret: it holds spaces, so no normalised
    /// identity (the voter tags' input) can equal it.
    static let commitmentDomain = Array("voteledger voter-secret commitment v1".utf8)

    /// HMAC-SHA256(secret, "voteledger voter-secret commitment v1" || ledger id).
    public static func commitment(_ secret: [UInt8], ledgerID: LedgerID) -> Digest {
        HMACSHA256.authenticationCode(for: commitmentDomain + ledgerID.bytes, key: secret)
    }
}

extension String {
    /// The string without leading and trailing White_Space (§11.3.1).
    func trimmingWhitespace() -> String {
        // Most text is ASCII with nothing to trim: answer that without a look at the list.
        if let first = utf8.first, let last = utf8.last, first > 0x20, first < 0x80, last > 0x20, last < 0x80 {
            return self
        }
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.isWhiteSpace }),
            let last = scalars.lastIndex(where: { !$0.isWhiteSpace })
        else { return "" }
        return String(scalars[first...last])
    }
}

extension Unicode.Scalar {
    /// Whether this is one of the 25 code points of Unicode's White_Space property (fixed since Unicode
    /// 6.3), listed in §11.3.1.
    var isWhiteSpace: Bool {
        switch value {
        case 0x09...0x0D, 0x20, 0x85, 0xA0, 0x1680, 0x2000...0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000: true
        default: false
        }
    }
}
