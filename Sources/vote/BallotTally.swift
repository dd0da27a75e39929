import Ballots
import Election
import Ledger
import VoteCommandLine
import VoteLedger

/// `vote tally` of a place that asks questions: each question's totals and what its method decided, recounted
/// from the log.
enum BallotTally {
    static func print(_ state: PlaceState, counts: [QuestionCount], ended: Bool, csv: Bool) throws {
        let questions = state.place.ballot?.questions ?? []
        if csv {
            try Output.line("question,option,name,votes,elected")
            for (number, (question, count)) in zip(questions, counts).enumerated() {
                for (option, name) in names(question).enumerated() {
                    try Output.line(
                        "\(number + 1),\(option + 1),\(Output.csvField(name)),\(count.options[option].weight),\(count.elected.contains(option))"
                    )
                }
                try Output.line("\(number + 1),,blank,\(count.blank.weight),false")
            }
            return
        }
        try Output.line(
            "place \(state.place.id): \(state.place.name) (\(state.status(at: Clock.now()).rawValue)\(ended ? ", final" : ", so far"))"
        )
        for (number, (question, count)) in zip(questions, counts).enumerated() {
            try Output.line("")
            try Output.line("question \(number + 1): \(question.title) (\(question.methodText))")
            let heading = if case .rank = question.method { "FIRST PREFERENCES" } else { "VOTES" }
            let isYesNo = if case .yesNo = question.method { true } else { false }
            var rows = names(question).enumerated().map { option, name in
                [
                    isYesNo ? name : "\(option + 1). \(name)", String(count.options[option].weight),
                    Output.percent(count.options[option].weight, of: count.ballots.weight - count.blank.weight),
                    count.elected.contains(option) ? "elected" : "",
                ]
            }
            if question.blankAllowed { rows.append(["blank", String(count.blank.weight), "", ""]) }
            try Output.table(["OPTION", heading, "SHARE", ""], rows)
            if let passed = count.passed {
                let quorum = count.quorumMet.map { $0 ? "; the quorum was reached" : "; the quorum was not reached" }
                try Output.line("\(passed ? "passed" : "not passed")\(quorum ?? "")")
            }
            if let stv = count.stv { try printStages(stv, names: names(question)) }
            for draw in count.draws {
                try Output.line(
                    "tie among \(draw.among.map { "\($0 + 1)" }.joined(separator: ", ")) decided by lot (draw \(draw.number)): \(draw.drawn.map { "\($0 + 1)" }.joined(separator: ", "))"
                )
            }
            if let schulze = count.schulze {
                try Output.line("Schulze order: \(schulze.order.map { "\($0 + 1)" }.joined(separator: " > "))")
                for tie in schulze.ties {
                    try Output.line(
                        "tie among \(tie.tied.map { "\($0 + 1)" }.joined(separator: ", ")) ordered by lot (draw \(tie.draw))"
                    )
                }
            }
            if !count.elected.isEmpty {
                try Output.line("elected: \(count.elected.map { names(question)[$0] }.joined(separator: ", "))")
            }
        }
        try Output.line("")
        try Output.line(
            "turnout: \(state.voted) of \(state.authorized) (\(Output.percent(state.voted, of: state.authorized)))")
    }

    private static func names(_ question: Question) -> [String] {
        if case .yesNo = question.method { return ["yes", "no", "abstain"] }
        return question.options
    }

    private static func printStages(_ stv: STVResult, names: [String]) throws {
        try Output.line("quota \(stv.quota) of \(stv.validVote) valid votes")
        for stage in stv.stages {
            let action =
                switch stage.action {
                case .firstCount: "first preferences"
                case .surplusTransferred(let option, let surplus):
                    "surplus of \(names[option]) (\(surplus)) transferred"
                case .excluded(let option, let votes): "\(names[option]) excluded (\(votes))"
                case .electedByRemaining(let options):
                    "\(options.map { names[$0] }.joined(separator: ", ")) elected: as many left as seats"
                }
            let totals = stage.continuing.map { "\(names[$0]) \(stage.totals[$0])" }.joined(separator: ", ")
            let elected =
                stage.elected.isEmpty ? "" : "; elected: " + stage.elected.map { names[$0] }.joined(separator: ", ")
            try Output.line(
                "stage \(stage.number): \(action)\(elected); continuing: \(totals.isEmpty ? "none" : totals); non-transferable \(stage.nonTransferable)"
            )
            for tie in stage.ties {
                let how =
                    switch tie.decision {
                    case .lookingBack(let earlier): "by the totals of stage \(earlier)"
                    case .lot(let draw, _): "by lot (draw \(draw))"
                    }
                try Output.line(
                    "  tie among \(tie.tied.map { names[$0] }.joined(separator: ", ")): \(names[tie.chosen]) chosen \(how)"
                )
            }
        }
    }
}

/// `vote tally --json` of a place that asks questions.
struct BallotTallyJSON: Encodable {
    struct Total: Encodable {
        var members: UInt64
        var weight: UInt64
        init(_ weighed: Weighed) {
            members = weighed.members
            weight = weighed.weight
        }
    }

    struct Stage: Encodable {
        var number: Int
        var action: String
        var option: Int?
        var totals: [String]
        var nonTransferable: String
        enum CodingKeys: String, CodingKey {
            case number, action, option, totals
            case nonTransferable = "non_transferable"
        }
    }

    struct QuestionJSON: Encodable {
        var title: String
        var method: String
        var ballots: Total
        var blank: Total
        /// Per option (numbered from 1 in `elected`): its votes, or first preferences for a ranked question.
        var options: [Total]
        var elected: [Int]
        var passed: Bool?
        var quorumMet: Bool?
        var quota: String?
        var stages: [Stage]?
        var order: [Int]?
        enum CodingKeys: String, CodingKey {
            case title, method, ballots, blank, options, elected, passed, quota, stages, order
            case quorumMet = "quorum_met"
        }
    }

    var place: UInt32
    var name: String
    var status: String
    var authorized: UInt64
    var voted: UInt64
    var height: UInt64
    var questions: [QuestionJSON]

    init(_ state: PlaceState, counts: [QuestionCount], height: UInt64) {
        place = state.place.id
        name = state.place.name
        status = state.status(at: Clock.now()).rawValue
        authorized = state.authorized
        voted = state.voted
        self.height = height
        questions = zip(state.place.ballot?.questions ?? [], counts).map { question, count in
            QuestionJSON(
                title: question.title, method: question.methodText, ballots: Total(count.ballots),
                blank: Total(count.blank), options: count.options.map(Total.init),
                elected: count.elected.map { $0 + 1 },
                passed: count.passed, quorumMet: count.quorumMet, quota: count.stv.map { "\($0.quota)" },
                stages: count.stv?.stages.map { stage in
                    let (action, option): (String, Int?) =
                        switch stage.action {
                        case .firstCount: ("first_count", nil)
                        case .surplusTransferred(let option, _): ("surplus_transferred", option + 1)
                        case .excluded(let option, _): ("excluded", option + 1)
                        case .electedByRemaining: ("elected_by_remaining", nil)
                        }
                    return Stage(
                        number: stage.number, action: action, option: option, totals: stage.totals.map { "\($0)" },
                        nonTransferable: "\(stage.nonTransferable)")
                }, order: count.schulze?.order.map { $0 + 1 })
        }
    }
}
