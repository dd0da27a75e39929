import Ballots
import Election
import Ledger
import LedgerCrypto
import Testing

/// An anonymous place that asks questions (FORMAT.md §11.27): credentials cast answers, the credential rules of
/// §11.19 hold, the answers are checked as a token's are, and the place takes neither token ballots, candidates,
/// weights nor re-voting.
@Suite struct AnonymousQuestionTests {
    /// Place 1: anonymous (under `Ballots.key`), asking `Fixture.agenda`; issuance codes 1-3 authorised.
    static func scenario() throws -> Scenario {
        var scenario = Scenario()
        try scenario.run(
            .createPlace(
                name: "Secret AGM", description: "", registration: Fixture.registration, voting: Fixture.voting,
                maxCandidates: nil, ballotKey: Ballots.der(), ballot: Fixture.agenda),
            at: Fixture.now)
        for voter in 1...3 {
            try scenario.run(
                .authorizeVoter(place: 1, voterTag: Fixture.tag(voter), tokenHash: Fixture.token(voter)),
                at: Fixture.duringRegistration)
        }
        return scenario
    }

    /// Answers every question of `Fixture.agenda` accepts.
    static let answers: [Answer] = [.options([0, 2, 4]), .options([YesNo.yes.rawValue]), .options([2, 0])]

    @Test func aCredentialCastsAnswersOnce() throws {
        var scenario = try Self.scenario()
        let request = try Ballots.Request()
        try scenario.run(
            .issueCredential(place: 1, tokenHash: Fixture.token(1), blindedMessageHash: request.blindedMessageHash),
            at: Fixture.duringVoting)
        let signature = try request.signed()
        let cast = Command.castAnonymousBallot(
            place: 1, answers: Self.answers, credential: request.credential, signature: signature)
        let event = try scenario.run(cast, at: Fixture.duringVoting)
        #expect(
            event
                == .anonymousBallotCast(
                    place: 1, credential: request.credential, signature: signature, answers: Self.answers))
        #expect(try ElectionEvent(event.ledgerEvent) == event)
        #expect(scenario.place(1).voted == 1)
        expectRejected(cast, in: scenario, at: Fixture.duringVoting, as: .credentialAlreadyVoted)
        scenario.expectEveryEventRechecks()
    }

    @Test func whatAnAnonymousQuestionsPlaceRefuses() throws {
        var scenario = try Self.scenario()
        let request = try Ballots.Request()
        try scenario.run(
            .issueCredential(place: 1, tokenHash: Fixture.token(1), blindedMessageHash: request.blindedMessageHash),
            at: Fixture.duringVoting)
        let forged = try Ballots.Request(for: Ballots.otherKey)
        let signature = try request.signed()
        // Answers that break their question, a candidate, a token ballot, a forged signature.
        expectRejected(
            .castAnonymousBallot(
                place: 1, answers: [.options([0, 1, 2, 3]), .options([0]), .blank], credential: request.credential,
                signature: signature), in: scenario, at: Fixture.duringVoting,
            as: .invalidAnswer(question: 1, .tooManyOptions(maximum: 3)),
            mentioning: ["question 1"])
        expectRejected(
            .castAnonymousVote(place: 1, candidate: 1, credential: request.credential, signature: signature),
            in: scenario, at: Fixture.duringVoting, as: .placeAsksQuestions(place: 1))
        expectRejected(
            .castBallot(place: 1, answers: Self.answers, tokenHash: Fixture.token(2)), in: scenario,
            at: Fixture.duringVoting, as: .onlyAnonymousBallots(place: 1))
        expectRejected(
            .castAnonymousBallot(
                place: 1, answers: Self.answers, credential: forged.credential,
                signature: try forged.signed(by: Ballots.otherKey)), in: scenario, at: Fixture.duringVoting,
            as: .invalidBallotSignature(place: 1))
        // No weights, no re-voting.
        expectRejected(
            .authorizeVoter(place: 1, voterTag: Fixture.tag(9), tokenHash: Fixture.token(9), weight: 5), in: scenario,
            at: Fixture.duringRegistration,
            as: .invalidWeight("an anonymous place takes no weights: each voter casts one credential"))
        expectRejected(
            .createPlace(
                name: "Secret strike", description: "", registration: Fixture.registration, voting: Fixture.voting,
                maxCandidates: nil, ballotKey: Ballots.der(Ballots.otherKey), ballot: Fixture.agenda, revoting: true),
            in: scenario, at: Fixture.now, as: .anonymousRevoting)
    }
}
