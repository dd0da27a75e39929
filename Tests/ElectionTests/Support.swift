import Ballots
import Election
import LedgerCrypto
import Testing

// MARK: - Fixed times and values

/// Times, windows, secrets and digests shared by the election tests. All times are ms since the epoch.
enum Fixture {
    /// 2026-01-01T00:00:00Z: the time at which the standard place is created.
    static let now: Int64 = 1_767_225_600_000
    /// The standard registration window, [now + 1 s, now + 2 s).
    static let registration = TimeWindow(start: now + 1_000, end: now + 2_000)
    /// The standard voting window, [now + 3 s, now + 4 s); between the two the place is waiting.
    static let voting = TimeWindow(start: now + 3_000, end: now + 4_000)
    /// A time inside the standard registration window.
    static let duringRegistration = registration.start + 500
    /// A time inside the standard voting window.
    static let duringVoting = voting.start + 500
    /// The ledger's voter secret in these tests.
    static let secret = Array("election test voter secret".utf8)

    /// A distinct token hash per `index`, as `SHA-256(token)` would give.
    static func token(_ index: Int) -> Digest { SHA256.hash(Array("voting token \(index)".utf8)) }

    /// A distinct voter tag per `index`, as `VoterIdentity.tag` would give.
    static func tag(_ index: Int) -> Digest {
        HMACSHA256.authenticationCode(for: Array("member-\(index)".utf8), key: secret)
    }

    /// An association's agenda: three of five board seats, a two-thirds bylaws motion with a quarter quorum, and a
    /// ranked chair election.
    static let agenda = Ballot(questions: [
        Question(
            title: "Board", description: "Elect three", options: ["Ana", "Ben", "Chloé", "Dev", "Eun"],
            method: .choose(min: 1, max: 3, seats: 3), blankAllowed: true),
        Question(
            title: "Adopt the new bylaws?", options: [],
            method: .yesNo(threshold: .ofYesAndNo(Fraction(2, 3)), quorum: Fraction(1, 4)), blankAllowed: false),
        Question(
            title: "Chair", options: ["Ana", "Ben", "Chloé"], method: .rank(seats: 1, rule: .scottishSTV),
            blankAllowed: true),
    ])

    /// A `createPlace` command with the standard windows unless told otherwise.
    static func createPlace(
        _ name: String = "Mayor of Testville", description: String = "Who should run the town?",
        registration: TimeWindow = Fixture.registration, voting: TimeWindow = Fixture.voting,
        maxCandidates: UInt32? = nil
    ) -> Command {
        .createPlace(
            name: name, description: description, registration: registration, voting: voting,
            maxCandidates: maxCandidates)
    }

    /// `places` standard places created at `now`, each with `candidates` registered during registration.
    static func scenario(
        places: Int = 1, candidates: [String] = ["Alice", "Bob", "Carol"], maxCandidates: UInt32? = nil
    ) throws -> Scenario {
        var scenario = Scenario()
        for index in 1...places {
            try scenario.run(createPlace("Place \(index)", maxCandidates: maxCandidates), at: now)
        }
        for place in 1...UInt32(places) {
            for name in candidates {
                try scenario.run(
                    .registerCandidate(place: place, name: name, pledge: "\(name)'s pledge"), at: duringRegistration)
            }
        }
        return scenario
    }
}

// MARK: - A running election

/// An election driven the way the ledger drives it: decide a command at a time, fold the events in, and
/// remember each event with its time, its leaf index and the state it was decided against. There is no
/// ledger here, so an event's leaf index is the number of events recorded before it.
struct Scenario {
    /// One accepted event, when it was accepted, its leaf index and the state just before it.
    struct Recorded {
        var event: ElectionEvent
        var time: Int64
        var index: UInt64
        var before: ElectionState
    }

    private(set) var state = ElectionState()
    private(set) var log: [Recorded] = []

    /// Decides `command` at `t`, applies its event and returns it; the contract must produce exactly one.
    @discardableResult
    mutating func run(_ command: Command, at t: Int64) throws(Violation) -> ElectionEvent {
        let event = try Contract.decide(command, state: state, at: t)
        log.append(Recorded(event: event, time: t, index: nextIndex, before: state))
        state.apply(event)
        return event
    }

    /// The leaf index the next event will have: the number of events recorded so far.
    var nextIndex: UInt64 { UInt64(log.count) }

