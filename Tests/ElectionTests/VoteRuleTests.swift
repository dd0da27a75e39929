import Election
import Testing

/// The rules for casting a vote: the voting window, a token authorised in this place, one vote per token,
/// and a registered candidate that has not withdrawn.
@Suite struct VoteRuleTests {
    /// Two standard places with candidates Alice, Bob and Carol each; tokens 1-3 authorised in place 1 and
    /// token 4 in place 2.
    static func authorised() throws -> Scenario {
        var scenario = try Fixture.scenario(places: 2)
        for index in 1...3 {
            try scenario.run(
                .authorizeVoter(place: 1, voterTag: Fixture.tag(index), tokenHash: Fixture.token(index)),
                at: Fixture.now)
        }
        try scenario.run(
            .authorizeVoter(place: 2, voterTag: Fixture.tag(4), tokenHash: Fixture.token(4)), at: Fixture.now)
        return scenario
    }

    // MARK: Voting window

    /// A vote is accepted at the window's first and last millisecond and counted.
    @Test(arguments: [Fixture.voting.start, Fixture.duringVoting, Fixture.voting.end - 1])
    func votesInsideWindow(t: Int64) throws {
        var scenario = try Self.authorised()
        let event = try scenario.run(.castVote(place: 1, candidate: 2, tokenHash: Fixture.token(1)), at: t)
        #expect(event == .voteCast(place: 1, candidate: 2, tokenHash: Fixture.token(1)))
        #expect(scenario.votes(1) == [0, 1, 0])
        #expect(scenario.state.roll?.hasVoted(tokenHash: Fixture.token(1), place: 1) == true)
        #expect(scenario.place(1).voted == 1)
    }

    /// A vote is refused outside [start, end), naming the status of the place at that time.
    @Test(arguments: [
        (Fixture.now, PlaceStatus.upcoming),
        (Fixture.duringRegistration, .registration),
        (Fixture.registration.end, .waiting),
        (Fixture.voting.start - 1, .waiting),
        (Fixture.voting.end, .ended),
        (Fixture.voting.end + 86_400_000, .ended),
    ])
    func refusesOutsideWindow(t: Int64, status: PlaceStatus) throws {
        expectRejected(
            .castVote(place: 1, candidate: 1, tokenHash: Fixture.token(1)), in: try Self.authorised(), at: t,
            as: .votingClosed(place: 1, status: status), mentioning: ["voting", "place 1", "not open", status.rawValue])
    }

    /// Voting in a place that does not exist is refused.
    @Test func refusesUnknownPlace() throws {
        expectRejected(
            .castVote(place: 9, candidate: 1, tokenHash: Fixture.token(1)), in: try Self.authorised(),
            at: Fixture.duringVoting, as: .placeNotFound(9), mentioning: ["place 9"])
    }

    // MARK: Tokens

    /// A token never authorised anywhere is refused.
    @Test func refusesUnknownToken() throws {
        expectRejected(
            .castVote(place: 1, candidate: 1, tokenHash: Fixture.token(99)), in: try Self.authorised(),
            at: Fixture.duringVoting, as: .tokenNotAuthorized(place: 1),
            mentioning: ["token", "not authorised", "place 1"])
    }

    /// A token authorised in place 1 cannot vote in place 2, nor one from place 2 in place 1.
    @Test func refusesTokenFromAnotherPlace() throws {
        let scenario = try Self.authorised()
        expectRejected(
            .castVote(place: 2, candidate: 1, tokenHash: Fixture.token(1)), in: scenario, at: Fixture.duringVoting,
            as: .tokenNotAuthorized(place: 2), mentioning: ["place 2"])
        expectRejected(
            .castVote(place: 1, candidate: 1, tokenHash: Fixture.token(4)), in: scenario, at: Fixture.duringVoting,
            as: .tokenNotAuthorized(place: 1), mentioning: ["place 1"])
    }

