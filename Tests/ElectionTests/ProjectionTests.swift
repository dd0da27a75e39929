import Election
import Testing

/// The read-side views: tally rows, turnout, place status at each boundary, and places filtered by status.
@Suite struct ProjectionTests {
    /// A tally row as plain values, so whole tallies compare at once.
    struct Row: Equatable, CustomStringConvertible {
        var candidate: UInt32
        var name: String
        var votes: UInt64
        var share: Double
        var withdrawn: Bool

        init(_ candidate: UInt32, _ name: String, _ votes: UInt64, _ share: Double, _ withdrawn: Bool) {
            (self.candidate, self.name, self.votes, self.share, self.withdrawn) = (
                candidate, name, votes, share, withdrawn
            )
        }

        init(_ row: Projections.TallyRow) {
            self.init(row.candidate, row.name, row.votes, row.share, row.withdrawn)
        }

        var description: String { "#\(candidate) \(name): \(votes) (\(share))\(withdrawn ? " withdrawn" : "")" }
    }

    /// Turnout as plain values (its memberwise initialiser is not public).
    struct Counts: Equatable {
        var authorized: UInt64
        var voted: UInt64
        var percentage: Double

        init(_ authorized: UInt64, _ voted: UInt64, _ percentage: Double) {
            (self.authorized, self.voted, self.percentage) = (authorized, voted, percentage)
        }

        init(_ turnout: Projections.Turnout) { self.init(turnout.authorized, turnout.voted, turnout.percentage) }
    }

    /// Place 1 with Alice, Bob and Carol (Carol withdrawn), four voters authorised, `votes` cast in order by
    /// tokens 1, 2, 3...
    static func election(votes: [UInt32]) throws -> Scenario {
        var scenario = try Fixture.scenario()
        try scenario.run(.withdrawCandidate(place: 1, candidate: 3), at: Fixture.registration.end)
        for index in 1...4 {
            try scenario.run(
                .authorizeVoter(place: 1, voterTag: Fixture.tag(index), tokenHash: Fixture.token(index)),
                at: Fixture.now)
        }
        for (index, candidate) in votes.enumerated() {
            try scenario.run(
                .castVote(place: 1, candidate: candidate, tokenHash: Fixture.token(index + 1)), at: Fixture.duringVoting
            )
        }
        return scenario
    }

    // MARK: Tally

