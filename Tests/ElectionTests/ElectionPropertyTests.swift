import Election
import LedgerCrypto
import TestSupport
import Testing

// MARK: - Independent model of the rules

/// The election as the test understands it, kept apart from `ElectionState`: what each place holds and which
/// rules a command breaks. Candidate names are tracked by "group" (names equal up to case, surrounding
/// whitespace and Unicode normalisation share a group), so uniqueness is decided without the contract's keys.
struct ElectionModel {
    /// A candidate-name spelling: the text sent, the text the contract records (trimmed), and its group.
    struct Name {
        var text: String
        var trimmed: String
        var group: Int
    }

    /// Candidate names to draw from; groups 0 and 1 each have several spellings, group -1 is invalid.
    static let names: [Name] = [
        Name(text: "Alice", trimmed: "Alice", group: 0),
        Name(text: "ALICE", trimmed: "ALICE", group: 0),
        Name(text: "  alice\t", trimmed: "alice", group: 0),
        Name(text: "Jos\u{E9}", trimmed: "Jos\u{E9}", group: 1),
        Name(text: "Jose\u{301}", trimmed: "Jose\u{301}", group: 1),
        Name(text: "JOS\u{C9} ", trimmed: "JOS\u{C9}", group: 1),
        Name(text: "Bob", trimmed: "Bob", group: 2),
        Name(text: "Chlo\u{E9}", trimmed: "Chlo\u{E9}", group: 3),
        Name(text: "\u{AE40}\u{BBFC}\u{C218}", trimmed: "\u{AE40}\u{BBFC}\u{C218}", group: 4),
        Name(text: "\u{5D3}\u{5E0}\u{5D4}", trimmed: "\u{5D3}\u{5E0}\u{5D4}", group: 5),
        Name(text: "Dmitri", trimmed: "Dmitri", group: 6),
        Name(text: "Zo\u{EB}", trimmed: "Zo\u{EB}", group: 7),
        Name(text: "Eve", trimmed: "Eve", group: 8),
        Name(text: " ", trimmed: "", group: -1),
    ]

    /// One place as the model holds it.
    struct PlaceModel {
        var registration: TimeWindow
        var voting: TimeWindow
        var limit: UInt32?
        var names: [Name] = []
        var withdrawn: [Bool] = []
        /// Authorised voter tags and each one's current token.
        var tags: [Digest: Digest] = [:]
        /// Authorised tokens and whether each has voted (a re-issue moves a token to `replaced`).
        var tokens: [Digest: Bool] = [:]
        var replaced: Set<Digest> = []
        /// Accepted votes per candidate, by id - 1.
        var votes: [UInt64] = []
        /// The results recorded when the place was certified, if it was.
        var certified: CertifiedResults?

        func status(at t: Int64) -> PlaceStatus {
            switch t {
            case ..<registration.start: .upcoming
            case ..<registration.end: .registration
            case ..<voting.start: .waiting
            case ..<voting.end: .voting
            default: .ended
            }
        }

        /// The results of place `id` as the model counts them, for a certification covering `treeSize` events.
        func results(id: UInt32, treeSize: UInt64) -> CertifiedResults {
            CertifiedResults(
                place: id, treeSize: treeSize, authorized: UInt64(tokens.count),
                voted: UInt64(tokens.values.count(where: { $0 })),
                votes: votes.indices.map { (candidate: UInt32($0 + 1), votes: votes[$0]) })
        }
    }

    var places: [PlaceModel] = []

    /// The model's place `id`, if it exists.
    func place(_ id: UInt32) -> PlaceModel? {
        id >= 1 && Int(id) <= places.count ? places[Int(id) - 1] : nil
    }

