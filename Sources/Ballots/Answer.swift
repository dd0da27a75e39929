/// A voter's answer to one question, before it is counted.
public enum Answer: Sendable, Equatable, Hashable {
    /// Handed in blank, where the question allows it.
    case blank
    /// The options picked: for *choose*, the ticked options in ascending order; for *yes/no*, exactly one of
    /// `YesNo`'s raw values; for *rank*, the options most preferred first.
    case options([Int])
}

/// Why an answer is refused. Each case is a rule of FORMAT.md's answer validity; none carries the answer.
public enum AnswerViolation: Error, Sendable, Equatable {
    /// A blank answer to a question that does not allow one.
    case blankNotAllowed
    /// Fewer options than the question's minimum (a ranking must rank at least one).
    case tooFewOptions(minimum: Int)
    /// More options than the question's maximum.
    case tooManyOptions(maximum: Int)
    /// An option number the question does not have.
    case unknownOption
    /// An option given twice (a repeated tick or rank).
    case repeatedOption
    /// A *choose* answer whose options are not in ascending order (one answer has one encoding).
    case optionsOutOfOrder
    /// A ballot answering a different number of questions than the place asks.
    case wrongNumberOfAnswers(expected: Int)
}

extension Question {
    /// The rule that refuses `answer`, or `nil` when it is valid.
    public func violation(of answer: Answer) -> AnswerViolation? {
        guard case .options(let picked) = answer else { return blankAllowed ? nil : .blankNotAllowed }
        if picked.contains(where: { $0 < 0 || $0 >= optionCount }) { return .unknownOption }
        if Set(picked).count != picked.count { return .repeatedOption }
        switch method {
        case .choose(let min, let max, _):
            if picked.count < min { return .tooFewOptions(minimum: min) }
            if picked.count > max { return .tooManyOptions(maximum: max) }
            if picked != picked.sorted() { return .optionsOutOfOrder }
        case .yesNo:
            if picked.isEmpty { return .tooFewOptions(minimum: 1) }
            if picked.count > 1 { return .tooManyOptions(maximum: 1) }
        case .rank:
            if picked.isEmpty { return .tooFewOptions(minimum: 1) }
        }
        return nil
    }
}

extension Ballot {
    /// The first rule `answers` (one per question, in order) breaks, with the question's index; `nil` when every
    /// answer is valid.
    public func violation(of answers: [Answer]) -> (question: Int, violation: AnswerViolation)? {
        guard answers.count == questions.count else {
            return (min(answers.count, questions.count), .wrongNumberOfAnswers(expected: questions.count))
        }
        for (index, (question, answer)) in zip(questions, answers).enumerated() {
            if let violation = question.violation(of: answer) { return (index, violation) }
        }
        return nil
    }
}

extension AnswerViolation {
    /// The rule in words, for an error line ("answer to question 2: …").
    public var text: String {
        switch self {
        case .blankNotAllowed: "this question may not be left blank"
        case .tooFewOptions(let minimum): "pick at least \(minimum)"
        case .tooManyOptions(let maximum): "pick at most \(maximum)"
        case .unknownOption: "no such option"
        case .repeatedOption: "an option is given twice"
        case .optionsOutOfOrder: "the options picked must be listed in ascending order"
        case .wrongNumberOfAnswers(let expected): "the ballot asks \(expected) questions: give one answer to each"
        }
    }
}