    /// Expects every recorded event to be what the contract decides again at its time from the state before it
    /// (how `vote verify` replays a ledger).
    func expectEveryEventRechecks(sourceLocation: SourceLocation = #_sourceLocation) {
        for recorded in log {
            let refused = violation { () throws(Violation) in
                try Contract.recheck(recorded.event, state: recorded.before, at: recorded.time, index: recorded.index)
            }
            #expect(refused == nil, "\(recorded.event) at \(recorded.time)", sourceLocation: sourceLocation)
        }
    }

    /// Certifies the results of place `id` at `t`, with the tree size the ledger would pass (the next leaf index).
    @discardableResult
    mutating func certify(_ id: UInt32, at t: Int64) throws(Violation) -> ElectionEvent {
        try run(.certifyResults(place: id, treeSize: nextIndex), at: t)
    }

    /// The violation `command` is refused with at `t`, or `nil` if it is accepted (nothing is applied).
    func rejection(_ command: Command, at t: Int64) -> Violation? {
        ElectionTests.rejection(command, in: state, at: t)
    }

    /// The place with `id`; fails the test (and crashes) if it does not exist.
    func place(_ id: UInt32) -> PlaceState {
        guard let place = state.place(id) else { preconditionFailure("place \(id) does not exist") }
        return place
    }

    /// Votes per candidate id of place `id`, in candidate order.
    func votes(_ id: UInt32) -> [UInt64] { place(id).candidates.map(\.votes) }
}

/// The violation `command` is refused with against `state` at `t`, or `nil` if it is accepted.
func rejection(_ command: Command, in state: ElectionState, at t: Int64) -> Violation? {
    do {
        _ = try Contract.decide(command, state: state, at: t)
        return nil
    } catch {
        return error
    }
}

/// The violation `body` throws, or `nil` if it returns.
func violation(of body: () throws(Violation) -> Void) -> Violation? {
    do {
        try body()
        return nil
    } catch {
        return error
    }
}

// MARK: - Expectations on violations

/// Expects `scenario` to refuse `command` at `t` with exactly `expected`, leaving the state untouched, and the
/// violation's description to be a sensible sentence mentioning each of `fragments`.
func expectRejected(
    _ command: Command, in scenario: Scenario, at t: Int64, as expected: Violation, mentioning fragments: [String] = [],
    sourceLocation: SourceLocation = #_sourceLocation
) {
    var attempt = scenario
    let before = attempt.state
    do {
        try attempt.run(command, at: t)
        Issue.record("expected \(expected), but the command was accepted", sourceLocation: sourceLocation)
    } catch {
        #expect(error == expected, sourceLocation: sourceLocation)
        expectSensible(error, mentioning: fragments, sourceLocation: sourceLocation)
    }
    #expect(attempt.state == before, "a refused command changes nothing", sourceLocation: sourceLocation)
}

/// Expects `violation.description` to read as one human sentence: several words on one line, starting with
/// a letter, with no Swift spellings outside quoted input (camelCase case names, `Optional(`), and
/// mentioning each of `fragments`.
func expectSensible(
    _ violation: Violation, mentioning fragments: [String] = [], sourceLocation: SourceLocation = #_sourceLocation
) {
    let text = violation.description
    #expect(text.split(separator: " ").count >= 3, "\(text)", sourceLocation: sourceLocation)
    #expect(text.first?.isLetter == true, "\(text)", sourceLocation: sourceLocation)
    #expect(!text.contains("\n"), "\(text)", sourceLocation: sourceLocation)
    #expect(!text.contains("Optional("), "\(text)", sourceLocation: sourceLocation)
    #expect(!containsCamelCase(text), "\(text)", sourceLocation: sourceLocation)
    for fragment in fragments {
        #expect(text.contains(fragment), "\"\(text)\" should mention \"\(fragment)\"", sourceLocation: sourceLocation)
    }
}

/// Whether `text`, outside double quotes (which hold user input), has a lowercase ASCII letter directly
/// followed by an uppercase one, as in `placeNotFound`.
private func containsCamelCase(_ text: String) -> Bool {
    let scalars = text.split(separator: "\"", omittingEmptySubsequences: false).enumerated()
        .filter { $0.offset.isMultiple(of: 2) }.flatMap { $0.element.unicodeScalars }
    return zip(scalars, scalars.dropFirst()).contains { pair in
        ("a"..."z").contains(pair.0) && ("A"..."Z").contains(pair.1)
    }
}
