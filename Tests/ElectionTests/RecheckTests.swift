import Election
import Testing

/// `Contract.recheck`, which `verify` uses to prove each recorded event obeyed the rules when it was written:
/// it accepts what the contract produced, at the time it produced it, and refuses altered events.
@Suite struct RecheckTests {
    /// A full election over two places: candidates, a withdrawal, voters, and votes, every command accepted.
    static func fullElection() throws -> Scenario {
        var scenario = try Fixture.scenario(places: 2)
        try scenario.run(
            Fixture.createPlace(
                "Late place", registration: TimeWindow(start: Fixture.now + 5_000, end: Fixture.now + 6_000),
                voting: TimeWindow(start: Fixture.now + 6_000, end: Fixture.now + 7_000), maxCandidates: 2),
            at: Fixture.now + 100)
        try scenario.run(.withdrawCandidate(place: 1, candidate: 3), at: Fixture.registration.end)
        for index in 1...6 {
            let place = UInt32(index % 2 + 1)
            try scenario.run(
                .authorizeVoter(place: place, voterTag: Fixture.tag(index), tokenHash: Fixture.token(index)),
                at: Fixture.now + Int64(index))
        }
        for index in 1...6 {
            let place = UInt32(index % 2 + 1)
            try scenario.run(
                .castVote(place: place, candidate: UInt32(index % 2 + 1), tokenHash: Fixture.token(index)),
                at: Fixture.voting.start + Int64(index))
        }
        try scenario.run(.registerCandidate(place: 3, name: "Zoë", pledge: ""), at: Fixture.now + 5_000)
        return scenario
    }

    // MARK: Accepted

    /// Every event of a full election passes recheck against the state before it, at its time.
    @Test func acceptsEveryProducedEvent() throws {
        let scenario = try Self.fullElection()
        #expect(scenario.log.count == 2 + 6 + 1 + 1 + 6 + 6 + 1)
        for recorded in scenario.log {
            let refused = violation { () throws(Violation) in
                try Contract.recheck(recorded.event, state: recorded.before, at: recorded.time, index: 0)
            }
            #expect(refused == nil, "\(recorded.event) at \(recorded.time)")
        }
    }

    /// Replaying the log from an empty state, rechecking each event before applying it, rebuilds the state.
    @Test func verifyingReplayRebuildsState() throws {
        let scenario = try Self.fullElection()
        var state = ElectionState()
        for recorded in scenario.log {
            try Contract.recheck(recorded.event, state: state, at: recorded.time, index: 0)
            state.apply(recorded.event)
        }
        #expect(state == scenario.state)
    }

    // MARK: Refused

    /// A vote for a candidate who withdrew is refused with the withdrawal rule.
    @Test func refusesVoteForWithdrawnCandidate() throws {
        let scenario = try Self.fullElection()
        let forged = ElectionEvent.voteCast(place: 1, candidate: 3, tokenHash: Fixture.token(99))
        var state = scenario.state
        state.apply(.voterAuthorized(place: 1, voterTag: Fixture.tag(99), tokenHash: Fixture.token(99)))
        let refused = violation { () throws(Violation) in
            try Contract.recheck(forged, state: state, at: Fixture.duringVoting, index: 0)
        }
        #expect(refused == .candidateWithdrawn(candidate: 3))
    }

    /// A place whose id skips a number, or repeats one, differs from what the contract decides.
    @Test(arguments: [4, 5, 2, 1, 0] as [UInt32])
    func refusesPlaceWithWrongID(id: UInt32) throws {
        let state = try Fixture.scenario(places: 2).state
        let place = Place(
            id: id, name: "Skipper", description: "", registration: Fixture.registration, voting: Fixture.voting,
            maxCandidates: nil)
        let refused = violation { () throws(Violation) in
            try Contract.recheck(.placeCreated(place), state: state, at: Fixture.now, index: 0)
        }
        #expect(refused == .invalidText(field: "recorded event", reason: "differs from what the contract decides"))
        if let refused { expectSensible(refused, mentioning: ["recorded event", "differs"]) }
        let honest = Place(
            id: 3, name: "Skipper", description: "", registration: Fixture.registration, voting: Fixture.voting,
            maxCandidates: nil)
        try Contract.recheck(.placeCreated(honest), state: state, at: Fixture.now, index: 0)
    }