    /// Every rule `command` breaks at `t`. The contract may report any one of them; empty means it must accept.
    /// `placeName` is the model's view of a createPlace name: its trimmed form, empty when invalid.
    func violations(of command: Command, at t: Int64, placeName: String = "") -> [Violation] {
        var broken: [Violation] = []
        switch command {
        case .createPlace(_, _, let registration, let voting, let limit, _, _, _, _, _):
            if placeName.isEmpty { broken.append(.invalidText(field: "place name", reason: "")) }
            if registration.start >= registration.end { broken.append(.invalidWindows("")) }
            if registration.end > voting.start { broken.append(.invalidWindows("")) }
            if voting.start >= voting.end { broken.append(.invalidWindows("")) }
            if voting.start <= t { broken.append(.votingMustStartInFuture) }
            if limit == 0 { broken.append(.invalidText(field: "maximum number of candidates", reason: "")) }

        case .registerCandidate(let id, let text, _):
            guard let place = place(id) else { return [.placeNotFound(id)] }
            let name = Self.names.first { $0.text == text }!
            let status = place.status(at: t)
            if status != .registration { broken.append(.registrationClosed(place: id, status: status)) }
            if name.group < 0 { broken.append(.invalidText(field: "candidate name", reason: "")) }
            if name.group >= 0, place.names.contains(where: { $0.group == name.group }) {
                broken.append(.duplicateCandidateName(name.trimmed))
            }
            if let limit = place.limit, place.names.count >= Int(limit) { broken.append(.candidateLimitReached(limit)) }

        case .withdrawCandidate(let id, let candidate):
            guard let place = place(id) else { return [.placeNotFound(id)] }
            guard candidate >= 1, Int(candidate) <= place.names.count else {
                return [.candidateNotFound(place: id, candidate: candidate)]
            }
            if t >= place.voting.start { broken.append(.withdrawalClosed(place: id)) }
            if place.withdrawn[Int(candidate) - 1] { broken.append(.alreadyWithdrawn(candidate: candidate)) }

        case .authorizeVoter(let id, let tag, let token, _):
            guard let place = place(id) else { return [.placeNotFound(id)] }
            if t >= place.voting.end { broken.append(.authorizationClosed(place: id)) }
            if place.tags[tag] != nil { broken.append(.voterAlreadyAuthorized) }
            if place.tokens[token] != nil || place.replaced.contains(token) { broken.append(.tokenAlreadyIssued) }

        case .reissueToken(let id, let tag, let old, let new):
            guard let place = place(id) else { return [.placeNotFound(id)] }
            if t >= place.voting.end { broken.append(.reissueClosed(place: id)) }
            if place.tags[tag] == nil {
                broken.append(.voterNotAuthorized(place: id))
            } else if place.tags[tag] != old {
                broken.append(.notCurrentToken)
            } else if place.tokens[old] == true {
                broken.append(.voterAlreadyVoted)
            }
            if place.tokens[new] != nil || place.replaced.contains(new) { broken.append(.tokenAlreadyIssued) }

        case .castVote(let id, let candidate, let token):
            guard let place = place(id) else { return [.placeNotFound(id)] }
            let status = place.status(at: t)
            if status != .voting { broken.append(.votingClosed(place: id, status: status)) }
            switch place.tokens[token] {
            case nil: broken.append(.tokenNotAuthorized(place: id))
            case true?: broken.append(.alreadyVoted)
            case false?: break
            }
            if candidate >= 1, Int(candidate) <= place.names.count {
                if place.withdrawn[Int(candidate) - 1] { broken.append(.candidateWithdrawn(candidate: candidate)) }
            } else {
                broken.append(.candidateNotFound(place: id, candidate: candidate))
            }

        case .certifyResults(let id, _):
            guard let place = place(id) else { return [.placeNotFound(id)] }
            if t < place.voting.end { broken.append(.resultsBeforeClose(place: id)) }
            if place.certified != nil { broken.append(.resultsAlreadyCertified(place: id)) }

        case .issueCredential, .castAnonymousVote, .castAnonymousBallot, .castBallot, .certifyBallotResults,
            .amendPlace, .withdrawVoter, .cancelPlace:
            preconditionFailure(
                "the model makes no anonymous places or ballots (AnonymousBallotTests, BallotRuleTests)")
        }
        return broken
    }

