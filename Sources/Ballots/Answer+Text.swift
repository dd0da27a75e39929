/// The answers' text form, as a voter types them and as `vote log` shows them: one answer per question,
/// separated by `;`, options numbered from 1 as the ballot shows them. A *choose* answer lists its options with
/// `,` ("1,3"), a *rank* answer with `>` from most preferred ("2>1>3"), a *yes/no* answer is `yes`, `no` or
/// `abstain`, and `blank` (or `-`) is a blank answer.
extension Ballot {
    /// The answers in `text`, or why they cannot be read. Whether they are valid for the questions is
    /// `violation(of:)`'s to say; this only reads them (a choose answer's options are sorted for it).
    public func answers(parsing text: String) -> Result<[Answer], AnswerTextError> {
        let parts = text.split(separator: ";", omittingEmptySubsequences: false)
        guard parts.count == questions.count else { return .failure(.count(expected: questions.count)) }
        var answers: [Answer] = []
        for (index, (question, part)) in zip(questions, parts).enumerated() {
            let part = part.filter { $0 != " " }
            if part == "-" || part.lowercased() == "blank" {
                answers.append(.blank)
                continue
            }
            switch question.method {
            case .yesNo:
                let words: [Substring: YesNo] = ["yes": .yes, "no": .no, "abstain": .abstain]
                guard let word = words[Substring(part.lowercased())] else {
                    return .failure(.unreadable(question: index + 1))
                }
                answers.append(.options([word.rawValue]))
            case .choose, .rank:
                let isRank: Bool
                if case .rank = question.method { isRank = true } else { isRank = false }
                var options: [Int] = []
                for number in part.split(separator: isRank ? ">" : ",", omittingEmptySubsequences: false) {
                    guard let value = Int(number), value >= 1, value <= 1 << 16 else {
                        return .failure(.unreadable(question: index + 1))
                    }
                    options.append(value - 1)
                }
                answers.append(.options(isRank ? options : options.sorted()))
            }
        }
        return .success(answers)
    }

    /// `answers` in the text form.
    public func text(of answers: [Answer]) -> String {
        zip(questions, answers).map { question, answer in
            guard case .options(let options) = answer else { return "blank" }
            switch question.method {
            case .yesNo: return options.first.flatMap { YesNo(rawValue: $0) }.map { "\($0)" } ?? "?"
            case .choose: return options.map { String($0 + 1) }.joined(separator: ",")
            case .rank: return options.map { String($0 + 1) }.joined(separator: ">")
            }
        }.joined(separator: ";")
    }
}

/// Why an answers text cannot be read.
public enum AnswerTextError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not one answer per question.
    case count(expected: Int)
    /// A question's answer is neither `-`, nor option numbers, nor yes/no/abstain as the question asks.
    case unreadable(question: Int)

    public var description: String {
        switch self {
        case .count(let expected):
            "the ballot asks \(expected) question\(expected == 1 ? "" : "s"): give one answer to each, separated by ;"
        case .unreadable(let question):
            "answer to question \(question): give option numbers (1,3 to choose; 2>1>3 to rank), yes, no or abstain, or blank"
        }
    }
}

extension Ballot {
    /// `answers` without their ballot at hand (a line of `vote log`): each answer's options numbered from 1 in
    /// the order given (a yes/no answer's 1, 2, 3 are yes, no, abstain), separated by `,`; `-` for a blank
    /// answer; answers separated by `;`.
    public static func plainText(_ answers: [Answer]) -> String {
        answers.map { answer in
            guard case .options(let options) = answer else { return "-" }
            return options.map { String($0 + 1) }.joined(separator: ",")
        }.joined(separator: ";")
    }
}
