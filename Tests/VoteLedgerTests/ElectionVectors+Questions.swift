import Ballots
import Election
import Ledger

/// The ledger vectors of places that ask questions (FORMAT.md §11.21-§11.23): a ledger a verifier must accept and
/// count, and one per rule of a ballot or of its answers it must refuse, appended after the other cases.
extension ElectionVectors {
    /// Place 2's agenda: three of five board seats (blank allowed), a two-thirds motion with a quarter quorum, a
    /// ranked chair election (instant runoff) and two delegates by Schulze.
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
        Question(
            title: "Delegates", options: ["Ana", "Ben", "Chloé", "Dev"], method: .rank(seats: 2, rule: .schulze),
            blankAllowed: false),
    ])

    /// After the base election's authorisations: place 2 "AGM" asking `agenda` (created at 2 s, voting 30-40 s)
    /// and voters 1-4 authorised in it at 16 s, voter 4 with a weight of 3 (§11.25).
    static func agendaPlace(_ script: inout Script) throws {
        try script.decide(
            2_000,
            [
                .createPlace(
                    name: "AGM", description: "Annual general meeting", registration: window(10_000, 20_000),
                    voting: window(30_000, 40_000), maxCandidates: nil, ballot: agenda)
            ])
        try script.decide(
            16_000,
            (1...4).map { .authorizeVoter(place: 2, voterTag: tag($0), tokenHash: token($0), weight: $0 == 4 ? 3 : 1) })
    }

    /// The four ballots of the "questions-election" vector: one board answer blank, partial rankings.
    static var agendaBallots: [(voter: Int, answers: [Answer])] {
        let (yes, no) = (Answer.options([YesNo.yes.rawValue]), Answer.options([YesNo.no.rawValue]))
        return [
            (1, [.options([0, 1, 2]), yes, .options([0, 1]), .options([0, 1, 2, 3])]),
            (2, [.options([0, 1]), yes, .options([1, 0, 2]), .options([1, 0])]),
            (3, [.blank, no, .options([2, 1]), .options([2])]),
            (4, [.options([0, 2]), .options([YesNo.abstain.rawValue]), .blank, .options([3, 2])]),
        ]
    }

    /// `agendaPlace`, then `agendaBallots` cast at 31 s.
    static func agendaCast(_ script: inout Script) throws {
        try agendaPlace(&script)
        try script.decide(
            31_000, agendaBallots.map { .castBallot(place: 2, answers: $0.answers, tokenHash: token($0.voter)) })
    }

    /// The certification of place 2's counts after `agendaCast`, as §11.26 derives it, at leaf `treeSize`.
    static func agendaResults(treeSize: UInt64) -> BallotResults {
        let weighed = agendaBallots.map { (answers: $0.answers, weight: UInt64($0.voter == 4 ? 3 : 1)) }
        let electorate = Weighed(members: 4, weight: 6)
        return BallotResults(
            place: 2, treeSize: treeSize, electorate: electorate, voted: electorate,
            questions: agenda.count(weighed, electorate: electorate).map(QuestionResult.init))
    }

    /// A weighted authorisation as recorded: voter `voter` in place `place` with `weight` (any, even 1 or 0).
    static func weighted(_ voter: Int, weight: UInt64, place: UInt32 = 2) -> LedgerEvent {
        var payload = ElectionEvent.voterAuthorized(place: place, voterTag: tag(voter), tokenHash: token(voter))
            .ledgerEvent.payload
        payload += (0..<8).reversed().map { UInt8(truncatingIfNeeded: weight >> (8 * $0)) }
        return LedgerEvent(type: ElectionEvent.Tag.weightedVoterAuthorized.rawValue, payload: payload)
    }

    /// After the base election's authorisations: place 2 "Strike" asking one yes/no question with re-voting (created at
    /// 2 s, voting 30-40 s) and voters 1-2 authorised in it at 16 s.
    static func revotingPlace(_ script: inout Script) throws {
        try script.decide(
            2_000,
            [
                .createPlace(
                    name: "Strike", description: "", registration: window(10_000, 20_000),
                    voting: window(30_000, 40_000), maxCandidates: nil,
                    ballot: Ballot(questions: [
                        Question(
                            title: "Strike?", options: [], method: .yesNo(threshold: .moreYesThanNo, quorum: nil),
                            blankAllowed: false)
                    ]), revoting: true)
            ])
        try script.decide(16_000, (1...2).map { .authorizeVoter(place: 2, voterTag: tag($0), tokenHash: token($0)) })
        try script.decide(30_000, [.castBallot(place: 2, answers: [.options([0])], tokenHash: token(1))])
    }

    static func revoting(
        _ name: String, group: String = "questions", _ breaks: String, _ events: @escaping () -> [LedgerEvent]
    )
        -> Case
    {
        rule(name, group, breaks, from: .authorized, setup: { try revotingPlace(&$0) }, at: 31_000) { _ in events() }
    }

    /// A ballot-replaced event as recorded: voter `voter`'s new answers in place `place`.
    static func replacement(_ voter: Int, _ answers: [Answer], place: UInt32 = 2) -> LedgerEvent {
        ElectionEvent.ballotReplaced(place: place, tokenHash: token(voter), answers: answers).ledgerEvent
    }

    /// A ballot-cast event as recorded: voter `voter`'s answers in place `place`.
    static func answers(_ voter: Int, _ answers: [Answer], place: UInt32 = 2) -> LedgerEvent {
        ElectionEvent.ballotCast(place: place, tokenHash: token(voter), answers: answers).ledgerEvent
    }

    /// Place 3 as recorded, asking `ballot` exactly as given (the contract would refuse or trim it).
    static func questionsPlace(_ ballot: Ballot) -> LedgerEvent {
        ElectionEvent.placeCreated(
            Place(
                id: 3, name: "Vote", description: "", registration: window(50_000, 60_000),
                voting: window(70_000, 80_000), maxCandidates: nil, ballot: ballot)
        ).ledgerEvent
    }

    static func questions(
        _ name: String, group: String = "questions", _ breaks: String, at time: Int64 = 31_000,
        _ events: @escaping () -> [LedgerEvent]
    ) -> Case {
        rule(name, group, breaks, from: .authorized, setup: { try agendaPlace(&$0) }, at: time) { _ in events() }
    }

    static var questionCases: [Case] {
        let yes = Answer.options([YesNo.yes.rawValue])
        let no = Answer.options([YesNo.no.rawValue])
        var minAboveMax = agenda
        minAboveMax.questions[0].method = .choose(min: 4, max: 3, seats: 3)
        var twice = agenda
        twice.questions[2].options[2] = "ANA"
        var untrimmed = agenda
        untrimmed.questions[0].options[0] = "Ana "
        return [
            questions(
                "questions-election", group: "valid",
                "nothing: four ballots on place 2's agenda (one board answer blank, partial rankings, voter 4 of weight 3), which a verifier counts"
            ) {
                [
                    answers(1, [.options([0, 1, 2]), yes, .options([0, 1]), .options([0, 1, 2, 3])]),
                    answers(2, [.options([0, 1]), yes, .options([1, 0, 2]), .options([1, 0])]),
                    answers(3, [.blank, no, .options([2, 1]), .options([2])]),
                    answers(4, [.options([0, 2]), .options([YesNo.abstain.rawValue]), .blank, .options([3, 2])]),
                ]
            },
            questions("weight-zero", "voter 5 authorised in place 2 with a weight of 0", at: 17_000) {
                [weighted(5, weight: 0)]
            },
            questions("weight-too-large", "voter 5 authorised in place 2 with a weight of 1,000,001", at: 17_000) {
                [weighted(5, weight: 1_000_001)]
            },
            questions(
                "weight-of-one", "voter 5 authorised in place 2 with a weight of 1 written as a weighted authorisation",
                at: 17_000
            ) { [weighted(5, weight: 1)] },
            questions(
                "weight-in-candidate-place", "voter 5 authorised with a weight of 2 in place 1, which has candidates",
                at: 17_000
            ) { [weighted(5, weight: 2, place: 1)] },
            rule(
                "questions-certified", "valid",
                "nothing: place 2's four ballots, then its counts certified after voting ends (§11.26)",
                from: .authorized, setup: { try agendaCast(&$0) }, at: 41_000
            ) { [ElectionEvent.ballotResultsCertified(agendaResults(treeSize: $0)).ledgerEvent] },
            rule(
                "ballot-results-early", "questions", "place 2's counts certified at 39 s, before voting ends at 40 s",
                from: .authorized, setup: { try agendaCast(&$0) }, at: 39_000
            ) { [ElectionEvent.ballotResultsCertified(agendaResults(treeSize: $0)).ledgerEvent] },
            rule(
                "ballot-results-differ", "questions",
                "place 2's certified board election names Ana, Ben and Dev, where the count elects Ana, Ben and Chloé",
                from: .authorized, setup: { try agendaCast(&$0) }, at: 41_000
            ) {
                var results = agendaResults(treeSize: $0)
                results.questions[0].elected = [0, 1, 3]
                return [ElectionEvent.ballotResultsCertified(results).ledgerEvent]
            },
            rule(
                "ballot-results-weight-differs", "questions",
                "place 2's certified turnout weighs 4, where its four ballots weigh 6 (voter 4 has a weight of 3)",
                from: .authorized, setup: { try agendaCast(&$0) }, at: 41_000
            ) {
                var results = agendaResults(treeSize: $0)
                results.voted.weight = 4
                return [ElectionEvent.ballotResultsCertified(results).ledgerEvent]
            },
            rule(
                "ballot-results-outcome-unknown", "encoding",
                "place 2's certified board result has outcome 3 (0 not passed, 1 passed, 2 no motion)",
                from: .authorized, setup: { try agendaCast(&$0) }, at: 41_000
            ) {
                var event = ElectionEvent.ballotResultsCertified(agendaResults(treeSize: $0)).ledgerEvent
                // place, tree size, four u64 totals and the count: 45 bytes; then question 1's two totals (32),
                // its option count (2) and five options (80): its outcome is byte 159.
                event.payload[159] = 3
                return [event]
            },
            questions("ballot-too-many-choices", "voter 1 ticks four board candidates (at most three)") {
                [answers(1, [.options([0, 1, 2, 3]), yes, .blank, .options([0])])]
            },
            questions("ballot-choices-out-of-order", "voter 1's board choices recorded as 3, 1 (ascending order only)")
            {
                [answers(1, [.options([2, 0]), yes, .blank, .options([0])])]
            },
            questions("ballot-repeated-rank", "voter 1 ranks Ana twice for chair") {
                [answers(1, [.blank, yes, .options([0, 0]), .options([0])])]
            },
            questions("ballot-unknown-option", "voter 1 ranks option 4 for chair, which has three") {
                [answers(1, [.blank, yes, .options([3]), .options([0])])]
            },
            questions("ballot-blank-not-allowed", "voter 1 leaves the bylaws motion blank, which it does not allow") {
                [answers(1, [.blank, .blank, .blank, .options([0])])]
            },
            questions("ballot-yes-and-no", "voter 1 answers the bylaws motion both yes and no") {
                [answers(1, [.blank, .options([0, 1]), .blank, .options([0])])]
            },
            questions("ballot-missing-answer", "voter 1 answers three of the four questions") {
                [answers(1, [.blank, yes, .blank])]
            },
            questions("ballot-twice", "voter 1 casts a second ballot") {
                [
                    answers(1, [.blank, yes, .blank, .options([0])]),
                    answers(1, [.blank, no, .blank, .options([1])]),
                ]
            },
            questions("ballot-before-voting", "voter 1's ballot at 25 s, before voting opens at 30 s", at: 25_000) {
                [answers(1, [.blank, yes, .blank, .options([0])])]
            },
            questions("ballot-unauthorised-token", "a ballot cast with voter 9's token, never authorised") {
                [answers(9, [.blank, yes, .blank, .options([0])])]
            },
            questions("ballot-in-candidates-place", "answers cast in place 1, which has candidates") {
                [answers(1, [.blank], place: 1)]
            },
            questions("vote-in-questions-place", "a vote for candidate 1 cast in place 2, which asks questions") {
                [vote(1, for: 1, place: 2)]
            },
            questions(
                "candidate-in-questions-place", "a candidate registered in place 2, which asks questions", at: 11_000
            ) {
                [candidate(1, "Ana", place: 2)]
            },
            questions("ballot-min-above-max", "a place whose choose question asks at least 4 of at most 3") {
                [questionsPlace(minAboveMax)]
            },
            questions("ballot-option-twice", "a place whose chair question lists Ana and ANA (one name key)") {
                [questionsPlace(twice)]
            },
            questions(
                "ballot-option-untrimmed", "a place whose option is recorded as \"Ana \" (names are stored trimmed)"
            ) {
                [questionsPlace(untrimmed)]
            },
            revoting(
                "revote-election", group: "valid",
                "nothing: voter 1 votes yes at 30 s, then no at 31 s in a re-voting place; voter 2 votes yes; the count is one yes, one no"
            ) {
                [replacement(1, [.options([1])]), answers(2, [.options([0])])]
            },
            revoting("revote-recorded-as-cast", "voter 1's second ballot recorded as a ballot cast, not a replacement")
            {
                [answers(1, [.options([1])])]
            },
            revoting("replacement-without-first", "a replacement recorded for voter 2, who has not voted") {
                [replacement(2, [.options([1])])]
            },
            questions(
                "replacement-without-revoting", "a second ballot of voter 1 in place 2, which does not allow re-voting"
            ) {
                [
                    answers(1, [.blank, yes, .blank, .options([0])]),
                    replacement(1, [.blank, no, .blank, .options([1])]),
                ]
            },
            questions("revoting-without-questions", "a place with candidates and the re-voting flag") {
                [
                    ElectionEvent.placeCreated(
                        Place(
                            id: 3, name: "Mayor", description: "", registration: window(50_000, 60_000),
                            voting: window(70_000, 80_000), maxCandidates: nil, revoting: true)
                    ).ledgerEvent
                ]
            },
            questions("ballot-version-2", group: "encoding", "a place whose ballot says version 2") {
                var event = questionsPlace(agenda)
                // The ballot's version byte follows the 4-byte flags at the end of the fixed fields.
                let offset = event.payload.count - ballotBytes(agenda).count
                event.payload[offset] = 2
                return [event]
            },
            questions("ballot-unknown-method", group: "encoding", "a place whose first question has method 9") {
                var event = questionsPlace(agenda)
                // Version, count, title (4 + 5), description (4 + 11), flags, then the method.
                let offset = event.payload.count - ballotBytes(agenda).count + 1 + 1 + 9 + 15 + 1
                event.payload[offset] = 9
                return [event]
            },
            questions("ballot-cast-truncated", group: "encoding", "a ballot cast whose answers stop inside the second")
            {
                let event = answers(1, [.blank, yes, .blank, .options([0])])
                return [LedgerEvent(type: event.type, payload: Array(event.payload.prefix(4 + 32 + 1 + 2 + 1)))]
            },
        ]
    }

    /// The encoding of `ballot` alone.
    static func ballotBytes(_ ballot: Ballot) -> [UInt8] {
        var writer = ByteWriter()
        ballot.write(to: &writer)
        return writer.bytes
    }
}