    /// The one event an accepted `command` must produce.
    func expectedEvent(of command: Command, placeName: String) -> ElectionEvent {
        switch command {
        case .createPlace(_, let description, let registration, let voting, let limit, _, _, _, _, _):
            return .placeCreated(
                Place(
                    id: UInt32(places.count + 1), name: placeName, description: description, registration: registration,
                    voting: voting, maxCandidates: limit))
        case .registerCandidate(let id, let text, let pledge):
            let name = Self.names.first { $0.text == text }!
            return .candidateRegistered(
                place: id, candidate: UInt32(places[Int(id) - 1].names.count + 1), name: name.trimmed, pledge: pledge)
        case .withdrawCandidate(let id, let candidate):
            return .candidateWithdrawn(place: id, candidate: candidate)
        case .authorizeVoter(let id, let tag, let token, _):
            return .voterAuthorized(place: id, voterTag: tag, tokenHash: token)
        case .reissueToken(let id, let tag, let old, let new):
            return .voterTokenReissued(place: id, voterTag: tag, oldTokenHash: old, newTokenHash: new)
        case .castVote(let id, let candidate, let token):
            return .voteCast(place: id, candidate: candidate, tokenHash: token)
        case .certifyResults(let id, let treeSize):
            return .resultsCertified(places[Int(id) - 1].results(id: id, treeSize: treeSize))
        case .issueCredential, .castAnonymousVote, .castAnonymousBallot, .castBallot, .certifyBallotResults,
            .amendPlace, .withdrawVoter, .cancelPlace:
            preconditionFailure(
                "the model makes no anonymous places or ballots (AnonymousBallotTests, BallotRuleTests)")
        }
    }

    /// Records an accepted command.
    mutating func accept(_ command: Command) {
        switch command {
        case .createPlace(_, _, let registration, let voting, let limit, _, _, _, _, _):
            places.append(PlaceModel(registration: registration, voting: voting, limit: limit))
        case .registerCandidate(let id, let text, _):
            places[Int(id) - 1].names.append(Self.names.first { $0.text == text }!)
            places[Int(id) - 1].withdrawn.append(false)
            places[Int(id) - 1].votes.append(0)
        case .withdrawCandidate(let id, let candidate):
            places[Int(id) - 1].withdrawn[Int(candidate) - 1] = true
        case .authorizeVoter(let id, let tag, let token, _):
            places[Int(id) - 1].tags[tag] = token
            places[Int(id) - 1].tokens[token] = false
        case .reissueToken(let id, let tag, let old, let new):
            places[Int(id) - 1].tokens[old] = nil
            places[Int(id) - 1].replaced.insert(old)
            places[Int(id) - 1].tags[tag] = new
            places[Int(id) - 1].tokens[new] = false
        case .castVote(let id, let candidate, let token):
            places[Int(id) - 1].tokens[token] = true
            places[Int(id) - 1].votes[Int(candidate) - 1] += 1
        case .certifyResults(let id, let treeSize):
            places[Int(id) - 1].certified = places[Int(id) - 1].results(id: id, treeSize: treeSize)
        case .issueCredential, .castAnonymousVote, .castAnonymousBallot, .castBallot, .certifyBallotResults,
            .amendPlace, .withdrawVoter, .cancelPlace:
            preconditionFailure(
                "the model makes no anonymous places or ballots (AnonymousBallotTests, BallotRuleTests)")
        }
    }
}

/// Whether `reported` is the rule `expected` names: same case and values, except the free-text reason of
/// `invalidText` and `invalidWindows`, which the model does not spell out.
func sameRule(_ reported: Violation, _ expected: Violation) -> Bool {
    switch (reported, expected) {
    case (.invalidText(let field, _), .invalidText(let expectedField, _)): field == expectedField
    case (.invalidWindows, .invalidWindows): true
    default: reported == expected
    }
}

