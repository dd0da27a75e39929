import Election
import Testing

/// The rules for registering and withdrawing candidates: the registration window, unique names, the limit,
/// sequential ids, and withdrawal only before voting and only once.
@Suite struct CandidateRuleTests {
    /// A standard place with no candidates yet.
    static func emptyPlace() throws -> Scenario { try Fixture.scenario(candidates: []) }

    // MARK: Registration window

    /// Registration is accepted at the window's first and last millisecond.
    @Test(arguments: [Fixture.registration.start, Fixture.registration.end - 1])
    func registersInsideWindow(t: Int64) throws {
        var scenario = try Self.emptyPlace()
        let event = try scenario.run(.registerCandidate(place: 1, name: "Alice", pledge: "Parks"), at: t)
        #expect(event == .candidateRegistered(place: 1, candidate: 1, name: "Alice", pledge: "Parks"))
        #expect(scenario.place(1).candidate(1)?.name == "Alice")
    }

    /// Registration is refused outside [start, end), naming the status the place is in at that time.
    @Test(arguments: [
        (Fixture.registration.start - 1, PlaceStatus.upcoming),
        (Fixture.now, .upcoming),
        (Fixture.registration.end, .waiting),
        (Fixture.voting.start - 1, .waiting),
        (Fixture.voting.start, .voting),
        (Fixture.voting.end, .ended),
    ])
    func refusesOutsideWindow(t: Int64, status: PlaceStatus) throws {
        expectRejected(
            .registerCandidate(place: 1, name: "Alice", pledge: ""), in: try Self.emptyPlace(), at: t,
            as: .registrationClosed(place: 1, status: status),
            mentioning: ["registration", "place 1", "not open", status.rawValue])
    }

    /// When registration ends exactly as voting starts, the end is refused with status voting.
    @Test func refusesAtEndOfAdjacentWindows() throws {
        var scenario = Scenario()
        let registration = TimeWindow(start: Fixture.now + 10, end: Fixture.now + 20)
        try scenario.run(
            Fixture.createPlace(
                registration: registration, voting: TimeWindow(start: Fixture.now + 20, end: Fixture.now + 30)),
            at: Fixture.now)
        try scenario.run(.registerCandidate(place: 1, name: "Alice", pledge: ""), at: Fixture.now + 19)
        expectRejected(
            .registerCandidate(place: 1, name: "Bob", pledge: ""), in: scenario, at: Fixture.now + 20,
            as: .registrationClosed(place: 1, status: .voting), mentioning: ["voting"])
    }

    // MARK: Place must exist

    /// Registering in a place that does not exist is refused, whatever the id.
    @Test(arguments: [0, 2, UInt32.max] as [UInt32])
    func refusesUnknownPlace(place: UInt32) throws {
        expectRejected(
            .registerCandidate(place: place, name: "Alice", pledge: ""), in: try Self.emptyPlace(),
            at: Fixture.duringRegistration, as: .placeNotFound(place), mentioning: ["place \(place)", "not exist"])
    }

    // MARK: Names

    /// Candidate names are trimmed; different names, and the same name in another place, are all accepted.
    @Test func acceptsDistinctNamesAndSameNameElsewhere() throws {
        var scenario = try Fixture.scenario(places: 2, candidates: [])
        let t = Fixture.duringRegistration
        try scenario.run(.registerCandidate(place: 1, name: "  Alice  ", pledge: ""), at: t)
        try scenario.run(.registerCandidate(place: 1, name: "Alicia", pledge: ""), at: t)
        try scenario.run(.registerCandidate(place: 1, name: "Jos\u{E9}", pledge: ""), at: t)
        try scenario.run(.registerCandidate(place: 2, name: "alice", pledge: ""), at: t)
        try scenario.run(.registerCandidate(place: 2, name: "Jose\u{301}", pledge: ""), at: t)
        #expect(scenario.place(1).candidates.map(\.name) == ["Alice", "Alicia", "Jos\u{E9}"])
        #expect(scenario.place(2).candidates.map(\.name) == ["alice", "Jose\u{301}"])
    }

