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
                for (option, name) in question.optionNames.enumerated() {
                    try Output.line(
                        "\(number + 1),\(option + 1),\(Output.csvField(name)),\(count.options[option].weight),\(count.elected.contains(option))"
                    )
                }
                try Output.line("\(number + 1),,blank,\(count.blank.weight),false")
            }
            return
        }
        try Output.line(
            "place \(state.place.id): \(state.place.name) (\(state.status(at: Clock.now()).rawValue)\(ended ? ", final" : state.cancelled ? "" : ", so far"))"
        )
        for (number, (question, count)) in zip(questions, counts).enumerated() {
            try Output.line("")
            try Output.line("question \(number + 1): \(question.title) (\(question.methodText))")
            let heading = if case .rank = question.method { "FIRST PREFERENCES" } else { "VOTES" }
            let isYesNo = if case .yesNo = question.method { true } else { false }
            var rows = question.optionNames.enumerated().map { option, name in
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
            if let stv = count.stv { try printStages(stv, names: question.optionNames) }
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
                try Output.line("elected: \(count.elected.map { question.optionNames[$0] }.joined(separator: ", "))")
            }
        }
        try Output.line("")
        try Output.line(
            "turnout: \(state.voted) of \(state.authorized) (\(Output.percent(state.voted, of: state.authorized)))")
        try PlaceCommand.printAmendments(of: state)
        try PlaceCommand.printWithdrawals(of: state)
        try PlaceCommand.printCancellation(of: state)
        if state.authorizedWeight != state.authorized, let weight = counts.first?.ballots.weight {
            // Weighted voters: the weight that voted is what a quorum and the shares are measured in.
            try Output.line(
                "weight: \(weight) of \(state.authorizedWeight) (\(Output.percent(weight, of: state.authorizedWeight)))"
            )
        }
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
