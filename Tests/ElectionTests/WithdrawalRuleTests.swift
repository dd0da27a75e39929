import Election
import Ledger
import Testing

/// Withdrawing a voter (FORMAT.md §11.29) in what the vectors do not build: a weighted voter takes their weight out
/// of the place's, a withdrawn voter is neither re-issued a token nor authorised again, and in an anonymous place
/// a code that bought a credential cannot be withdrawn.
@Suite struct WithdrawalRuleTests {
    @Test func aWeightedVoterTakesTheirWeightOutOfTheElectorate() throws {
        var scenario = try BallotRuleTests.agendaPlace()  // tokens 1-3 of weight 1
        try scenario.run(
            .authorizeVoter(place: 1, voterTag: Fixture.tag(4), tokenHash: Fixture.token(4), weight: 120),
            at: Fixture.now)
        let event = try scenario.run(
            .withdrawVoter(place: 1, voterTag: Fixture.tag(4), tokenHash: Fixture.token(4)), at: Fixture.now)
        #expect(event == .voterWithdrawn(place: 1, voterTag: Fixture.tag(4), tokenHash: Fixture.token(4), weight: 120))
        #expect(try ElectionEvent(event.ledgerEvent) == event)
        let place = scenario.place(1)
        #expect(place.authorized == 3 && place.authorizedWeight == 3 && place.withdrawn == 1)
        #expect(place.weights.isEmpty)
        scenario.expectEveryEventRechecks()

        // Withdrawn: no re-issue, no second authorisation, no second withdrawal.
        expectRejected(
            .reissueToken(
                place: 1, voterTag: Fixture.tag(4), oldTokenHash: Fixture.token(4), newTokenHash: Fixture.token(14)),
            in: scenario, at: Fixture.now, as: .voterNotAuthorized(place: 1))
        expectRejected(
            .authorizeVoter(place: 1, voterTag: Fixture.tag(4), tokenHash: Fixture.token(14)), in: scenario,
            at: Fixture.now, as: .voterAlreadyAuthorized)
        expectRejected(
            .withdrawVoter(place: 1, voterTag: Fixture.tag(4), tokenHash: Fixture.token(4)), in: scenario,
            at: Fixture.now, as: .withdrawalRefused(place: 1, reason: "the voter is already withdrawn"))
    }

    @Test func aCredentialAlreadyIssuedCannotBeTakenBack() throws {
        var scenario = try Ballots.scenario(voters: 2)
        let request = try Ballots.Request()
        try scenario.run(
            .issueCredential(place: 1, tokenHash: Fixture.token(1), blindedMessageHash: request.blindedMessageHash),
            at: Fixture.now)
        expectRejected(
            .withdrawVoter(place: 1, voterTag: Fixture.tag(1), tokenHash: Fixture.token(1)), in: scenario,
            at: Fixture.now,
            as: .withdrawalRefused(
                place: 1,
                reason:
                    "a ballot credential was already issued for the voter's code, and a credential cannot be taken back"
            ))
        // A code not yet used is withdrawn, and then buys no credential.
        try scenario.run(
            .withdrawVoter(place: 1, voterTag: Fixture.tag(2), tokenHash: Fixture.token(2)), at: Fixture.now)
        expectRejected(
            .issueCredential(place: 1, tokenHash: Fixture.token(2), blindedMessageHash: request.blindedMessageHash),
            in: scenario, at: Fixture.now, as: .codeNotAuthorized(place: 1))
        #expect(scenario.place(1).authorized == 1)
        scenario.expectEveryEventRechecks()
    }
}