    /// A name equal to a registered one up to case, surrounding whitespace or Unicode normalisation is refused.
    @Test(arguments: [
        ("alice", "ALICE"),
        ("ALICE", "alice"),
        ("Alice", "  aLiCe\t"),
        ("Jos\u{E9}", "Jose\u{301}"),  // NFC, then NFD
        ("Jose\u{301}", "Jos\u{E9}"),  // NFD, then NFC
        ("jos\u{E9}", "JOSE\u{301}"),  // case and normalisation at once
        ("\u{D55C}\u{AE00}", "\u{1112}\u{1161}\u{11AB}\u{1100}\u{1173}\u{11AF}"),  // 한글: precomposed, then jamo
    ])
    func refusesDuplicateName(first: String, second: String) throws {
        var scenario = try Self.emptyPlace()
        try scenario.run(.registerCandidate(place: 1, name: first, pledge: ""), at: Fixture.duringRegistration)
        let trimmed = second.trimmingSpaceAndTab()
        expectRejected(
            .registerCandidate(place: 1, name: second, pledge: "other"), in: scenario, at: Fixture.duringRegistration,
            as: .duplicateCandidateName(trimmed), mentioning: ["already registered"])
    }

    /// Empty, over-long and control-character candidate names are refused with the candidate-name field.
    @Test func refusesInvalidNames() throws {
        let scenario = try Self.emptyPlace()
        let t = Fixture.duringRegistration
        expectRejected(
            .registerCandidate(place: 1, name: "  ", pledge: ""), in: scenario, at: t,
            as: .invalidText(field: "candidate name", reason: "must not be empty"), mentioning: ["candidate name"])
        expectRejected(
            .registerCandidate(place: 1, name: String(repeating: "z", count: 201), pledge: ""), in: scenario, at: t,
            as: .invalidText(field: "candidate name", reason: "must be at most 200 code points"),
            mentioning: ["candidate name", "200"])
        expectRejected(
            .registerCandidate(place: 1, name: "Eve\u{202E}", pledge: ""), in: scenario, at: t,
            as: .invalidText(field: "candidate name", reason: "must not contain control or text-direction characters"),
            mentioning: ["candidate name"])
    }

    /// A pledge may be empty or multi-line but not over 2000 characters.
    @Test func checksPledge() throws {
        var scenario = try Self.emptyPlace()
        let t = Fixture.duringRegistration
        try scenario.run(.registerCandidate(place: 1, name: "Alice", pledge: ""), at: t)
        try scenario.run(.registerCandidate(place: 1, name: "Bob", pledge: "One\nTwo"), at: t)
        expectRejected(
            .registerCandidate(place: 1, name: "Carol", pledge: String(repeating: "p", count: 2001)), in: scenario,
            at: t, as: .invalidText(field: "pledge", reason: "must be at most 2000 code points"), mentioning: ["pledge"]
        )
    }

    // MARK: Case folding

    /// Names that differ only in case under Unicode case folding collide too: final sigma (ς) with σ,
    /// and ß with "ss".
    @Test(arguments: [("ΝΙΚΟΣ", "Νικος"), ("STRASSE", "Straße")])
    func refusesNamesEqualUnderCaseFolding(first: String, second: String) throws {
        var scenario = try Self.emptyPlace()
        try scenario.run(.registerCandidate(place: 1, name: first, pledge: ""), at: Fixture.duringRegistration)
        expectRejected(
            .registerCandidate(place: 1, name: second, pledge: ""), in: scenario, at: Fixture.duringRegistration,
            as: .duplicateCandidateName(second))
    }

    // MARK: Limit and ids

    /// A place with a limit takes exactly that many candidates; the next is refused.
    @Test(arguments: [1, 3] as [UInt32])
    func enforcesCandidateLimit(limit: UInt32) throws {
        var scenario = try Fixture.scenario(candidates: [], maxCandidates: limit)
        for index in 1...limit {
            try scenario.run(
                .registerCandidate(place: 1, name: "Candidate \(index)", pledge: ""), at: Fixture.duringRegistration)
        }
        expectRejected(
            .registerCandidate(place: 1, name: "One too many", pledge: ""), in: scenario,
            at: Fixture.duringRegistration, as: .candidateLimitReached(limit), mentioning: ["maximum of \(limit)"])
    }

