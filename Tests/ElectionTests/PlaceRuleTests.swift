import Election
import Testing

/// The rules for creating a place: its name, its two windows, voting in the future, the candidate limit and
/// sequential ids.
@Suite struct PlaceRuleTests {
    // MARK: Accepted

    /// A well-formed place is recorded as one `placeCreated` event with id 1, its name trimmed.
    @Test func createsPlaceWithTrimmedName() throws {
        var scenario = Scenario()
        let event = try scenario.run(Fixture.createPlace("  Mayor of Testville \n", maxCandidates: 5), at: Fixture.now)
        let expected = Place(
            id: 1, name: "Mayor of Testville", description: "Who should run the town?",
            registration: Fixture.registration, voting: Fixture.voting, maxCandidates: 5)
        #expect(event == .placeCreated(expected))
        #expect(scenario.state.place(1)?.place == expected)
        #expect(scenario.state.place(1)?.candidates.isEmpty == true)
    }

    /// Names of 1 and exactly 200 code points (counted after trimming, §11.2) are accepted.
    @Test(arguments: [
        "X",
        String(repeating: "a", count: 200),
        "   " + String(repeating: "b", count: 200) + "\t ",
        String(repeating: "e\u{301}", count: 100),  // 100 characters, 200 code points
        String(repeating: "선", count: 200),
    ])
    func acceptsNameLengthsUpTo200(name: String) throws {
        var scenario = Scenario()
        let event = try scenario.run(Fixture.createPlace(name), at: Fixture.now)
        guard case .placeCreated(let place) = event else {
            Issue.record("not a placeCreated: \(event)")
            return
        }
        #expect(place.name.count >= 1 && place.name.count <= 200)
    }

    /// Registration may end exactly when voting starts; the place then goes straight to voting.
    @Test func acceptsRegistrationEndingWhenVotingStarts() throws {
        var scenario = Scenario()
        let registration = TimeWindow(start: Fixture.now + 10, end: Fixture.now + 20)
        let voting = TimeWindow(start: Fixture.now + 20, end: Fixture.now + 30)
        try scenario.run(Fixture.createPlace(registration: registration, voting: voting), at: Fixture.now)
        #expect(scenario.place(1).status(at: Fixture.now + 19) == .registration)
        #expect(scenario.place(1).status(at: Fixture.now + 20) == .voting)
    }

    /// Each window may be as short as 1 ms, and voting may start 1 ms after the command's time.
    @Test func acceptsWindowsAtTheirTightestBoundaries() throws {
        var scenario = Scenario()
        let t = Fixture.now
        try scenario.run(
            Fixture.createPlace(
                registration: TimeWindow(start: t - 5, end: t - 4), voting: TimeWindow(start: t + 1, end: t + 2)),
            at: t)
        #expect(scenario.state.places.count == 1)
    }

    /// No limit and a limit of 1 are both accepted and recorded as given.
    @Test(arguments: [nil, 1, 7, UInt32.max] as [UInt32?])
    func acceptsCandidateLimit(limit: UInt32?) throws {
        var scenario = Scenario()
        try scenario.run(Fixture.createPlace(maxCandidates: limit), at: Fixture.now)
        #expect(scenario.place(1).place.maxCandidates == limit)
    }

    /// Descriptions may be empty, may hold line breaks, and may be 2000 characters long.
    @Test(arguments: ["", "Line one\nLine two", String(repeating: "d", count: 2000)])
    func acceptsDescriptions(description: String) throws {
        var scenario = Scenario()
        try scenario.run(Fixture.createPlace(description: description), at: Fixture.now)
        #expect(scenario.place(1).place.description == description)
    }

    /// Place ids run 1, 2, 3 in creation order, and a refused creation does not use up an id.
    @Test func idsAreSequentialFromOne() throws {
        var scenario = Scenario()
        try scenario.run(Fixture.createPlace("First"), at: Fixture.now)
        #expect(scenario.rejection(Fixture.createPlace(""), at: Fixture.now) != nil)
        try scenario.run(Fixture.createPlace("Second"), at: Fixture.now)
        try scenario.run(Fixture.createPlace("Third"), at: Fixture.now + 1)
        #expect(scenario.state.places.map(\.place.id) == [1, 2, 3])
        #expect(scenario.state.places.map(\.place.name) == ["First", "Second", "Third"])
    }

    // MARK: Refused names

    /// A name of 201 characters after trimming is refused.
    @Test func refusesNameOf201Characters() {
        expectRejected(
            Fixture.createPlace(" " + String(repeating: "a", count: 201) + " "), in: Scenario(), at: Fixture.now,
            as: .invalidText(field: "place name", reason: "must be at most 200 code points"),
            mentioning: ["place name", "200"])
    }

