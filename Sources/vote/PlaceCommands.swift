import ArgumentParser
import Ballots
import Election
import JSONViews
import VoteCommandLine
import VoteLedger

/// `vote place …`: elections and their windows.
struct PlaceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "place", abstract: "Create and list places (elections).",
        subcommands: [Create.self, Amend.self, Cancel.self, List.self, Show.self, Close.self])

    /// What `create` and `show` say of a place whose results are embargoed.
    static let embargoLine =
        "results       hidden from the public until voting ends: no counts on the public routes and pages, and the event feed and published copies show its votes only as withheld events (place, time, leaf hash)"
    /// What `create` and `show` say of an anonymous place.
    static let anonymousLine =
        "ballots       anonymous: voters get issuance codes, and cast blind-signed credentials no one can tie to them"

    /// `vote place close`: certify the results on the ledger once voting has closed.
    struct Close: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "close",
            abstract: "Certify a place's results on the ledger (after its voting window has closed).")

        @OptionGroup var ledger: LedgerOptions
        @Option(help: "Place id.") var place: UInt32
        @OptionGroup var passphrase: PassphraseOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let (recorded, state) = try await ledger.withWriter(passphrase) { writer in
                (try await writer.certifyResults(place: place), try await writer.state())
            }
            guard let certified = ResultsCertifiedJSON(recorded, state: state) else { return }
            try Output.report(recorded: "the results of place \(place) were certified in block \(recorded.height)") {
                if output.json { return try Output.json(certified) }
                switch recorded.event {
                case .resultsCertified(let results):
                    let names = state.place(place)?.candidates.map(\.name) ?? []
                    try Output.line(
                        "results of place \(place) certified in block \(recorded.height) over \(results.treeSize) events:"
                    )
                    for entry in results.votes {
                        try Output.line("  \(entry.candidate). \(names[Int(entry.candidate) - 1]): \(entry.votes)")
                    }
                    try Output.line("turnout \(results.voted) of \(results.authorized)")
                case .ballotResultsCertified(let results):
                    try Output.line(
                        "results of place \(place) certified in block \(recorded.height) over \(results.treeSize) events:"
                    )
                    let questions = state.place(place)?.place.ballot?.questions ?? []
                    for (index, (question, result)) in zip(questions, results.questions).enumerated() {
                        let options = question.optionNames
                        let outcome =
                            result.passed.map { $0 ? "passed" : "not passed" }
                            ?? "elected: " + result.elected.map { options[$0] }.joined(separator: ", ")
                        try Output.line("  \(index + 1). \(question.title): \(outcome)")
                    }
                    try Output.line(
                        "turnout \(results.voted.members) of \(results.electorate.members)"
                            + (results.electorate.weight == results.electorate.members
                                ? "" : "; weight \(results.voted.weight) of \(results.electorate.weight)"))
                default: return
                }
            }
        }
    }

    /// What `create` and `show` say of a place that writes its ballots in batches.
    static func batchesLine(_ batching: BallotBatching) -> String {
        var rule: [String] = []
        if let interval = batching.interval { rule.append("at the end of every \(interval / 1000) s of voting") }
        if let size = batching.size { rule.append("once at least \(size) are held") }
        return "batches       ballots are held and written together, in an order no one can predict: "
            + rule.joined(separator: ", ")
    }

    /// The questions of a place that asks them, numbered as voters answer them.
    static func printQuestions(of place: Place) throws {
        if place.revoting {
            try Output.line("re-voting     a voter may cast again until voting ends; only the last ballot counts")
        }
        for (number, question) in (place.ballot?.questions ?? []).enumerated() {
            try Output.line("question \(number + 1): \(question.title) (\(question.methodText))")
            if !question.description.isEmpty { try Output.line("  \(question.description)") }
            for line in question.optionLines { try Output.line("  \(line)") }
        }
    }

    /// `vote place create`
    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "create", abstract: "Create a place with its registration and voting windows.")

        @OptionGroup var ledger: LedgerOptions
        @Option(help: "Name, 1-200 code points.") var name: String
        @Option(help: "Candidate registration window START/END.") var registration: String
        @Option(help: "Voting window START/END.") var voting: String
        @Option(help: "Description, up to 2000 code points.") var description = ""
        @Option(help: "Most candidates that may register.") var maxCandidates: UInt32?
        @Option(
            help: ArgumentHelp(
                "When the public sees the counts: live, or after-close (hidden until voting ends).",
                discussion: """
                    after-close: until voting ends, the public (the web pages, the /api/v1 and BVC routes, and \
                    `vote publish` copies) sees no count and no vote's candidate: the event \
                    feed and copies show each vote (and, in a token place, each authorisation and re-issue) only \
                    as a withheld event with its place, time and leaf hash, so receipts and proofs still check. \
                    Turnout stays public; a voter's receipt still names the voter's own candidate. Whoever holds \
                    the ledger directory or its database (`vote tally`, `vote export`, `vote log`) sees everything. \
                    Once voting ends, everything is public.
                    """,
                valueName: "live|after-close"))
        var results = ResultsRelease.live.rawValue
        @Option(
            help: ArgumentHelp(
                "How voters vote: token (their own voting token), or anonymous (an issuance code buys a blind-signed credential that no one, the authority included, can tie to the voter).",
                valueName: "token|anonymous"))
        var ballot = "token"
        @Option(
            help: ArgumentHelp(
                "A JSON file of the questions the place asks, instead of candidates.",
                discussion: """
                    {"questions": [...]}, each question with a title, an optional description, its options, \
                    "blank": true if it may be left blank, and a method: "choose" (min, max, seats: "3 of 7" is \
                    max 3, seats 3), "yes-no" (threshold: more-yes-than-no, "2/3 of yes-and-no", "1/2 of ballots" \
                    or majority-of-electorate; quorum: "1/4" of the electorate) or "rank" (seats; rule \
                    scottish-stv, where one seat is instant runoff, or schulze). Voters cast answers with \
                    `vote cast --answers`.
                    """,
                valueName: "file"))
        var questions: String?
        @Flag(
            help: ArgumentHelp(
                "With --questions: a voter may cast again until voting ends; only the last ballot counts.",
                discussion: "The earlier ballots stay on the ledger, each marked replaced by the next."))
        var revoting = false
        @Option(
            help: ArgumentHelp(
                "With --ballot anonymous: hold ballots and write them together at the end of each interval (30s, 10m, 1h, 1d).",
                discussion: """
                    Ballots are held as they arrive and written in one block, in an order no one can predict, at \
                    the end of each interval counted from the start of voting, so the ledger's order and times do \
                    not tie a ballot to the issuance just before it. A voter's answer says when the batch is due; \
                    whatever is held is written just before voting closes.
                    """,
                valueName: "duration"))
        var batchEvery: String?
        @Option(
            help: ArgumentHelp(
                "With --ballot anonymous: hold ballots until at least this many can be written together (2 or more).",
                discussion:
                    "With --batch-every as well, a batch is written at the end of an interval that holds this many."))
        var batchSize: UInt32?
        @OptionGroup var passphrase: PassphraseOptions
        @OptionGroup var output: JSONOption

        func validate() throws {
            if (batchEvery != nil || batchSize != nil) && ballot != "anonymous" {
                throw ValidationError("--batch-every and --batch-size are for --ballot anonymous")
            }
            if let batchEvery { _ = try Create.seconds(batchEvery) }
            if revoting && questions == nil {
                throw ValidationError(
                    "--revoting goes with --questions (a place with candidates counts each token once)")
            }
            if revoting && ballot == "anonymous" {
                throw ValidationError("--revoting is for token places: an anonymous credential casts one ballot")
            }
            if questions != nil {
                guard maxCandidates == nil else {
                    throw ValidationError("--max-candidates is for a place with candidates, not --questions")
                }
            }
            guard ResultsRelease(rawValue: results) != nil else {
                throw ValidationError("--results must be live or after-close")
            }
            guard ballot == "token" || ballot == "anonymous" else {
                throw ValidationError("--ballot must be token or anonymous")
            }
        }

        func run() async throws {
            let now = Clock.now()
            let command = Command.createPlace(
                name: name, description: description,
                registration: try parseWindow(registration, option: "--registration", now: now),
                voting: try parseWindow(voting, option: "--voting", now: now), maxCandidates: maxCandidates,
                resultsAfterClose: results == ResultsRelease.afterClose.rawValue,
                ballot: try questions.map(QuestionsFile.read), revoting: revoting,
                batching: batchEvery == nil && batchSize == nil
                    ? nil
                    : BallotBatching(interval: try batchEvery.map { try Create.seconds($0) * 1000 }, size: batchSize))
            let anonymous = ballot == "anonymous"
            let recorded = try await ledger.withWriter(passphrase) {
                try await $0.createPlace(command, anonymous: anonymous).event
            }
            guard case .placeCreated(let place) = recorded.event else { return }
            try Output.report(recorded: "place \(place.id) was created") {
                if output.json {
                    return try Output.json(PlaceCreatedJSON(place: place, recorded: RecordedJSON(recorded)))
                }
                try Output.line("created place \(place.id): \(place.name)")
                try Output.line(
                    "registration  \(Timestamp.format(place.registration.start)) to \(Timestamp.format(place.registration.end))"
                )
                try Output.line(
                    "voting        \(Timestamp.format(place.voting.start)) to \(Timestamp.format(place.voting.end))")
                if place.resultsAfterClose { try Output.line(PlaceCommand.embargoLine) }
                if place.isAnonymous { try Output.line(PlaceCommand.anonymousLine) }
                if let batching = place.batching { try Output.line(PlaceCommand.batchesLine(batching)) }
                try PlaceCommand.printQuestions(of: place)
            }
        }

        /// A duration as `--batch-every` takes it: a whole number of seconds, or one with a unit (s, m, h, d).
        static func seconds(_ text: String) throws -> Int64 {
            let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
            var digits = Substring(text)
            var unit: Int64 = 1
            if let last = text.last, let scale = units[last] {
                digits = digits.dropLast()
                unit = scale
            }
            guard !digits.isEmpty, digits.allSatisfy(\.isASCII), let number = Int64(digits), number > 0,
                number <= 7 * 86400 / unit
            else {
                throw ValidationError(
                    "--batch-every must be a duration such as 30s, 10m, 1h or 1d (1 second to 7 days), not \"\(text)\"")
            }
            return number * unit
        }
    }

    /// `vote place amend`: a correction recorded as an event (FORMAT.md §11.28); the place's creation stays as it was.
    struct Amend: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "amend",
            abstract: "Correct a place before its voting ends: its name, description or voting window.",
            discussion: """
                Before voting opens the window may move or shrink (it still starts after registration ends); once \
                voting is open it may only be extended (--voting-end later than now planned). An ended place \
                cannot be amended. The amendment is an event of its own: the ledger keeps what was first \
                announced, and results say the place was amended.
                """)

        @OptionGroup var ledger: LedgerOptions
        @Option(help: "Place id.") var place: UInt32
        @Option(help: "The new name, 1-200 code points.") var name: String?
        @Option(help: "The new description, up to 2000 code points.") var description: String?
        @Option(help: "The new voting window START/END (before voting opens).") var voting: String?
        @Option(help: "The new end of voting (extends an open place), as --voting's times are written.")
        var votingEnd: String?
        @OptionGroup var passphrase: PassphraseOptions
        @OptionGroup var output: JSONOption

        func validate() throws {
            guard name != nil || description != nil || voting != nil || votingEnd != nil else {
                throw ValidationError("give what changes: --name, --description, --voting or --voting-end")
            }
            if voting != nil && votingEnd != nil { throw ValidationError("give either --voting or --voting-end") }
        }

        func run() async throws {
            let now = Clock.now()
            let (place, name, description) = (place, name, description)
            let newWindow = try voting.map { try parseWindow($0, option: "--voting", now: now) }
            let newEnd = try votingEnd.map { text in
                guard let end = Timestamp.parse(text, now: now) else {
                    throw VoteError(.usage, "--voting-end must be a time such as 2026-12-01T18:00:00+09:00 or +1d")
                }
                return end
            }
            let recorded = try await ledger.withWriter(passphrase) { writer in
                let window = try await {
                    guard let newEnd else { return newWindow }
                    guard let current = try await writer.state().place(place)?.place.voting else {
                        throw Violation.placeNotFound(place)
                    }
                    return TimeWindow(start: current.start, end: newEnd)
                }()
                return try await writer.submit(
                    .amendPlace(place: place, name: name, description: description, voting: window), receipt: false
                ).event
            }
            guard case .placeAmended(_, let newName, _, let window) = recorded.event else { return }
            try Output.report(recorded: "place \(place) was amended") {
                if output.json {
                    return try Output.json(
                        PlaceAmendedJSON(
                            place: place, name: newName, voting: window, recorded: RecordedJSON(recorded)))
                }
                try Output.line("amended place \(place): \(newName)")
                try Output.line(
                    "voting        \(Timestamp.format(window.start)) to \(Timestamp.format(window.end))")
            }
        }
    }

    /// `vote place cancel`: a cancellation recorded as an event (FORMAT.md §11.30); the place's events stay.
    struct Cancel: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "cancel", abstract: "Cancel a place before its voting opens.",
            discussion: """
                Allowed until the place's voting opens. Afterwards every command on the place is refused \
                (authorisations, votes, candidates, amendments, credentials, certification), its status is \
                cancelled and its tally counts nothing. The cancellation is an event of its own: what was recorded \
                before it stays on the ledger.
                """)

        @OptionGroup var ledger: LedgerOptions
        @Option(help: "Place id.") var place: UInt32
        @Option(help: "Why, up to 500 bytes (trimmed).") var reason: String = ""
        @OptionGroup var passphrase: PassphraseOptions
        @OptionGroup var output: JSONOption

        func run() async throws {
            let (place, reason) = (place, reason)
            let (recorded, name) = try await ledger.withWriter(passphrase) { writer in
                let recorded = try await writer.submit(.cancelPlace(place: place, reason: reason), receipt: false).event
                return (recorded, try await writer.state().place(place)?.place.name ?? "")
            }
            guard case .placeCancelled(_, let recordedReason) = recorded.event else { return }
            try Output.report(recorded: "place \(place) was cancelled") {
                if output.json {
                    return try Output.json(
                        PlaceCancelledJSON(
                            place: place, name: name, reason: recordedReason, recorded: RecordedJSON(recorded)))
                }
                try Output.line("cancelled place \(place): \(name)")
            }
        }
    }

    /// A line saying the place was cancelled (§11.30), and why, if it was: its tally counts nothing.
    static func printCancellation(of state: PlaceState, label: String = "cancelled: ") throws {
        guard let reason = state.cancellation else { return }
        try Output.line("\(label)before its voting opened\(reason.isEmpty ? "" : " (\(reason))"); nothing was counted")
    }

    /// A line saying the place was corrected after its creation (§11.28), if it was: results and listings say so.
    static func printAmendments(of state: PlaceState, label: String = "amended: ") throws {
        guard state.amendments > 0 else { return }
        try Output.line(
            "\(label)\(state.amendments) time\(state.amendments == 1 ? "" : "s") after its creation (vote log shows when and what)"
        )
    }

    /// A line saying voters were withdrawn from the place (§11.29), if any were: the turnout no longer counts them.
    static func printWithdrawals(of state: PlaceState, label: String = "withdrawn: ") throws {
        guard state.withdrawn > 0 else { return }
        try Output.line(
            "\(label)\(state.withdrawn) voter\(state.withdrawn == 1 ? "" : "s") no longer authorised (not counted in the turnout)"
        )
    }

    /// `vote place list`
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "list", abstract: "List places, optionally by status.")

        @OptionGroup var ledger: LedgerOptions
        @Option(help: "upcoming, registration, waiting, voting, ended, cancelled or all.") var status = "all"
        @OptionGroup var output: JSONOption

        func validate() throws {
            guard status == "all" || PlaceStatus(rawValue: status) != nil else {
                throw ValidationError(
                    "--status must be one of upcoming, registration, waiting, voting, ended, cancelled, all")
            }
        }

        func run() throws {
            let view = try ledger.view()
            let now = Clock.now()
            let places = Projections.places(view.state, status: PlaceStatus(rawValue: status), at: now)
            if output.json { return try Output.json(places.map { PlaceJSON($0, at: now) }) }
            guard !places.isEmpty else {
                return try Output.line("no places\(status == "all" ? "" : " with status \(status)")")
            }
            try Output.table(
                ["ID", "NAME", "STATUS", "VOTING", "CANDIDATES", "VOTED"],
                places.map { place in
                    let turnout = Projections.turnout(place)
                    return [
                        String(place.place.id), place.place.name, place.status(at: now).rawValue,
                        Timestamp.format(place.place.voting.start) + " to " + Timestamp.format(place.place.voting.end),
                        String(place.candidates.count), "\(turnout.voted)/\(turnout.authorized)",
                    ]
                })
        }
    }

    /// `vote place show`
    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "show", abstract: "Show one place: windows, candidates, turnout.")

        @OptionGroup var ledger: LedgerOptions
        @Argument(help: "Place id.") var place: UInt32
        @OptionGroup var output: JSONOption

        func run() throws {
            let view = try ledger.view()
            let state = try view.place(place)
            let now = Clock.now()
            if output.json { return try Output.json(PlaceJSON(state, at: now)) }
            let turnout = Projections.turnout(state)
            try Output.line("place \(state.place.id): \(state.place.name) (\(state.status(at: now).rawValue))")
            if !state.place.description.isEmpty { try Output.line(state.place.description) }
            try Output.line(
                "registration  \(Timestamp.format(state.place.registration.start)) to \(Timestamp.format(state.place.registration.end))"
            )
            try Output.line(
                "voting        \(Timestamp.format(state.place.voting.start)) to \(Timestamp.format(state.place.voting.end))"
            )
            if let limit = state.place.maxCandidates { try Output.line("candidates    at most \(limit)") }
            if state.place.resultsAfterClose { try Output.line(PlaceCommand.embargoLine) }
            if state.place.isAnonymous { try Output.line(PlaceCommand.anonymousLine) }
            if let batching = state.place.batching { try Output.line(PlaceCommand.batchesLine(batching)) }
            try PlaceCommand.printAmendments(of: state, label: "amended       ")
            try PlaceCommand.printWithdrawals(of: state, label: "withdrawn     ")
            try PlaceCommand.printCancellation(of: state, label: "cancelled     ")
            try Output.line(
                "turnout       \(turnout.voted) of \(turnout.authorized) authorised voters (\(Output.percent(turnout.voted, of: turnout.authorized)))"
            )
            if let issued = turnout.issued { try Output.line("issued        \(issued) ballot credentials") }
            try PlaceCommand.printQuestions(of: state.place)
            for candidate in state.candidates {
                try Output.line("  \(candidate.id). \(candidate.name)\(candidate.withdrawn ? " (withdrawn)" : "")")
            }
        }
    }
}