    /// Candidate ids run from 1 within each place, independently of other places.
    @Test func idsAreSequentialPerPlace() throws {
        var scenario = try Fixture.scenario(places: 2, candidates: [])
        let t = Fixture.duringRegistration
        var events: [ElectionEvent] = []
        for (place, name) in [(1, "A"), (2, "B"), (1, "C"), (1, "D"), (2, "E")] as [(UInt32, String)] {
            events.append(try scenario.run(.registerCandidate(place: place, name: name, pledge: ""), at: t))
        }
        #expect(
            events == [
                .candidateRegistered(place: 1, candidate: 1, name: "A", pledge: ""),
                .candidateRegistered(place: 2, candidate: 1, name: "B", pledge: ""),
                .candidateRegistered(place: 1, candidate: 2, name: "C", pledge: ""),
                .candidateRegistered(place: 1, candidate: 3, name: "D", pledge: ""),
                .candidateRegistered(place: 2, candidate: 2, name: "E", pledge: ""),
            ])
        #expect(scenario.place(1).candidates.map(\.id) == [1, 2, 3])
        #expect(scenario.place(2).candidates.map(\.id) == [1, 2])
    }

    // MARK: Withdrawal

    /// Withdrawal is accepted during registration, while waiting, and 1 ms before voting opens.
    @Test(arguments: [Fixture.duringRegistration, Fixture.registration.end, Fixture.voting.start - 1])
    func withdrawsBeforeVoting(t: Int64) throws {
        var scenario = try Fixture.scenario()
        let event = try scenario.run(.withdrawCandidate(place: 1, candidate: 2), at: t)
        #expect(event == .candidateWithdrawn(place: 1, candidate: 2))
        #expect(scenario.place(1).candidates.map(\.withdrawn) == [false, true, false])
    }

    /// Withdrawal is refused from the moment voting opens, and after it closes.
    @Test(arguments: [Fixture.voting.start, Fixture.duringVoting, Fixture.voting.end])
    func refusesWithdrawalOnceVotingOpens(t: Int64) throws {
        expectRejected(
            .withdrawCandidate(place: 1, candidate: 2), in: try Fixture.scenario(), at: t,
            as: .withdrawalClosed(place: 1), mentioning: ["place 1", "withdraw", "voting"])
    }

    /// Withdrawing a candidate that was never registered, or from a missing place, is refused.
    @Test func refusesWithdrawingUnknownCandidate() throws {
        let scenario = try Fixture.scenario()
        for candidate in [0, 4, UInt32.max] as [UInt32] {
            expectRejected(
                .withdrawCandidate(place: 1, candidate: candidate), in: scenario, at: Fixture.duringRegistration,
                as: .candidateNotFound(place: 1, candidate: candidate),
                mentioning: ["candidate \(candidate)", "place 1", "not exist"])
        }
        expectRejected(
            .withdrawCandidate(place: 2, candidate: 1), in: scenario, at: Fixture.duringRegistration,
            as: .placeNotFound(2), mentioning: ["place 2"])
    }

    /// A candidate can withdraw only once.
    @Test func refusesSecondWithdrawal() throws {
        var scenario = try Fixture.scenario()
        try scenario.run(.withdrawCandidate(place: 1, candidate: 3), at: Fixture.duringRegistration)
        expectRejected(
            .withdrawCandidate(place: 1, candidate: 3), in: scenario, at: Fixture.registration.end,
            as: .alreadyWithdrawn(candidate: 3), mentioning: ["candidate 3", "already withdrawn"])
    }
}

extension String {
    /// The string without leading and trailing spaces and tabs (enough for the names in these tests).
    func trimmingSpaceAndTab() -> String {
        var scalars = Substring.UnicodeScalarView(unicodeScalars)
        while let first = scalars.first, first == " " || first == "\t" { scalars.removeFirst() }
        while let last = scalars.last, last == " " || last == "\t" { scalars.removeLast() }
        return String(scalars)
    }
}
