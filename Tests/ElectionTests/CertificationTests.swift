import Election
import Testing

/// The rules for certifying results: only once the voting window of the place has closed, only once per place,
/// recording every candidate's votes in id order (withdrawn ones included), the authorised and voted counts, and
/// the tree size the command names.
@Suite struct CertificationTests {
    /// Two standard places with candidates Alice, Bob and Carol each, Carol withdrawn in place 1. Place 1 has
    /// tokens 1-5 authorised; tokens 1, 3 and 4 voted for Alice and token 2 for Bob, token 5 did not vote. Place 2
    /// has token 6 authorised, which voted for Bob.
    static func voted() throws -> Scenario {
        var scenario = try Fixture.scenario(places: 2)
        try scenario.run(.withdrawCandidate(place: 1, candidate: 3), at: Fixture.registration.end)
        for index in 1...6 {
            let place: UInt32 = index == 6 ? 2 : 1
            try scenario.run(
                .authorizeVoter(place: place, voterTag: Fixture.tag(index), tokenHash: Fixture.token(index)),
                at: Fixture.now)
        }
        for (index, candidate) in [(1, 1), (2, 2), (3, 1), (4, 1), (6, 2)] as [(Int, UInt32)] {
            try scenario.run(
                .castVote(place: index == 6 ? 2 : 1, candidate: candidate, tokenHash: Fixture.token(index)),
                at: Fixture.duringVoting)
        }
        return scenario
    }

    /// The results `voted()` must certify for place 1, covering `treeSize` events.
    static func placeOneResults(treeSize: UInt64) -> CertifiedResults {
        CertifiedResults(place: 1, treeSize: treeSize, authorized: 5, voted: 4, votes: [(1, 3), (2, 1), (3, 0)])
    }

    // MARK: Voting window

    /// Certification is refused while the place can still change, up to the last millisecond of voting.
    @Test(arguments: [
        Fixture.now, Fixture.duringRegistration, Fixture.registration.end, Fixture.voting.start, Fixture.duringVoting,
        Fixture.voting.end - 1,
    ])
    func refusesBeforeClose(t: Int64) throws {
        let scenario = try Self.voted()
        expectRejected(
            .certifyResults(place: 1, treeSize: scenario.nextIndex), in: scenario, at: t,
            as: .resultsBeforeClose(place: 1), mentioning: ["results", "place 1", "certified", "voting has closed"])
    }

    /// Certification is accepted from the end of voting (excluded from the window) on, however late.
    @Test(arguments: [Fixture.voting.end, Fixture.voting.end + 1, Fixture.voting.end + 365 * 86_400_000])
    func acceptsFromClose(t: Int64) throws {
        var scenario = try Self.voted()
        let treeSize = scenario.nextIndex
        let event = try scenario.certify(1, at: t)
        #expect(event == .resultsCertified(Self.placeOneResults(treeSize: treeSize)))
        #expect(scenario.place(1).certified == Self.placeOneResults(treeSize: treeSize))
    }

    /// Each place has its own window: a place whose voting ends later cannot be certified yet when another can.
    @Test func followsEachPlaceWindow() throws {
        var scenario = try Self.voted()
        try scenario.run(
            Fixture.createPlace(
                "Later", registration: TimeWindow(start: Fixture.now + 5_000, end: Fixture.now + 6_000),
                voting: TimeWindow(start: Fixture.now + 6_000, end: Fixture.now + 7_000)),
            at: Fixture.now)
        try scenario.certify(1, at: Fixture.voting.end)
        expectRejected(
            .certifyResults(place: 3, treeSize: scenario.nextIndex), in: scenario, at: Fixture.now + 6_999,
            as: .resultsBeforeClose(place: 3), mentioning: ["place 3"])
        try scenario.certify(3, at: Fixture.now + 7_000)
        #expect(scenario.place(3).certified?.treeSize == scenario.nextIndex - 1)
    }

    // MARK: Once per place

