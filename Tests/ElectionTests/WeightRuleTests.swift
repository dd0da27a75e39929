import Ballots
import Election
import Ledger
import Testing

/// Weighted voters (FORMAT.md §11.25): a weight of 1 is a plain authorisation, any other a weighted one; weights
/// are from 1 to 1,000,000, only in a place that asks questions, and a place's voters weigh at most 10^13 in all.
@Suite struct WeightRuleTests {
    @Test func aWeightIsRecordedAndAddsToThePlacesWeight() throws {
        var scenario = try BallotRuleTests.agendaPlace()  // tokens 1-3 of weight 1
        let event = try scenario.run(
            .authorizeVoter(place: 1, voterTag: Fixture.tag(4), tokenHash: Fixture.token(4), weight: 120),
            at: Fixture.now)
        #expect(event == .voterAuthorized(place: 1, voterTag: Fixture.tag(4), tokenHash: Fixture.token(4), weight: 120))
        #expect(event.ledgerEvent.type == ElectionEvent.Tag.weightedVoterAuthorized.rawValue)
        #expect(event.ledgerEvent.payload.count == 4 + 32 + 32 + 8)
        #expect(try ElectionEvent(event.ledgerEvent) == event)
        #expect(scenario.place(1).authorized == 4 && scenario.place(1).authorizedWeight == 123)
        // Weight 1 is the plain event, byte for byte.
        let plain = ElectionEvent.voterAuthorized(place: 1, voterTag: Fixture.tag(5), tokenHash: Fixture.token(5))
        #expect(plain.ledgerEvent.type == ElectionEvent.Tag.voterAuthorized.rawValue)
        scenario.expectEveryEventRechecks()
    }

    @Test func weightsOutOfRangeOrWithoutABallotAreRefused() throws {
        let scenario = try BallotRuleTests.agendaPlace()
        for weight: UInt64 in [0, Contract.maxWeight + 1, .max] {
            expectRejected(
                .authorizeVoter(place: 1, voterTag: Fixture.tag(4), tokenHash: Fixture.token(4), weight: weight),
                in: scenario, at: Fixture.now,
                as: .invalidWeight("a weight must be a whole number from 1 to 1000000"))
        }
        var candidates = Scenario()
        try candidates.run(
            .createPlace(
                name: "Mayor", description: "", registration: Fixture.registration, voting: Fixture.voting,
                maxCandidates: nil), at: Fixture.now)
        expectRejected(
            .authorizeVoter(place: 1, voterTag: Fixture.tag(1), tokenHash: Fixture.token(1), weight: 2),
            in: candidates, at: Fixture.now,
            as: .invalidWeight("only a place that asks questions takes weighted voters"))
        // A weight of 1 cannot be written as a weighted authorisation (rule 11.2.13).
        var payload = ElectionEvent.voterAuthorized(place: 1, voterTag: Fixture.tag(1), tokenHash: Fixture.token(1))
            .ledgerEvent.payload
        payload += [0, 0, 0, 0, 0, 0, 0, 1]
        #expect(throws: DecodeError.self) {
            try ElectionEvent(type: ElectionEvent.Tag.weightedVoterAuthorized.rawValue, payload: payload[...])
        }
    }
}
