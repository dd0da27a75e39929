/// Why a ballot definition is refused: each case is a rule of FORMAT.md's ballot validity.
public enum BallotViolation: Error, Sendable, Equatable {
    /// No question, or more than `Ballot.maximumQuestions`.
    case questionCount
    /// A title, description or option outside its length limit (UTF-8 bytes), or an empty title or option.
    case textLength(question: Int)
    /// Too few or too many options for the method (`Ballot.maximumOptions`); a yes/no question lists none.
    case optionCount(question: Int)
    /// Two options of one question with the same text.
    case repeatedOption(question: Int)
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
    /// Longest title or option, in UTF-8 bytes.
    public static let maximumTitleBytes = 256
    /// Longest description, in UTF-8 bytes.
    public static let maximumDescriptionBytes = 4096

    /// The first rule the ballot breaks, or `nil` when it is well formed.
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
        let texts = [title] + options
        if texts.contains(where: { $0.isEmpty || $0.utf8.count > Ballot.maximumTitleBytes })
            || description.utf8.count > Ballot.maximumDescriptionBytes
        {
            return .textLength(question: index)
        }
        if Set(options).count != options.count { return .repeatedOption(question: index) }
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