    /// A second certification of a place is refused, at the same time or later and whatever its tree size; the
    /// first one stays recorded.
    @Test(arguments: [0, 1, 2] as [Int64])
    func refusesSecondCertification(daysLater: Int64) throws {
        var scenario = try Self.voted()
        let treeSize = scenario.nextIndex
        try scenario.certify(1, at: Fixture.voting.end)
        for later in [scenario.nextIndex, treeSize, 0, .max] {
            expectRejected(
                .certifyResults(place: 1, treeSize: later), in: scenario,
                at: Fixture.voting.end + daysLater * 86_400_000, as: .resultsAlreadyCertified(place: 1),
                mentioning: ["results", "place 1", "already certified"])
        }
        #expect(scenario.place(1).certified == Self.placeOneResults(treeSize: treeSize))
    }

    /// Certifying one place leaves the others certifiable, each once.
    @Test func certifiesEachPlaceOnce() throws {
        var scenario = try Self.voted()
        try scenario.certify(2, at: Fixture.voting.end)
        #expect(scenario.place(1).certified == nil)
        try scenario.certify(1, at: Fixture.voting.end)
        #expect(scenario.place(2).certified?.votes.map(\.votes) == [0, 1, 0])
        #expect(scenario.place(1).certified?.votes.map(\.votes) == [3, 1, 0])
        for place in [1, 2] as [UInt32] {
            expectRejected(
                .certifyResults(place: place, treeSize: scenario.nextIndex), in: scenario, at: Fixture.voting.end,
                as: .resultsAlreadyCertified(place: place))
        }
    }

    // MARK: Unknown place

    /// Certifying a place that does not exist is refused, before and after any window would have closed.
    @Test(arguments: [0, 3, .max] as [UInt32])
    func refusesUnknownPlace(place: UInt32) throws {
        let scenario = try Self.voted()
        for t in [Fixture.now, Fixture.voting.end] {
            expectRejected(
                .certifyResults(place: place, treeSize: scenario.nextIndex), in: scenario, at: t,
                as: .placeNotFound(place), mentioning: ["place \(place)", "does not exist"])
        }
        expectRejected(
            .certifyResults(place: 1, treeSize: 0), in: Scenario(), at: Fixture.voting.end, as: .placeNotFound(1))
    }

    // MARK: What is recorded

    /// The certified event lists every candidate in id order, the withdrawn one included with its zero, and the
    /// authorised and voted counts, and it is what the state then holds for the place.
    @Test func recordsEveryCandidateAndTurnout() throws {
        var scenario = try Self.voted()
        let treeSize = scenario.nextIndex
        #expect(treeSize == 2 + 6 + 1 + 6 + 5)
        let event = try scenario.certify(1, at: Fixture.voting.end)
        let results = try #require(scenario.place(1).certified)
        #expect(event == .resultsCertified(results))
        #expect(results.place == 1)
        #expect(results.treeSize == treeSize)
        #expect(results.votes.map(\.candidate) == [1, 2, 3])
        #expect(results.votes.map(\.votes) == [3, 1, 0])
        #expect(scenario.place(1).candidates[2].withdrawn)
        #expect(results.authorized == 5)
        #expect(results.voted == 4)
        #expect(scenario.place(2).certified == nil)
    }

    /// The recorded results agree with the projections (tally and turnout) and with `Contract.results`.
    @Test func agreesWithProjections() throws {
        var scenario = try Self.voted()
        let before = scenario.place(1)
        try scenario.certify(1, at: Fixture.voting.end)
        let certified = try #require(scenario.place(1).certified)
        let tally = Projections.tally(before)
        #expect(certified.votes.map(\.candidate) == tally.map(\.candidate))
        #expect(certified.votes.map(\.votes) == tally.map(\.votes))
        let turnout = Projections.turnout(before)
        #expect(certified.authorized == turnout.authorized && certified.voted == turnout.voted)
        #expect(Contract.results(of: before, treeSize: certified.treeSize) == certified)
    }

