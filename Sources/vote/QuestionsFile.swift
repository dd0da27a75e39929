import Ballots
import Foundation
import JSONViews
import VoteLedger

/// `vote place create --questions FILE`: the file's questions (`QuestionJSON.ballot(file:)` says what it holds),
/// or a one-line refusal naming the file or the question.
enum QuestionsFile {
    static func read(_ path: String) throws -> Ballot {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw VoteError(.notFound, "--questions: cannot read \(path)")
        }
        guard data.count <= 1 << 20 else { throw VoteError(.refused, "--questions: \(path) is over 1 MiB") }
        do { return try QuestionJSON.ballot(file: data) } catch {
            let said = error.description
            throw VoteError(.refused, "--questions: " + (said.hasPrefix("question") ? said : "\(path) \(said)"))
        }
    }
}

extension Question {
    /// How the question is answered and decided, in a few words ("choose 1 to 3; 3 elected").
    var methodText: String {
        let blank = blankAllowed ? "; may be left blank" : ""
        switch method {
        case .choose(let min, let max, let seats):
            return "choose \(min == max ? "\(max)" : "\(min) to \(max)"); \(seats) elected" + blank
        case .yesNo(let threshold, let quorum):
            let passes =
                switch threshold {
                case .moreYesThanNo: "more yes than no"
                case .ofYesAndNo(let share): "yes at least \(share.numerator)/\(share.denominator) of yes and no"
                case .ofBallots(let share): "yes at least \(share.numerator)/\(share.denominator) of all ballots"
                case .majorityOfElectorate: "yes from more than half of the electorate"
                }
            let quorumText = quorum.map { "; quorum \($0.numerator)/\($0.denominator) of the electorate" } ?? ""
            return "yes, no or abstain; passes with \(passes)\(quorumText)" + blank
        case .rank(let seats, let rule):
            let how =
                switch rule {
                case .scottishSTV: seats == 1 ? "instant runoff" : "Scottish STV"
                case .schulze: "the Schulze method"
                }
            return "rank; \(seats) elected by \(how)" + blank
        }
    }

    /// The question's options by name: yes, no and abstain for a yes/no question.
    var optionNames: [String] {
        if case .yesNo = method { return ["yes", "no", "abstain"] }
        return options
    }

    /// The question's options as the voter numbers them ("1. Ana").
    var optionLines: [String] {
        if case .yesNo = method { return optionNames }
        return options.enumerated().map { "\($0 + 1). \($1)" }
    }
}