    /// Rows list every candidate in id order with name, votes, share of votes cast and the withdrawn flag.
    @Test func tallyRows() throws {
        let scenario = try Self.election(votes: [1, 2, 1])
        #expect(
            Projections.tally(scenario.place(1)).map(Row.init) == [
                Row(1, "Alice", 2, 2.0 / 3.0, false), Row(2, "Bob", 1, 1.0 / 3.0, false), Row(3, "Carol", 0, 0, true),
            ])
    }

    /// Before any vote every share is 0 (not NaN), and with votes the shares sum to 1.
    @Test func tallySharesBeforeAndAfterVotes() throws {
        let empty = Projections.tally(try Self.election(votes: []).place(1))
        #expect(empty.map(\.votes) == [0, 0, 0])
        #expect(empty.map(\.share) == [0, 0, 0])
        let full = Projections.tally(try Self.election(votes: [2, 2, 1, 2]).place(1))
        #expect(full.map(\.share) == [0.25, 0.75, 0])
        #expect(abs(full.map(\.share).reduce(0, +) - 1) < 1e-12)
    }

    /// A place without candidates has an empty tally.
    @Test func tallyOfPlaceWithoutCandidates() throws {
        #expect(Projections.tally(try Fixture.scenario(candidates: []).place(1)).isEmpty)
    }

    // MARK: Turnout

    /// Turnout counts authorised voters and votes and gives the percentage; 0% when nobody is authorised.
    @Test(
        arguments: [
            ([], 4, 0, 0.0), ([1], 4, 1, 25.0), ([1, 2, 1], 4, 3, 75.0), ([1, 2, 1, 2], 4, 4, 100.0),
        ] as [([UInt32], UInt64, UInt64, Double)])
    func turnout(votes: [UInt32], authorised: UInt64, voted: UInt64, percentage: Double) throws {
        let turnout = Projections.turnout(try Self.election(votes: votes).place(1))
        #expect(Counts(turnout) == Counts(authorised, voted, percentage))
    }

    /// With nobody authorised, turnout is 0 of 0 at 0%, not NaN.
    @Test func turnoutWithNobodyAuthorised() throws {
        let turnout = Projections.turnout(try Fixture.scenario().place(1))
        #expect(turnout.authorized == 0)
        #expect(turnout.voted == 0)
        #expect(turnout.percentage == 0)
    }

    /// Turnout and tally are per place: votes in place 2 do not count in place 1.
    @Test func turnoutIsPerPlace() throws {
        var scenario = try Fixture.scenario(places: 2)
        try scenario.run(
            .authorizeVoter(place: 2, voterTag: Fixture.tag(1), tokenHash: Fixture.token(1)), at: Fixture.now)
        try scenario.run(.castVote(place: 2, candidate: 1, tokenHash: Fixture.token(1)), at: Fixture.duringVoting)
        #expect(Counts(Projections.turnout(scenario.place(1))) == Counts(0, 0, 0))
        #expect(Counts(Projections.turnout(scenario.place(2))) == Counts(1, 1, 100))
        #expect(Projections.tally(scenario.place(1)).map(\.votes) == [0, 0, 0])
    }

    // MARK: Status

    /// The status at each boundary of the standard place: windows include their start and exclude their end.
    @Test(arguments: [
        (Int64.min, PlaceStatus.upcoming),
        (Fixture.registration.start - 1, .upcoming),
        (Fixture.registration.start, .registration),
        (Fixture.registration.end - 1, .registration),
        (Fixture.registration.end, .waiting),
        (Fixture.voting.start - 1, .waiting),
        (Fixture.voting.start, .voting),
        (Fixture.voting.end - 1, .voting),
        (Fixture.voting.end, .ended),
        (Int64.max, .ended),
    ])
    func statusAtBoundaries(t: Int64, status: PlaceStatus) throws {
        #expect(try Fixture.scenario().place(1).status(at: t) == status)
    }

    /// When registration ends as voting starts, the place is never waiting.
    @Test func statusWithAdjacentWindows() throws {
        var scenario = Scenario()
        let base = Fixture.now
        try scenario.run(
            Fixture.createPlace(
                registration: TimeWindow(start: base + 10, end: base + 20),
                voting: TimeWindow(start: base + 20, end: base + 30)),
            at: base)
        let statuses = (base + 9...base + 30).map { scenario.place(1).status(at: $0) }
        #expect(!statuses.contains(.waiting))
        #expect(statuses.first == .upcoming && statuses.last == .ended)
        #expect(scenario.place(1).status(at: base + 20) == .voting)
    }

    // MARK: Places by status

    /// `places` returns, in id order, exactly the places with the asked-for status at the time, or all of them.
    @Test func placesFilteredByStatus() throws {
        var scenario = Scenario()
        let base = Fixture.now
        func window(_ start: Int64, _ end: Int64) -> TimeWindow { TimeWindow(start: base + start, end: base + end) }
        let windows: [(TimeWindow, TimeWindow)] = [
            (window(1, 2), window(3, 4)),  // 1: ended at base + 10
            (window(1, 2), window(5, 20)),  // 2: voting
            (window(1, 6), window(15, 30)),  // 3: waiting
            (window(5, 12), window(12, 40)),  // 4: registration
            (window(11, 12), window(13, 14)),  // 5: upcoming
            (window(2, 3), window(10, 11)),  // 6: voting (from its first millisecond)
        ]
        for (index, (registration, voting)) in windows.enumerated() {
            try scenario.run(Fixture.createPlace("P\(index + 1)", registration: registration, voting: voting), at: base)
        }
        let t = base + 10
        func ids(_ status: PlaceStatus?) -> [UInt32] {
            Projections.places(scenario.state, status: status, at: t).map(\.place.id)
        }
        #expect(ids(.ended) == [1])
        #expect(ids(.voting) == [2, 6])
        #expect(ids(.waiting) == [3])
        #expect(ids(.registration) == [4])
        #expect(ids(.upcoming) == [5])
        #expect(ids(nil) == [1, 2, 3, 4, 5, 6])
        #expect(Projections.places(scenario.state, status: .upcoming, at: base).map(\.place.id) == [1, 2, 3, 4, 5, 6])
        #expect(Projections.places(ElectionState(), status: nil, at: t).isEmpty)
    }
}