    /// The tree size is the one the command names, taken as given (the ledger passes its current size).
    @Test(arguments: [0, 1, 20, 12_345, .max] as [UInt64])
    func recordsCommandTreeSize(treeSize: UInt64) throws {
        var scenario = try Self.voted()
        let event = try scenario.run(.certifyResults(place: 1, treeSize: treeSize), at: Fixture.voting.end)
        #expect(event == .resultsCertified(Self.placeOneResults(treeSize: treeSize)))
    }

    /// A place without candidates or voters certifies an empty list and zero counts.
    @Test func certifiesEmptyPlace() throws {
        var scenario = Scenario()
        try scenario.run(Fixture.createPlace(), at: Fixture.now)
        let event = try scenario.certify(1, at: Fixture.voting.end)
        #expect(event == .resultsCertified(CertifiedResults(place: 1, treeSize: 1, authorized: 0, voted: 0, votes: [])))
    }

    /// Certifying changes nothing but the certification: tallies, turnout and the other place are as before.
    @Test func changesOnlyCertification() throws {
        var scenario = try Self.voted()
        let before = scenario.state
        try scenario.certify(1, at: Fixture.voting.end)
        #expect(scenario.state != before)
        #expect(scenario.place(2) == before.place(2))
        #expect(Projections.tally(scenario.place(1)) == Projections.tally(try #require(before.place(1))))
        #expect(Projections.turnout(scenario.place(1)) == Projections.turnout(try #require(before.place(1))))
        #expect(scenario.place(1).candidates == before.place(1)?.candidates)
    }

    // MARK: After certification

    /// Once certified, nothing can change the place: votes, authorisations, withdrawals and registrations are all
    /// refused by their windows (voting has closed), so the certified results stay the tally.
    @Test func nothingChangesAfterCertification() throws {
        var scenario = try Self.voted()
        try scenario.certify(1, at: Fixture.voting.end)
        let t = Fixture.voting.end + 1
        expectRejected(
            .castVote(place: 1, candidate: 2, tokenHash: Fixture.token(5)), in: scenario, at: t,
            as: .votingClosed(place: 1, status: .ended))
        expectRejected(
            .authorizeVoter(place: 1, voterTag: Fixture.tag(7), tokenHash: Fixture.token(7)), in: scenario, at: t,
            as: .authorizationClosed(place: 1))
        expectRejected(.withdrawCandidate(place: 1, candidate: 1), in: scenario, at: t, as: .withdrawalClosed(place: 1))
        expectRejected(
            .registerCandidate(place: 1, name: "Dave", pledge: ""), in: scenario, at: t,
            as: .registrationClosed(place: 1, status: .ended))
        let certified = try #require(scenario.place(1).certified)
        #expect(Contract.results(of: scenario.place(1), treeSize: certified.treeSize) == certified)
    }

    /// Other places go on after one is certified: a later place still registers, authorises and votes.
    @Test func otherPlacesContinue() throws {
        var scenario = try Self.voted()
        try scenario.run(
            Fixture.createPlace(
                "Later", registration: TimeWindow(start: Fixture.now + 5_000, end: Fixture.now + 6_000),
                voting: TimeWindow(start: Fixture.now + 6_000, end: Fixture.now + 7_000)),
            at: Fixture.now)
        try scenario.certify(1, at: Fixture.voting.end)
        try scenario.run(.registerCandidate(place: 3, name: "Zoë", pledge: ""), at: Fixture.now + 5_000)
        try scenario.run(
            .authorizeVoter(place: 3, voterTag: Fixture.tag(1), tokenHash: Fixture.token(30)), at: Fixture.now + 5_000)
        try scenario.run(.castVote(place: 3, candidate: 1, tokenHash: Fixture.token(30)), at: Fixture.now + 6_000)
        #expect(scenario.votes(3) == [1])
        #expect(scenario.place(1).certified?.votes.map(\.votes) == [3, 1, 0])
        let event = try scenario.certify(3, at: Fixture.now + 7_000)
        let results = try #require(scenario.place(3).certified)
        #expect(event == .resultsCertified(results))
        #expect(results.votes.map(\.votes) == [1] && results.authorized == 1 && results.voted == 1)
    }
}