/// The name of the rule `violation` reports, for coverage counts.
func ruleName(_ violation: Violation) -> String {
    switch violation {
    case .resultsBeforeClose: "resultsBeforeClose"
    case .resultsAlreadyCertified: "resultsAlreadyCertified"
    case .resultsDiffer: "resultsDiffer"
    case .invalidText(let field, _): "invalidText(\(field))"
    case .invalidWindows: "invalidWindows"
    case .invalidBatching: "invalidBatching"
    case .votingMustStartInFuture: "votingMustStartInFuture"
    case .placeNotFound: "placeNotFound"
    case .candidateNotFound: "candidateNotFound"
    case .registrationClosed: "registrationClosed"
    case .duplicateCandidateName: "duplicateCandidateName"
    case .candidateLimitReached: "candidateLimitReached"
    case .withdrawalClosed: "withdrawalClosed"
    case .alreadyWithdrawn: "alreadyWithdrawn"
    case .authorizationClosed: "authorizationClosed"
    case .voterAlreadyAuthorized: "voterAlreadyAuthorized"
    case .tokenAlreadyIssued: "tokenAlreadyIssued"
    case .reissueClosed: "reissueClosed"
    case .voterNotAuthorized: "voterNotAuthorized"
    case .notCurrentToken: "notCurrentToken"
    case .voterAlreadyVoted: "voterAlreadyVoted"
    case .invalidIdentity: "invalidIdentity"
    case .votingClosed: "votingClosed"
    case .tokenNotAuthorized: "tokenNotAuthorized"
    case .alreadyVoted: "alreadyVoted"
    case .candidateWithdrawn: "candidateWithdrawn"
    case .misplacedSecretCommitment: "misplacedSecretCommitment"
    case .secretCommitmentNotAtCreation: "secretCommitmentNotAtCreation"
    case .invalidBallotKey, .notAnonymous, .onlyAnonymousBallots, .issuanceClosed, .codeNotAuthorized,
        .credentialAlreadyIssued, .invalidBallotSignature, .credentialAlreadyVoted, .noCredentialLeft,
        .voterRollDisagrees, .invalidBallot, .anonymousRevoting, .placeAsksQuestions, .placeHasNoBallot,
        .invalidAnswer, .ballotNotCertifiable, .duplicateOption, .revotingWithoutBallot, .invalidWeight,
        .amendmentRefused, .withdrawalRefused, .cancellationRefused, .placeCancelled:
        "\(violation)"
    }
}

// MARK: - Random sequences

/// One random run: ~200 commands over 1-3 places at monotonically advancing times, decided by the contract
/// and checked step by step against the model. Certifications pass the tree size the ledger would: the number
/// of events recorded so far, which is the leaf index of the certification itself.
struct RandomElection {
    let seed: UInt64
    private var random: SplitMix64
    private var model = ElectionModel()
    private(set) var scenario = Scenario()
    private var t: Int64 = Fixture.now
    private var nextVoter = 0
    private var nextToken = 0
    private var knownTags: [Digest] = []
    private var knownTokens: [Digest] = []
    /// Accepted votes as (place, candidate), counted independently of the state.
    private(set) var acceptedVotes: [(place: UInt32, candidate: UInt32)] = []
    /// How often each rule was reported, and how many commands (of them certifications) were accepted.
    private(set) var refusals: [String: Int] = [:]
    private(set) var accepted = 0
    private(set) var certifications = 0
    private(set) var reissues = 0
    /// The first disagreement between contract and model, if any.
    private(set) var problem: String?

    init(seed: UInt64) {
        self.seed = seed
        random = SplitMix64(seed: seed)
    }

    /// Runs `steps` commands, stopping at the first disagreement.
    mutating func run(steps: Int) {
        for step in 0..<steps where problem == nil {
            t += Int64(random.int(0...3))
            let (command, placeName) = nextCommand()
            perform(command, placeName: placeName, step: step)
        }
    }

