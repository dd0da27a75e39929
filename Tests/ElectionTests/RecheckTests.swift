import Election
import Ledger
import LedgerCrypto
import Testing

/// `Contract.recheck`, which `verify` uses to prove each recorded event obeyed the rules when it was written:
/// it accepts what the contract produced, at the time and leaf index it produced it, and refuses altered events.
/// Only certifications depend on the leaf index; other events are rechecked at index 0 where no log gives one.
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

    /// `fullElection()` with every place certified once its voting closed, each with the tree size the ledger
    /// would pass. Place 1 then holds Alice 3, Bob 0 and the withdrawn Carol 0, with 3 voters authorised who all
    /// voted; place 2 holds Alice 0, Bob 3, Carol 0.
    static func certifiedElection() throws -> Scenario {
        var scenario = try fullElection()
        try scenario.certify(1, at: Fixture.now + 5_001)
        try scenario.certify(2, at: Fixture.now + 5_001)
        try scenario.certify(3, at: Fixture.now + 7_000)
        return scenario
    }

    /// The recorded certification of place `id` in `scenario`, and the results it holds.
    static func certification(of id: UInt32, in scenario: Scenario) throws -> (Scenario.Recorded, CertifiedResults) {
        let found = scenario.log.lazy.compactMap { recorded -> (Scenario.Recorded, CertifiedResults)? in
            guard case .resultsCertified(let results) = recorded.event, results.place == id else { return nil }
            return (recorded, results)
        }.first
        return try #require(found, "place \(id) was never certified")
    }

    /// The violation recheck reports for `results` recorded against `recorded`'s state, time and (unless told)
    /// leaf index.
    static func recheckCertification(
        _ results: CertifiedResults, as recorded: Scenario.Recorded, index: UInt64? = nil
    ) -> Violation? {
        violation { () throws(Violation) in
            try Contract.recheck(
                .resultsCertified(results), state: recorded.before, at: recorded.time, index: index ?? recorded.index)
        }
    }

    // MARK: Accepted

    /// Every event of a full, certified election passes recheck against the state before it, at its time and
    /// leaf index.
    @Test func acceptsEveryProducedEvent() throws {
        let scenario = try Self.certifiedElection()
        #expect(scenario.log.count == 2 + 6 + 1 + 1 + 6 + 6 + 1 + 3)
        scenario.expectEveryEventRechecks()
    }

    /// Replaying the log from an empty state, rechecking each event before applying it, rebuilds the state.
    @Test func verifyingReplayRebuildsState() throws {
        let scenario = try Self.certifiedElection()
        var state = ElectionState()
        for recorded in scenario.log {
            try Contract.recheck(recorded.event, state: state, at: recorded.time, index: recorded.index)
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
            try Contract.recheck(recorded.event, state: recorded.before, at: t, index: recorded.index)
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
            let refused = violation { () throws(Violation) in try Contract.recheck(event, state: final, at: t, index: 0)
            }
            #expect(refused == expected, "\(event)")
        }
    }

    /// A voter secret commitment passes only as the ledger's first election event (leaf 1, right after the
    /// genesis event), so a ledger holds at most one: anywhere else, even first in an empty state, it is refused.
    @Test func secretCommitmentOnlyFirst() throws {
        let commitment = ElectionEvent.voterSecretCommitment(Fixture.tag(7))
        try Contract.recheck(commitment, state: ElectionState(), at: Fixture.now, index: 1)
        let final = try Self.fullElection().state
        for (state, index) in [(ElectionState(), 0), (ElectionState(), 2), (final, 2), (final, 1_000)]
            as [(ElectionState, UInt64)]
        {
            let refused = violation { () throws(Violation) in
                try Contract.recheck(commitment, state: state, at: Fixture.now, index: index)
            }
            #expect(refused == .misplacedSecretCommitment, "index \(index)")
        }
    }

    /// A voter secret commitment passes only alone in its block (block 1), at the ledger's creation time
    /// (FORMAT.md §11.16): beside another event, or in a block written later, it is refused.
    @Test func secretCommitmentAloneAtCreation() throws {
        let commitment = ElectionEvent.voterSecretCommitment(Fixture.tag(7))
        let created = Fixture.now
        try Contract.recheck(commitment, state: ElectionState(), at: created, index: 1, createdAt: created)
        let crowded = violation { () throws(Violation) in
            try Contract.recheck(
                commitment, state: ElectionState(), at: created, index: 1, blockEvents: 2, createdAt: created)
        }
        #expect(crowded == .misplacedSecretCommitment)
        let late = violation { () throws(Violation) in
            try Contract.recheck(commitment, state: ElectionState(), at: created + 1, index: 1, createdAt: created)
        }
        #expect(late == .secretCommitmentNotAtCreation)
    }

    /// The commitment is an HMAC under the secret of a fixed domain string and the ledger id: another
    /// secret or another ledger gives another commitment, and it is never a voter tag of the secret.
    @Test func secretCommitmentBindsSecretAndLedger() throws {
        let secret = [UInt8](repeating: 7, count: 32)
        let ledger = try #require(LedgerID(bytes: [UInt8](repeating: 1, count: 16)))
        let other = try #require(LedgerID(bytes: [UInt8](repeating: 2, count: 16)))
        let commitment = VoterSecret.commitment(secret, ledgerID: ledger)
        #expect(
            commitment
                == HMACSHA256.authenticationCode(
                    for: Array("voteledger voter-secret commitment v1".utf8) + ledger.bytes, key: secret))
        #expect(commitment != VoterSecret.commitment(secret, ledgerID: other))
        #expect(commitment != VoterSecret.commitment([UInt8](repeating: 8, count: 32), ledgerID: ledger))
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
            let refused = violation { () throws(Violation) in try Contract.recheck(event, state: state, at: t, index: 0)
            }
            #expect(refused == expected, "\(event)")
        }
    }

    // MARK: Certified results

    /// One way of altering a recorded certification, named for test output.
    struct Alteration: Sendable, CustomTestStringConvertible {
        let name: String
        let alter: @Sendable (inout CertifiedResults) -> Void
        var testDescription: String { name }
    }

    /// Alterations of place 1's certification (votes [3, 0, 0], 3 authorised, 3 voted): each makes it differ
    /// from what the contract computes.
    static let alterations: [Alteration] = [
        Alteration(name: "one more vote") { $0.votes[0].votes += 1 },
        Alteration(name: "one vote fewer") { $0.votes[0].votes -= 1 },
        Alteration(name: "a vote moved, same total") {
            $0.votes[0].votes -= 1
            $0.votes[1].votes += 1
        },
        Alteration(name: "a vote for the withdrawn candidate") { $0.votes[2].votes = 1 },
        Alteration(name: "one more authorised") { $0.authorized += 1 },
        Alteration(name: "one fewer authorised") { $0.authorized -= 1 },
        Alteration(name: "one more voted") { $0.voted += 1 },
        Alteration(name: "one fewer voted") { $0.voted -= 1 },
        Alteration(name: "withdrawn candidate left out") { $0.votes.removeLast() },
        Alteration(name: "first candidate left out") { $0.votes.removeFirst() },
        Alteration(name: "an extra candidate") { $0.votes.append((candidate: 4, votes: 0)) },
        Alteration(name: "a candidate listed twice") { $0.votes.append($0.votes[0]) },
        Alteration(name: "candidates in reverse order") { $0.votes.reverse() },
        Alteration(name: "candidate ids shifted") {
            $0.votes = $0.votes.map { (candidate: $0.candidate + 1, votes: $0.votes) }
        },
        Alteration(name: "no candidates") { $0.votes = [] },
        Alteration(name: "tree size one more") { $0.treeSize += 1 },
        Alteration(name: "tree size one less") { $0.treeSize -= 1 },
        Alteration(name: "tree size zero") { $0.treeSize = 0 },
    ]

    /// Each certification of a certified election is accepted at its leaf index, which equals its tree size.
    @Test(arguments: [1, 2, 3] as [UInt32])
    func acceptsHonestCertification(place: UInt32) throws {
        let scenario = try Self.certifiedElection()
        let (recorded, results) = try Self.certification(of: place, in: scenario)
        #expect(results.treeSize == recorded.index)
        #expect(Self.recheckCertification(results, as: recorded) == nil)
        #expect(results == Contract.results(of: try #require(recorded.before.place(place)), treeSize: recorded.index))
    }

    /// A certification whose votes, counts, candidate list or tree size differ from the state is refused as
    /// differing, with a sensible description.
    @Test(arguments: alterations)
    func refusesAlteredResults(alteration: Alteration) throws {
        let scenario = try Self.certifiedElection()
        let (recorded, honest) = try Self.certification(of: 1, in: scenario)
        #expect(honest.votes.map(\.votes) == [3, 0, 0] && honest.authorized == 3 && honest.voted == 3)
        var altered = honest
        alteration.alter(&altered)
        #expect(altered != honest)
        let refused = Self.recheckCertification(altered, as: recorded)
        #expect(refused == .resultsDiffer(place: 1))
        if let refused { expectSensible(refused, mentioning: ["certified results", "place 1", "differ"]) }
    }

    /// An honest certification recorded at another leaf index than its tree size is refused as differing.
    @Test(arguments: [1, -1, -20] as [Int64])
    func refusesCertificationAtOtherIndex(offset: Int64) throws {
        let scenario = try Self.certifiedElection()
        let (recorded, results) = try Self.certification(of: 1, in: scenario)
        let index = UInt64(Int64(recorded.index) + offset)
        #expect(Self.recheckCertification(results, as: recorded, index: index) == .resultsDiffer(place: 1))
        #expect(Self.recheckCertification(results, as: recorded, index: .max) == .resultsDiffer(place: 1))
    }

    /// One place's results recorded under another place's id differ from that place's results.
    @Test func refusesResultsOfAnotherPlace() throws {
        let scenario = try Self.certifiedElection()
        let (recorded, results) = try Self.certification(of: 1, in: scenario)
        var moved = results
        moved.place = 2
        #expect(Self.recheckCertification(moved, as: recorded) == .resultsDiffer(place: 2))
    }

    /// A certification recorded before voting closed, a second one for the same place, and one for a place that
    /// does not exist are refused with those rules.
    @Test func refusesCertificationBreakingRules() throws {
        let scenario = try Self.certifiedElection()
        let (recorded, results) = try Self.certification(of: 1, in: scenario)
        let early = violation { () throws(Violation) in
            try Contract.recheck(
                .resultsCertified(results), state: recorded.before, at: Fixture.voting.end - 1, index: recorded.index)
        }
        #expect(early == .resultsBeforeClose(place: 1))
        let again = violation { () throws(Violation) in
            try Contract.recheck(
                .resultsCertified(results), state: scenario.state, at: recorded.time, index: recorded.index)
        }
        #expect(again == .resultsAlreadyCertified(place: 1))
        var unknown = results
        unknown.place = 9
        #expect(Self.recheckCertification(unknown, as: recorded) == .placeNotFound(9))
    }

    /// A verifying replay stops at a certification altered anywhere in the log, naming its place.
    @Test func replayRefusesAlteredCertification() throws {
        let scenario = try Self.certifiedElection()
        var state = ElectionState()
        var refused: [Violation] = []
        for recorded in scenario.log {
            var event = recorded.event
            if case .resultsCertified(var results) = event, results.place == 2 {
                results.votes[1].votes += 1
                results.voted += 1
                event = .resultsCertified(results)
            }
            if let violation = violation(of: { () throws(Violation) in
                try Contract.recheck(event, state: state, at: recorded.time, index: recorded.index)
            }) {
                refused.append(violation)
            }
            state.apply(recorded.event)
        }
        #expect(refused == [.resultsDiffer(place: 2)])
    }
}