    /// A recorded vote moved to a time outside the voting window is refused with the window rule.
    @Test(arguments: [
        (Fixture.voting.start - 1, PlaceStatus.waiting), (Fixture.voting.end, .ended), (Fixture.now, .upcoming),
    ])
    func refusesVoteOutsideWindow(t: Int64, status: PlaceStatus) throws {
        let scenario = try Self.fullElection()
        let recorded = try #require(scenario.log.first { if case .voteCast = $0.event { true } else { false } })
        let refused = violation { () throws(Violation) in
            try Contract.recheck(recorded.event, state: recorded.before, at: t, index: 0)
        }
        guard case .voteCast(let place, _, _) = recorded.event else { return }
        #expect(refused == .votingClosed(place: place, status: status))
    }

    /// An event applied twice is refused the second time: a vote, an authorisation, a withdrawal.
    @Test func refusesReplayedEvents() throws {
        let scenario = try Self.fullElection()
        let final = scenario.state
        let cases: [(ElectionEvent, Int64, Violation)] = [
            (.voteCast(place: 2, candidate: 2, tokenHash: Fixture.token(1)), Fixture.duringVoting, .alreadyVoted),
            (
                .voterAuthorized(place: 2, voterTag: Fixture.tag(1), tokenHash: Fixture.token(1)), Fixture.now,
                .voterAlreadyAuthorized
            ),
            (.candidateWithdrawn(place: 1, candidate: 3), Fixture.registration.end, .alreadyWithdrawn(candidate: 3)),
        ]
        for (event, t, expected) in cases {
            let refused = violation { () throws(Violation) in try Contract.recheck(event, state: final, at: t, index: 0) }
            #expect(refused == expected, "\(event)")
        }
    }

    /// A registration whose candidate id skips ahead, or whose name was not trimmed, differs from the decision.
    @Test func refusesAlteredRegistration() throws {
        let state = try Fixture.scenario(candidates: ["Alice"]).state
        let differs = Violation.invalidText(field: "recorded event", reason: "differs from what the contract decides")
        for event in [
            ElectionEvent.candidateRegistered(place: 1, candidate: 3, name: "Bob", pledge: ""),
            .candidateRegistered(place: 1, candidate: 1, name: "Bob", pledge: ""),
            .candidateRegistered(place: 1, candidate: 2, name: " Bob ", pledge: ""),
        ] {
            let refused = violation { () throws(Violation) in
                try Contract.recheck(event, state: state, at: Fixture.duringRegistration, index: 0)
            }
            #expect(refused == differs, "\(event)")
        }
        try Contract.recheck(
            .candidateRegistered(place: 1, candidate: 2, name: "Bob", pledge: ""), state: state,
            at: Fixture.duringRegistration, index: 0)
    }

    /// Events that break other rules are refused with that rule: a late withdrawal, a bad name, an unknown place.
    @Test func refusesEventsBreakingRules() throws {
        let state = try Fixture.scenario().state
        let cases: [(ElectionEvent, Int64, Violation)] = [
            (.candidateWithdrawn(place: 1, candidate: 1), Fixture.voting.start, .withdrawalClosed(place: 1)),
            (
                .candidateRegistered(place: 1, candidate: 4, name: "Dave", pledge: ""), Fixture.registration.end,
                .registrationClosed(place: 1, status: .waiting)
            ),
            (
                .voterAuthorized(place: 2, voterTag: Fixture.tag(1), tokenHash: Fixture.token(1)), Fixture.now,
                .placeNotFound(2)
            ),
            (
                .placeCreated(
                    Place(
                        id: 2, name: "", description: "", registration: Fixture.registration, voting: Fixture.voting,
                        maxCandidates: nil)), Fixture.now,
                .invalidText(field: "place name", reason: "must not be empty")
            ),
        ]
        for (event, t, expected) in cases {
            let refused = violation { () throws(Violation) in try Contract.recheck(event, state: state, at: t, index: 0) }
            #expect(refused == expected, "\(event)")
        }
    }
}