    /// Decides `command` at the current time, compares the outcome with the model's, and applies it if accepted.
    private mutating func perform(_ command: Command, placeName: String, step: Int) {
        let context = "seed \(seed), step \(step), t \(t), \(command)"
        let broken = model.violations(of: command, at: t, placeName: placeName)
        let before = scenario.state
        let logged = scenario.log.count
        do {
            let event = try scenario.run(command, at: t)
            accepted += 1
            guard broken.isEmpty else { return fail("accepted although it breaks \(broken): \(context)") }
            let expected = model.expectedEvent(of: command, placeName: placeName)
            guard event == expected else { return fail("produced \(event), expected \(expected): \(context)") }
            let recheck = violation { () throws(Violation) in
                try Contract.recheck(event, state: before, at: t, index: UInt64(logged))
            }
            if let recheck { return fail("recheck refused its own event with \(recheck): \(context)") }
            guard (try? ElectionEvent(event.ledgerEvent)) == event else { return fail("codec round trip: \(context)") }
            model.accept(command)
            if case .castVote(let place, let candidate, _) = command { acceptedVotes.append((place, candidate)) }
            if case .reissueToken = command { reissues += 1 }
            if case .certifyResults(let place, _) = command {
                certifications += 1
                let elsewhere = violation { () throws(Violation) in
                    try Contract.recheck(event, state: before, at: t, index: UInt64(logged) + 1)
                }
                guard elsewhere == .resultsDiffer(place: place) else {
                    return fail("recheck at the next index gave \(String(describing: elsewhere)): \(context)")
                }
            }
            // Nothing accepted after a certification changes what it recorded.
            for place in scenario.state.places {
                guard let certified = place.certified else { continue }
                guard Contract.results(of: place, treeSize: certified.treeSize) == certified else {
                    return fail("place \(place.place.id) changed after its certification: \(context)")
                }
            }
        } catch {
            refusals[ruleName(error), default: 0] += 1
            guard scenario.state == before, scenario.log.count == logged else {
                return fail("a refused command changed the state: \(context)")
            }
            guard broken.contains(where: { sameRule(error, $0) }) else {
                return fail(
                    "refused with \(error), model expected \(broken.isEmpty ? "acceptance" : "\(broken)"): \(context)")
            }
        }
    }

    private mutating func fail(_ message: String) { problem = message }

    // MARK: Command generation

    /// A random command and, for createPlace, the name the model expects recorded ("" when invalid).
    private mutating func nextCommand() -> (Command, String) {
        if model.places.isEmpty || (model.places.count < 3 && random.chance(4)) { return createPlace() }
        // Certify now and then: often where voting has ended and nothing is certified yet, rarely otherwise.
        let uncertifiedEnded = model.places.contains { $0.status(at: t) == .ended && $0.certified == nil }
        if random.chance(uncertifiedEnded ? 10 : 2) {
            let place = randomPlace(preferring: [.ended])
            return (.certifyResults(place: place, treeSize: scenario.nextIndex), "")
        }
        // Most votes go where voting is open; with no place voting, mostly prepare (a few votes still fail).
        let votingSomewhere = model.places.contains { $0.status(at: t) == .voting }
        let (register, withdraw, authorize) = votingSomewhere ? (15, 19, 45) : (35, 42, 85)
        switch random.int(0...99) {
        case ..<register:
            let place = randomPlace(preferring: [.registration])
            let name = random.pick(ElectionModel.names).text
            return (
                .registerCandidate(place: place, name: name, pledge: random.pick(["", "Parks for all", "더 나은 내일\n"])),
                ""
            )
        case ..<withdraw:
            let place = randomPlace(preferring: [.registration, .waiting])
            return (.withdrawCandidate(place: place, candidate: randomCandidate(in: place)), "")
        case ..<authorize where random.chance(80):
            let place = randomPlace(preferring: [.upcoming, .registration, .waiting, .voting])
            return (.authorizeVoter(place: place, voterTag: randomTag(), tokenHash: randomAuthorisationToken()), "")
        case ..<authorize:
            return reissue()
        default:
            let place = randomPlace(preferring: [.voting])
            return (
                .castVote(place: place, candidate: randomChoice(in: place), tokenHash: randomVoteToken(in: place)), ""
            )
        }
    }

    /// A re-issue: usually of an authorised voter's current token, sometimes naming a voter never authorised
    /// there, a token that is not the voter's current one, or a new token already issued.
    private mutating func reissue() -> (Command, String) {
        let place = randomPlace(preferring: [.upcoming, .registration, .waiting, .voting])
        let authorised = model.place(place)?.tags.sorted { $0.key < $1.key } ?? []
        let (tag, current) = !authorised.isEmpty && random.chance(85) ? random.pick(authorised) : (randomTag(), nil)
        let old = current.flatMap { random.chance(85) ? $0 : nil } ?? randomVoteToken(in: place)
        return (
            .reissueToken(place: place, voterTag: tag, oldTokenHash: old, newTokenHash: randomAuthorisationToken()), ""
        )
    }

