/// Why a ballot definition is refused: each case is a rule of FORMAT.md's ballot validity.
public enum BallotViolation: Error, Sendable, Equatable {
    /// No question, or more than `Ballot.maximumQuestions`.
    case questionCount
    /// Too few or too many options for the method (`Ballot.maximumOptions`); a yes/no question lists none.
    case optionCount(question: Int)
    /// Selection limits that cannot be met: min below 1 (an empty answer is a blank), min above max, max above
    /// the options.
    case selectionLimits(question: Int)
    /// No seat, or more seats than options (or, for *choose*, than max).
    case seats(question: Int)
    /// A threshold or quorum fraction that is 0, above 1 or has a zero denominator.
    case fraction(question: Int)
}

extension Ballot {
    /// Most questions on one ballot.
    public static let maximumQuestions = 64
    /// Most options of one question.
    public static let maximumOptions = 256

    /// The first rule of its structure the ballot breaks, or `nil` when it is well formed. Its texts are the
    /// contract's to check (names and free text, as a place's).
    public var violation: BallotViolation? {
        guard (1...Ballot.maximumQuestions).contains(questions.count) else { return .questionCount }
        for (index, question) in questions.enumerated() {
            if let violation = question.violation(at: index) { return violation }
        }
        return nil
    }
}

extension Question {
    fileprivate func violation(at index: Int) -> BallotViolation? {
        switch method {
        case .choose(let min, let max, let seats):
            guard (1...Ballot.maximumOptions).contains(options.count) else { return .optionCount(question: index) }
            guard min >= 1, min <= max, max <= options.count else {
                return .selectionLimits(question: index)
            }
            guard seats >= 1, seats <= options.count else { return .seats(question: index) }
        case .yesNo(let threshold, let quorum):
            guard options.isEmpty else { return .optionCount(question: index) }
            var fractions = quorum.map { [$0] } ?? []
            switch threshold {
            case .ofYesAndNo(let fraction), .ofBallots(let fraction): fractions.append(fraction)
            case .moreYesThanNo, .majorityOfElectorate: break
            }
            if fractions.contains(where: { $0.numerator == 0 || $0.numerator > $0.denominator }) {
                return .fraction(question: index)
            }
        case .rank(let seats, _):
            guard (2...Ballot.maximumOptions).contains(options.count) else { return .optionCount(question: index) }
            guard seats >= 1, seats < options.count else { return .seats(question: index) }
        }
        return nil
    }
}

extension BallotViolation {
    /// The rule in words, after "the ballot " in an error line.
    public var text: String {
        switch self {
        case .questionCount: "must ask 1 to \(Ballot.maximumQuestions) questions"
        case .optionCount(let question):
            "question \(question + 1): a choose question needs 1 to \(Ballot.maximumOptions) options, a ranked one 2 to \(Ballot.maximumOptions), a yes/no question none"
        case .selectionLimits(let question):
            "question \(question + 1): min must be at least 1 and at most max, and max at most the number of options"
        case .seats(let question):
            "question \(question + 1): seats must be at least 1 and fewer than the options (choose: at most the options)"
        case .fraction(let question):
            "question \(question + 1): a threshold or quorum must be a fraction above 0 and at most 1"
        }
    }
}