    /// Empty and whitespace-only names are refused.
    @Test(arguments: ["", " ", "   \t\n  ", "\u{3000}"])
    func refusesEmptyName(name: String) {
        expectRejected(
            Fixture.createPlace(name), in: Scenario(), at: Fixture.now,
            as: .invalidText(field: "place name", reason: "must not be empty"), mentioning: ["place name", "empty"])
    }

    /// Control characters and bidi overrides, embeddings, isolates and marks (CVE-2021-42574) are refused.
    @Test(arguments: [
        "Mayor\u{0}", "May\u{7}or", "Mayor\nof Testville", "Mayor\tElection", "Mayor\u{1B}[31m", "Mayor\u{7F}",
        "May\u{85}or", "abc\u{202E}fed", "\u{202A}Mayor", "Mayor\u{202B}x", "Mayor\u{202C}x", "Mayor\u{202D}x",
        "Mayor\u{2066}x", "Mayor\u{2067}x", "Mayor\u{2068}x", "Mayor\u{2069}x", "Mayor\u{200E}x", "Mayor\u{200F}x",
    ])
    func refusesControlAndBidiCharacters(name: String) {
        expectRejected(
            Fixture.createPlace(name), in: Scenario(), at: Fixture.now,
            as: .invalidText(field: "place name", reason: "must not contain control or text-direction characters"),
            mentioning: ["place name", "control"])
    }

    /// A description over 2000 characters, or with a control character other than a line break, is refused.
    @Test func refusesBadDescriptions() {
        expectRejected(
            Fixture.createPlace(description: String(repeating: "d", count: 2001)), in: Scenario(), at: Fixture.now,
            as: .invalidText(field: "description", reason: "must be at most 2000 code points"),
            mentioning: ["description", "2000"])
        expectRejected(
            Fixture.createPlace(description: "vote \u{202E}now"), in: Scenario(), at: Fixture.now,
            as: .invalidText(field: "description", reason: "must not contain control or text-direction characters"),
            mentioning: ["description"])
    }

    /// The Arabic letter mark U+061C is a bidi control like U+200E/U+200F and is refused too.
    @Test func refusesArabicLetterMark() {
        expectRejected(
            Fixture.createPlace("Mayor\u{061C}x"), in: Scenario(), at: Fixture.now,
            as: .invalidText(field: "place name", reason: "must not contain control or text-direction characters"))
    }

    // MARK: Refused windows

    /// Registration that ends when it starts (or before) is refused.
    @Test(arguments: [0, -1, -1_000] as [Int64])
    func refusesEmptyRegistration(length: Int64) {
        let registration = TimeWindow(start: Fixture.registration.start, end: Fixture.registration.start + length)
        expectRejected(
            Fixture.createPlace(registration: registration), in: Scenario(), at: Fixture.now,
            as: .invalidWindows("registration must start before it ends"), mentioning: ["registration", "before"])
    }

    /// Registration that ends even 1 ms after voting starts is refused.
    @Test func refusesRegistrationOverlappingVoting() {
        let registration = TimeWindow(start: Fixture.registration.start, end: Fixture.voting.start + 1)
        expectRejected(
            Fixture.createPlace(registration: registration), in: Scenario(), at: Fixture.now,
            as: .invalidWindows("registration must end no later than voting starts"),
            mentioning: ["registration", "voting"])
    }

    /// Voting that ends when it starts (or before) is refused.
    @Test(arguments: [0, -1] as [Int64])
    func refusesEmptyVoting(length: Int64) {
        let voting = TimeWindow(start: Fixture.voting.start, end: Fixture.voting.start + length)
        expectRejected(
            Fixture.createPlace(voting: voting), in: Scenario(), at: Fixture.now,
            as: .invalidWindows("voting must start before it ends"), mentioning: ["voting", "before"])
    }

    /// Voting that starts exactly at the command's time, or earlier, is refused.
    @Test(arguments: [0, 1, 500] as [Int64])
    func refusesVotingNotInTheFuture(lateBy: Int64) {
        let t = Fixture.voting.start + lateBy
        expectRejected(
            Fixture.createPlace(), in: Scenario(), at: t, as: .votingMustStartInFuture,
            mentioning: ["voting", "future"])
    }

    // MARK: Refused limit

    /// A candidate limit of 0 is refused.
    @Test func refusesZeroCandidateLimit() {
        expectRejected(
            Fixture.createPlace(maxCandidates: 0), in: Scenario(), at: Fixture.now,
            as: .invalidText(field: "maximum number of candidates", reason: "must be at least 1"),
            mentioning: ["candidates", "at least 1"])
    }
}