    /// A createPlace with windows around the current time, sometimes invalid in one or more ways.
    private mutating func createPlace() -> (Command, String) {
        // Now and then the whole schedule lies in the past, so voting would not start in the future.
        let registrationStart = t + Int64(random.chance(6) ? random.int(-300...(-200)) : random.int(-30...80))
        let registrationEnd = registrationStart + Int64(random.int(-2...100))
        let votingStart = registrationEnd + Int64(random.int(-3...60))
        let votingEnd = votingStart + Int64(random.int(-2...250))
        let limit: UInt32? =
            switch random.int(0...9) {
            case 0...2: nil
            case 3: 0
            default: UInt32(random.int(1...5))
            }
        let valid = random.chance(92)
        let name = valid ? "Place \(model.places.count + 1)" : ""
        let command = Command.createPlace(
            name: valid ? "  \(name) " : " \t ", description: random.pick(["", "About it\nand more"]),
            registration: TimeWindow(start: registrationStart, end: registrationEnd),
            voting: TimeWindow(start: votingStart, end: votingEnd), maxCandidates: limit)
        return (command, name)
    }

    /// Usually a place whose status is one of `statuses` (if any is), otherwise any existing place; sometimes
    /// 0 or the next, missing, id.
    private mutating func randomPlace(preferring statuses: [PlaceStatus]) -> UInt32 {
        if random.chance(5) { return random.pick([0, UInt32(model.places.count + 1)]) }
        let fitting = model.places.indices.filter { statuses.contains(model.places[$0].status(at: t)) }
        if !fitting.isEmpty && random.chance(75) { return UInt32(random.pick(fitting) + 1) }
        return UInt32(random.int(1...model.places.count))
    }

    /// Mostly a registered candidate of `place`; sometimes 0 or one past the last.
    private mutating func randomCandidate(in place: UInt32) -> UInt32 {
        let count = model.place(place)?.names.count ?? 0
        return count > 0 && random.chance(90) ? UInt32(random.int(1...count)) : random.pick([0, UInt32(count + 1)])
    }

    /// A vote's candidate: usually one still standing in `place`, otherwise any candidate id.
    private mutating func randomChoice(in place: UInt32) -> UInt32 {
        let standing =
            model.place(place)?.withdrawn.indices.filter { !model.places[Int(place) - 1].withdrawn[$0] } ?? []
        if !standing.isEmpty && random.chance(75) { return UInt32(random.pick(standing) + 1) }
        return randomCandidate(in: place)
    }

    /// Mostly a fresh voter tag; sometimes one already authorised somewhere.
    private mutating func randomTag() -> Digest {
        if !knownTags.isEmpty && random.chance(25) { return random.pick(knownTags) }
        nextVoter += 1
        knownTags.append(Fixture.tag(nextVoter))
        return knownTags.last!
    }

    /// Mostly a fresh token; sometimes one already issued somewhere.
    private mutating func randomAuthorisationToken() -> Digest {
        if !knownTokens.isEmpty && random.chance(20) { return random.pick(knownTokens) }
        return freshToken()
    }

    /// A token for a vote in `place`: usually one authorised there that has not voted, otherwise one that has,
    /// one from another place, or one never issued.
    private mutating func randomVoteToken(in place: UInt32) -> Digest {
        let tokens = model.place(place)?.tokens ?? [:]
        let unused = tokens.filter { !$0.value }.keys.sorted()
        let used = tokens.filter { $0.value }.keys.sorted()
        switch random.int(0...99) {
        case 0..<60 where !unused.isEmpty: return random.pick(unused)
        case 60..<78 where !used.isEmpty: return random.pick(used)
        case 78..<90 where !knownTokens.isEmpty: return random.pick(knownTokens)
        default: return freshToken()
        }
    }

    private mutating func freshToken() -> Digest {
        nextToken += 1
        knownTokens.append(Fixture.token(nextToken))
        return knownTokens.last!
    }

    // MARK: Final checks

