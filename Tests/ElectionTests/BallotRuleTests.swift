import Ballots
import Election
import Ledger
import Testing

/// The rules of a place with a ballot of questions (FORMAT.md §11.21, §11.22): the ballot is checked when the
/// place is created, a token casts one set of answers, each valid for its question, and the candidate commands do
/// not apply.
@Suite struct BallotRuleTests {
    /// Place 1 asks `Fixture.agenda`; tokens 1-3 are authorised in it.
    static func agendaPlace() throws -> Scenario {
        var scenario = Scenario()
        try scenario.run(
            .createPlace(
                name: "Annual general meeting", description: "", registration: Fixture.registration,
                voting: Fixture.voting, maxCandidates: nil, ballot: Fixture.agenda), at: Fixture.now)
        for index in 1...3 {
            try scenario.run(
                .authorizeVoter(place: 1, voterTag: Fixture.tag(index), tokenHash: Fixture.token(index)),
                at: Fixture.now)
        }
        return scenario
    }

    @Test func aTokenCastsItsAnswersOnce() throws {
        var scenario = try Self.agendaPlace()
        let answers: [Answer] = [.options([0, 2, 4]), .options([YesNo.yes.rawValue]), .options([2, 0])]
        let event = try scenario.run(
            .castBallot(place: 1, answers: answers, tokenHash: Fixture.token(1)), at: Fixture.duringVoting)
        #expect(event == .ballotCast(place: 1, tokenHash: Fixture.token(1), answers: answers))
        #expect(scenario.place(1).voted == 1)
        #expect(scenario.state.roll?.hasVoted(tokenHash: Fixture.token(1), place: 1) == true)
        expectRejected(
            .castBallot(place: 1, answers: answers, tokenHash: Fixture.token(1)), in: scenario,
            at: Fixture.duringVoting, as: .alreadyVoted)
        expectRejected(
            .castBallot(place: 1, answers: answers, tokenHash: Fixture.token(9)), in: scenario,
            at: Fixture.duringVoting, as: .tokenNotAuthorized(place: 1))
        expectRejected(
            .castBallot(place: 1, answers: answers, tokenHash: Fixture.token(2)), in: scenario,
            at: Fixture.voting.end, as: .votingClosed(place: 1, status: .ended))
        // Every recorded event is what the contract decides again (how `vote verify` replays it).
        scenario.expectEveryEventRechecks()
    }

    @Test func answersThatBreakTheirQuestionAreRefusedAndNameIt() throws {
        let scenario = try Self.agendaPlace()
        func refused(_ answers: [Answer], _ expected: Violation, mentioning: [String]) {
            expectRejected(
                .castBallot(place: 1, answers: answers, tokenHash: Fixture.token(2)), in: scenario,
                at: Fixture.duringVoting, as: expected, mentioning: mentioning)
        }
        let yes = Answer.options([YesNo.yes.rawValue])
        refused(
            [.options([0, 1, 2, 3]), yes, .blank], .invalidAnswer(question: 1, .tooManyOptions(maximum: 3)),
            mentioning: ["question 1", "at most 3"])
        refused(
            [.blank, .blank, .blank], .invalidAnswer(question: 2, .blankNotAllowed),
            mentioning: ["question 2", "blank"])
        refused([.blank, yes, .options([1, 1])], .invalidAnswer(question: 3, .repeatedOption), mentioning: ["twice"])
        refused(
            [.blank, yes, .options([3])], .invalidAnswer(question: 3, .unknownOption), mentioning: ["no such option"])
        refused(
            [.blank, yes], .invalidAnswer(question: 3, .wrongNumberOfAnswers(expected: 3)), mentioning: ["3 questions"])
    }

    @Test func candidatesDoNotApplyToAPlaceThatAsksQuestions() throws {
        let scenario = try Self.agendaPlace()
        expectRejected(
            .registerCandidate(place: 1, name: "Ana", pledge: ""), in: scenario, at: Fixture.duringRegistration,
            as: .placeAsksQuestions(place: 1), mentioning: ["asks questions"])
        expectRejected(
            .castVote(place: 1, candidate: 1, tokenHash: Fixture.token(1)), in: scenario, at: Fixture.duringVoting,
            as: .placeAsksQuestions(place: 1))
        expectRejected(
            .certifyResults(place: 1, treeSize: scenario.nextIndex), in: scenario, at: Fixture.voting.end,
            as: .ballotNotCertifiable(place: 1), mentioning: ["ballot results"])
        var candidates = try Fixture.scenario()
        try candidates.run(
            .authorizeVoter(place: 1, voterTag: Fixture.tag(1), tokenHash: Fixture.token(1)), at: Fixture.now)
        expectRejected(
            .castBallot(place: 1, answers: [.blank], tokenHash: Fixture.token(1)), in: candidates,
            at: Fixture.duringVoting, as: .placeHasNoBallot(place: 1))
    }