    /// A second vote with the same token is refused, whatever candidate it names, and the first vote stands.
    @Test(arguments: [1, 2, 3] as [UInt32])
    func refusesSecondVote(secondChoice: UInt32) throws {
        var scenario = try Self.authorised()
        try scenario.run(.castVote(place: 1, candidate: 2, tokenHash: Fixture.token(1)), at: Fixture.voting.start)
        let tally = Projections.tally(scenario.place(1)).map(\.votes)
        expectRejected(
            .castVote(place: 1, candidate: secondChoice, tokenHash: Fixture.token(1)), in: scenario,
            at: Fixture.voting.end - 1, as: .alreadyVoted, mentioning: ["already voted"])
        #expect(Violation.alreadyVoted.description == "this token has already voted")
        #expect(Projections.tally(scenario.place(1)).map(\.votes) == tally)
        #expect(scenario.votes(1) == [0, 1, 0])
        #expect(Projections.turnout(scenario.place(1)).voted == 1)
    }

    /// `hasVoted` is nil for a token not authorised here, false before it votes and true after.
    @Test func tracksWhetherTokenVoted() throws {
        var scenario = try Self.authorised()
        #expect(scenario.state.roll?.hasVoted(tokenHash: Fixture.token(4), place: 1) == nil)
        #expect(scenario.state.roll?.hasVoted(tokenHash: Fixture.token(2), place: 1) == false)
        try scenario.run(.castVote(place: 1, candidate: 3, tokenHash: Fixture.token(2)), at: Fixture.duringVoting)
        #expect(scenario.state.roll?.hasVoted(tokenHash: Fixture.token(2), place: 1) == true)
    }

    // MARK: Candidates

    /// A vote for a candidate not registered in this place is refused, even if another place has that many.
    @Test func refusesUnknownCandidate() throws {
        var scenario = try Fixture.scenario(places: 2, candidates: [])
        try scenario.run(.registerCandidate(place: 1, name: "Solo", pledge: ""), at: Fixture.duringRegistration)
        for id in 1...3 as ClosedRange<UInt32> {
            try scenario.run(.registerCandidate(place: 2, name: "C\(id)", pledge: ""), at: Fixture.duringRegistration)
        }
        try scenario.run(
            .authorizeVoter(place: 1, voterTag: Fixture.tag(1), tokenHash: Fixture.token(1)), at: Fixture.now)
        for candidate in [0, 2, 3] as [UInt32] {
            expectRejected(
                .castVote(place: 1, candidate: candidate, tokenHash: Fixture.token(1)), in: scenario,
                at: Fixture.duringVoting, as: .candidateNotFound(place: 1, candidate: candidate),
                mentioning: ["candidate \(candidate)", "place 1"])
        }
        try scenario.run(.castVote(place: 1, candidate: 1, tokenHash: Fixture.token(1)), at: Fixture.duringVoting)
    }

    /// A vote for a withdrawn candidate is refused and the token can still vote for another one.
    @Test func refusesWithdrawnCandidate() throws {
        var scenario = try Self.authorised()
        try scenario.run(.withdrawCandidate(place: 1, candidate: 2), at: Fixture.voting.start - 1)
        expectRejected(
            .castVote(place: 1, candidate: 2, tokenHash: Fixture.token(1)), in: scenario, at: Fixture.duringVoting,
            as: .candidateWithdrawn(candidate: 2), mentioning: ["candidate 2", "withdrawn"])
        try scenario.run(.castVote(place: 1, candidate: 3, tokenHash: Fixture.token(1)), at: Fixture.duringVoting)
        #expect(scenario.votes(1) == [0, 0, 1])
    }

    /// Withdrawing in place 1 does not affect the candidate with the same id in place 2.
    @Test func withdrawalIsPerPlace() throws {
        var scenario = try Self.authorised()
        try scenario.run(.withdrawCandidate(place: 1, candidate: 2), at: Fixture.duringRegistration)
        try scenario.run(.castVote(place: 2, candidate: 2, tokenHash: Fixture.token(4)), at: Fixture.duringVoting)
        #expect(scenario.votes(2) == [0, 1, 0])
    }
}