    /// Checks the final state against the independent vote count, the projections' invariants, snapshot
    /// continuation at `cut`, and a verifying replay; returns the problems found.
    func finalProblems(cut: Int) -> [String] {
        var problems: [String] = []
        let state = scenario.state
        if state.places.count != model.places.count { problems.append("place count") }
        for (index, place) in state.places.enumerated() {
            let id = UInt32(index + 1)
            let modelPlace = model.places[index]
            let tally = Projections.tally(place)
            let recount = tally.indices.map { offset in
                UInt64(acceptedVotes.count(where: { $0.place == id && $0.candidate == UInt32(offset + 1) }))
            }
            if tally.map(\.votes) != recount {
                problems.append("place \(id): tally \(tally.map(\.votes)) != recount \(recount)")
            }
            if tally.map(\.candidate) != tally.indices.map({ UInt32($0 + 1) }) {
                problems.append("place \(id): candidate ids not sequential")
            }
            if tally.map(\.name) != modelPlace.names.map(\.trimmed) { problems.append("place \(id): names") }
            if tally.map(\.withdrawn) != modelPlace.withdrawn { problems.append("place \(id): withdrawn flags") }
            let turnout = Projections.turnout(place)
            if tally.reduce(0, { $0 + $1.votes }) != turnout.voted {
                problems.append("place \(id): tally sum != voted")
            }
            if turnout.voted > turnout.authorized { problems.append("place \(id): more votes than voters") }
            if turnout.authorized != UInt64(modelPlace.tokens.count) {
                problems.append("place \(id): authorised count")
            }
            if turnout.voted != UInt64(modelPlace.tokens.values.count(where: { $0 })) {
                problems.append("place \(id): voted count")
            }
            if place.certified != modelPlace.certified {
                problems.append(
                    "place \(id): certified \(String(describing: place.certified)) != model's "
                        + String(describing: modelPlace.certified))
            }
            if let certified = place.certified {
                // Nothing can happen after voting ends, so the certified results are the final recount.
                if certified.votes.map(\.votes) != recount || certified.votes.map(\.votes) != modelPlace.votes {
                    problems.append(
                        "place \(id): certified votes \(certified.votes.map(\.votes)) != recount \(recount)")
                }
                if certified.votes.map(\.candidate) != tally.map(\.candidate) {
                    problems.append("place \(id): certified candidates")
                }
                if certified.authorized != turnout.authorized || certified.voted != turnout.voted {
                    problems.append("place \(id): certified turnout")
                }
                let recorded = scenario.log.first {
                    if case .resultsCertified(let results) = $0.event { results.place == id } else { false }
                }
                if recorded?.index != certified.treeSize {
                    problems.append("place \(id): tree size \(certified.treeSize) is not the leaf index")
                }
            }
        }

        // Snapshot at the cut, then the tail, equals the whole.
        let log = scenario.log
        let atCut = cut < log.count ? log[cut].before : state
        let snapshot = Snapshot(height: UInt64(cut), headerHash: SHA256.hash(Array("block \(cut)".utf8)), state: atCut)
        do {
            let decoded = try Snapshot(decoding: snapshot.encoded)
            if decoded != snapshot { problems.append("snapshot at \(cut) does not round-trip") }
            var resumed = decoded.state
            for recorded in log[cut...] { resumed.apply(recorded.event) }
            if resumed.places != state.places { problems.append("snapshot at \(cut) + tail != full state") }
            if try Snapshot(decoding: Snapshot(height: 0, headerHash: .zero, state: state).encoded).state.places
                != state.places
            {
                problems.append("final snapshot does not round-trip")
            }
        } catch {
            problems.append("snapshot at \(cut) does not decode: \(error)")
        }

        // Verifying replay from nothing: every event passes recheck at its time and the fold gives the state.
        var replayed = ElectionState()
        for (index, recorded) in log.enumerated() {
            if let refused = violation(of: { () throws(Violation) in
                try Contract.recheck(recorded.event, state: replayed, at: recorded.time, index: UInt64(index))
            }) {
                problems.append("replay: event \(index) refused with \(refused)")
                break
            }
            replayed.apply(recorded.event)
        }
        if replayed != state { problems.append("replay does not rebuild the state") }
        return problems.map { "seed \(seed): \($0)" }
    }
}