    @Test func aBallotIsCheckedWhenThePlaceIsCreated() throws {
        func created(_ ballot: Ballot, key: [UInt8]? = nil, limit: UInt32? = nil) -> Result<Place, Violation> {
            Result { () throws(Violation) -> Place in
                guard
                    case .placeCreated(let place) = try Contract.decide(
                        .createPlace(
                            name: "AGM", description: "", registration: Fixture.registration, voting: Fixture.voting,
                            maxCandidates: limit, ballotKey: key, ballot: ballot), state: ElectionState(),
                        at: Fixture.now)
                else { preconditionFailure("a place command records a place") }
                return place
            }
        }
        // Titles and options are names: trimmed, as a place's name is, and recorded trimmed.
        var padded = Fixture.agenda
        padded.questions[0].options[0] = "  Ana "
        #expect(try created(padded).get().ballot == Fixture.agenda)
        var empty = Fixture.agenda
        empty.questions[2].title = " "
        #expect(created(empty) == .failure(.invalidText(field: "question 3 title", reason: "must not be empty")))
        var control = Fixture.agenda
        control.questions[0].options[1] = "Ben\u{202E}"
        #expect(
            created(control)
                == .failure(
                    .invalidText(
                        field: "question 1 option 2", reason: "must not contain control or text-direction characters")))
        var twice = Fixture.agenda
        twice.questions[2].options[2] = "ANA"
        #expect(created(twice) == .failure(.duplicateOption(question: 3, name: "ANA")))
        #expect(
            Violation.duplicateOption(question: 3, name: "ANA").description
                == "question 3 has two options named \"ANA\"")
        var limits = Fixture.agenda
        limits.questions[0].method = .choose(min: 4, max: 3, seats: 3)
        #expect(created(limits) == .failure(.invalidBallot(.selectionLimits(question: 0))))
        #expect(created(Ballot(questions: [])) == .failure(.invalidBallot(.questionCount)))
        #expect(created(Fixture.agenda, key: [0x30]) == .failure(.invalidBallotKey))
        #expect(created(Fixture.agenda, limit: 5) != created(Fixture.agenda))
    }

    @Test func aReVotingPlaceReplacesTheEarlierBallot() throws {
        var scenario = Scenario()
        try scenario.run(
            .createPlace(
                name: "AGM", description: "", registration: Fixture.registration, voting: Fixture.voting,
                maxCandidates: nil, ballot: Fixture.agenda, revoting: true), at: Fixture.now)
        try scenario.run(
            .authorizeVoter(place: 1, voterTag: Fixture.tag(1), tokenHash: Fixture.token(1)), at: Fixture.now)
        let first: [Answer] = [.blank, .options([YesNo.no.rawValue]), .blank]
        let second: [Answer] = [.blank, .options([YesNo.yes.rawValue]), .blank]
        #expect(
            try scenario.run(
                .castBallot(place: 1, answers: first, tokenHash: Fixture.token(1)), at: Fixture.duringVoting)
                == .ballotCast(place: 1, tokenHash: Fixture.token(1), answers: first))
        #expect(
            try scenario.run(
                .castBallot(place: 1, answers: second, tokenHash: Fixture.token(1)), at: Fixture.duringVoting)
                == .ballotReplaced(place: 1, tokenHash: Fixture.token(1), answers: second))
        // One voter, twice: turnout counts the voter once.
        #expect(scenario.place(1).voted == 1)
        // Still only until voting ends, still only an authorised token, still a valid answer.
        expectRejected(
            .castBallot(place: 1, answers: second, tokenHash: Fixture.token(1)), in: scenario, at: Fixture.voting.end,
            as: .votingClosed(place: 1, status: .ended))
        expectRejected(
            .castBallot(place: 1, answers: [.blank, .blank, .blank], tokenHash: Fixture.token(1)), in: scenario,
            at: Fixture.duringVoting, as: .invalidAnswer(question: 2, .blankNotAllowed))
        scenario.expectEveryEventRechecks()
        // A replacement recorded where the token has not voted is not what the rules decide.
        var fresh = try Self.agendaPlace()
        #expect(
            violation { () throws(Violation) in
                try Contract.recheck(
                    .ballotReplaced(place: 1, tokenHash: Fixture.token(1), answers: second), state: fresh.state,
                    at: Fixture.duringVoting, index: fresh.nextIndex)
            } == .invalidText(field: "recorded event", reason: "differs from what the contract decides"))
        // Without the option a second ballot is refused, and re-voting needs a ballot of questions.
        try fresh.run(.castBallot(place: 1, answers: first, tokenHash: Fixture.token(1)), at: Fixture.duringVoting)
        expectRejected(
            .castBallot(place: 1, answers: second, tokenHash: Fixture.token(1)), in: fresh, at: Fixture.duringVoting,
            as: .alreadyVoted)
        expectRejected(
            .createPlace(
                name: "Mayor", description: "", registration: Fixture.registration, voting: Fixture.voting,
                maxCandidates: nil, revoting: true), in: Scenario(), at: Fixture.now, as: .revotingWithoutBallot,
            mentioning: ["re-voting"])
    }

    @Test func aBallotSurvivesTheSnapshot() throws {
        var scenario = try Self.agendaPlace()
        try scenario.run(
            .castBallot(place: 1, answers: [.blank, .options([1]), .blank], tokenHash: Fixture.token(3)),
            at: Fixture.duringVoting)
        let snapshot = Snapshot(height: 7, headerHash: Fixture.token(7), state: scenario.state)
        let decoded = try Snapshot(decoding: snapshot.encoded)
        #expect(decoded.state.place(1)?.place.ballot == Fixture.agenda)
        #expect(decoded.state.place(1)?.voted == 1)
    }
}
