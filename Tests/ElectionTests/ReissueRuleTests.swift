import Election
import LedgerCrypto
import Testing

/// The rules for re-issuing a voter's token (FORMAT.md §11.17): a new token for an authorised voter who has
/// not voted; the old one can never vote again, and the voter is still counted once.
@Suite struct ReissueRuleTests {
    /// Place 1 with voters 1 and 2 authorised (tokens 1 and 2) before registration.
    static func authorised() throws -> Scenario {
        var scenario = try Fixture.scenario()
        for voter in 1...2 {
            try scenario.run(
                .authorizeVoter(place: 1, voterTag: Fixture.tag(voter), tokenHash: Fixture.token(voter)),
                at: Fixture.now)
        }
        return scenario
    }

    static func reissue(voter: Int = 1, old: Int = 1, new: Int = 11, place: UInt32 = 1) -> Command {
        .reissueToken(
            place: place, voterTag: Fixture.tag(voter), oldTokenHash: Fixture.token(old),
            newTokenHash: Fixture.token(new))
    }

    /// Allowed whenever authorisation is: before registration, while waiting, and while voting is open.
    @Test(arguments: [Fixture.now, Fixture.registration.end, Fixture.duringVoting, Fixture.voting.end - 1])
    func reissuesBeforeVotingCloses(t: Int64) throws {
        var scenario = try Self.authorised()
        let event = try scenario.run(Self.reissue(), at: t)
        #expect(
            event
                == .voterTokenReissued(
                    place: 1, voterTag: Fixture.tag(1), oldTokenHash: Fixture.token(1), newTokenHash: Fixture.token(11))
        )
        let roll = try #require(scenario.state.roll)
        #expect(roll.hasVoted(tokenHash: Fixture.token(1), place: 1) == nil, "the old token no longer votes")
        #expect(roll.hasVoted(tokenHash: Fixture.token(11), place: 1) == false, "the new one does")
        #expect(scenario.place(1).authorized == 2, "the voter is still counted once")
        #expect((try? ElectionEvent(event.ledgerEvent)) == event, "the codec round-trips it")
        #expect(event.ledgerEvent.payload.count == 100)
    }

    /// The old token is refused as not authorised; the new one votes once; the voter cannot be re-issued once voted.
    @Test func oldTokenStopsNewTokenVotes() throws {
        var scenario = try Self.authorised()
        try scenario.run(Self.reissue(), at: Fixture.now)
        expectRejected(
            .castVote(place: 1, candidate: 1, tokenHash: Fixture.token(1)), in: scenario, at: Fixture.duringVoting,
            as: .tokenNotAuthorized(place: 1))
        try scenario.run(.castVote(place: 1, candidate: 2, tokenHash: Fixture.token(11)), at: Fixture.duringVoting)
        #expect(scenario.votes(1) == [0, 1, 0])
        expectRejected(
            Self.reissue(old: 11, new: 12), in: scenario, at: Fixture.duringVoting, as: .voterAlreadyVoted,
            mentioning: ["already voted"])
    }

    /// A second re-issue replaces the token of the first; naming the original token again is refused.
    @Test func reissuesTwice() throws {
        var scenario = try Self.authorised()
        try scenario.run(Self.reissue(), at: Fixture.now)
        expectRejected(
            Self.reissue(old: 1, new: 12), in: scenario, at: Fixture.now, as: .notCurrentToken,
            mentioning: ["current token"])
        try scenario.run(Self.reissue(old: 11, new: 12), at: Fixture.now)
        #expect(scenario.state.roll?.hasVoted(tokenHash: Fixture.token(11), place: 1) == nil)
        #expect(scenario.state.roll?.hasVoted(tokenHash: Fixture.token(12), place: 1) == false)
    }

    /// Every rule of §11.17 refuses with its reason and changes nothing.
    @Test func refusals() throws {
        var scenario = try Self.authorised()
        expectRejected(Self.reissue(place: 2), in: scenario, at: Fixture.now, as: .placeNotFound(2))
        expectRejected(
            Self.reissue(), in: scenario, at: Fixture.voting.end, as: .reissueClosed(place: 1),
            mentioning: ["place 1", "closed"])
        expectRejected(
            Self.reissue(voter: 3, old: 3), in: scenario, at: Fixture.now, as: .voterNotAuthorized(place: 1),
            mentioning: ["not authorised", "place 1"])
        // Another voter's token is not this voter's current one.
        expectRejected(Self.reissue(voter: 1, old: 2), in: scenario, at: Fixture.now, as: .notCurrentToken)
        // The new token may not be any token issued in the place: current, or replaced.
        expectRejected(Self.reissue(new: 2), in: scenario, at: Fixture.now, as: .tokenAlreadyIssued)
        try scenario.run(Self.reissue(), at: Fixture.now)
        expectRejected(Self.reissue(voter: 2, old: 2, new: 1), in: scenario, at: Fixture.now, as: .tokenAlreadyIssued)
        expectRejected(
            .authorizeVoter(place: 1, voterTag: Fixture.tag(3), tokenHash: Fixture.token(1)), in: scenario,
            at: Fixture.now, as: .tokenAlreadyIssued)
    }

    /// `recheck` accepts a recorded re-issue only as the contract decides it: a forged one naming another voter's
    /// token is refused.
    @Test func recheckRefusesForgedReissue() throws {
        let scenario = try Self.authorised()
        let forged = ElectionEvent.voterTokenReissued(
            place: 1, voterTag: Fixture.tag(1), oldTokenHash: Fixture.token(2), newTokenHash: Fixture.token(11))
        let refused = violation { () throws(Violation) in
            try Contract.recheck(forged, state: scenario.state, at: Fixture.now, index: 99)
        }
        #expect(refused == .notCurrentToken)
    }
}