// MARK: - Properties

/// Random command sequences checked against the independent model: outcomes, tallies, turnout, certified
/// results, snapshots and recheck all agree. Seeds are fixed; 8 batches of 40 sequences of 200 commands run in
/// parallel.
@Suite struct ElectionPropertyTests {
    static let batches = 8
    static let sequencesPerBatch = 40
    static let steps = 200

    /// Every rule the generator is built to exercise; each must be hit in every batch.
    static let exercisedRules: Set<String> = [
        "invalidText(place name)", "invalidText(maximum number of candidates)", "invalidText(candidate name)",
        "invalidWindows", "votingMustStartInFuture", "placeNotFound", "candidateNotFound", "registrationClosed",
        "duplicateCandidateName", "candidateLimitReached", "withdrawalClosed", "alreadyWithdrawn",
        "authorizationClosed", "voterAlreadyAuthorized", "tokenAlreadyIssued", "votingClosed", "tokenNotAuthorized",
        "alreadyVoted", "candidateWithdrawn", "resultsBeforeClose", "resultsAlreadyCertified", "reissueClosed",
        "voterNotAuthorized", "notCurrentToken", "voterAlreadyVoted",
    ]

    /// In every random sequence the contract accepts exactly what the model allows (producing the model's
    /// event, which recheck accepts at its leaf index and refuses at the next), refuses with a rule the model says
    /// is broken (changing nothing), tallies equal a naive recount of accepted votes, the tally sum equals
    /// turnout.voted ≤ authorised, certified results equal the model's recount and never change afterwards,
    /// snapshot plus tail equals full replay, and a verifying replay rebuilds the state.
    @Test(arguments: 0..<batches)
    func randomSequencesAgreeWithModel(batch: Int) {
        var refusals: [String: Int] = [:]
        var accepted = 0
        var votes = 0
        var certifications = 0
        var certifiedVotes: UInt64 = 0
        var reissues = 0
        for index in 0..<Self.sequencesPerBatch {
            let seed = UInt64(batch * Self.sequencesPerBatch + index) &* 0x5851_F42D_4C95_7F2D &+ 1
            var election = RandomElection(seed: seed)
            election.run(steps: Self.steps)
            if let problem = election.problem {
                Issue.record(Comment(rawValue: problem))
                continue
            }
            var cutter = SplitMix64(seed: ~seed)
            let cut = cutter.int(0...election.scenario.log.count)
            for problem in election.finalProblems(cut: cut) { Issue.record(Comment(rawValue: problem)) }
            refusals.merge(election.refusals, uniquingKeysWith: +)
            accepted += election.accepted
            votes += election.acceptedVotes.count
            certifications += election.certifications
            reissues += election.reissues
            certifiedVotes += election.scenario.state.places.compactMap(\.certified).reduce(0) { $0 + $1.voted }
        }
        let missing = Self.exercisedRules.subtracting(refusals.keys)
        #expect(missing.isEmpty, "rules never exercised in batch \(batch): \(missing.sorted())")
        #expect(accepted > Self.sequencesPerBatch * Self.steps / 5, "too few accepted commands: \(accepted)")
        #expect(votes > Self.sequencesPerBatch * 10, "too few accepted votes: \(votes)")
        #expect(certifications > Self.sequencesPerBatch / 2, "too few certifications: \(certifications)")
        #expect(certifiedVotes > 0, "no certification in batch \(batch) recorded any vote")
        #expect(reissues > Self.sequencesPerBatch, "too few accepted re-issues: \(reissues)")
    }

    /// The same seed gives the same sequence (so a reported seed reproduces its failure).
    @Test func sequencesAreReproducible() {
        var first = RandomElection(seed: 2026)
        var second = RandomElection(seed: 2026)
        first.run(steps: Self.steps)
        second.run(steps: Self.steps)
        #expect(first.scenario.log.map(\.event) == second.scenario.log.map(\.event))
        #expect(first.scenario.state == second.scenario.state)
    }
}
