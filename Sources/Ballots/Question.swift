/// A place's ballot: the questions a voter answers in one visit, in the order they are shown and numbered
/// (question 0 first). A place that predates ballots asks one plurality question over its registered candidates;
/// its events and counts are unchanged.
public struct Ballot: Sendable, Equatable {
    /// The questions, at least one.
    public var questions: [Question]

    /// A ballot asking `questions`.
    public init(questions: [Question]) {
        self.questions = questions
    }
}

/// One question: what is asked, its options and how the answers are counted.
public struct Question: Sendable, Equatable {
    /// The question as the voter reads it ("Elect three members of the board").
    public var title: String
    /// More about the question; may be empty.
    public var description: String
    /// The options, shown in this order and numbered from 0. A yes/no question has none of its own: its options
    /// are yes, no and abstain (`YesNo`).
    public var options: [String]
    /// How an answer is given and counted.
    public var method: Method
    /// Whether a voter may hand this question in blank: counted apart, in the turnout and in no option's total.
    public var blankAllowed: Bool

    /// A question; `Ballot.check` says whether it is well formed.
    public init(title: String, description: String = "", options: [String], method: Method, blankAllowed: Bool) {
        self.title = title
        self.description = description
        self.options = options
        self.method = method
        self.blankAllowed = blankAllowed
    }

    /// How many options the question offers: its own, or three for yes/no/abstain.
    public var optionCount: Int {
        if case .yesNo = method { return YesNo.allCases.count }
        return options.count
    }
}

/// How a question is answered and counted.
public enum Method: Sendable, Equatable {
    /// Tick between `min` and `max` options; the `seats` options with the most weight are elected (plurality is
    /// min 1, max 1, seats 1; "3 of 7" is max 3, seats 3; approval is max = every option).
    case choose(min: Int, max: Int, seats: Int)
    /// Yes, no or abstain; the motion passes when `threshold` is met and, if set, `quorum` is.
    case yesNo(threshold: Threshold, quorum: Fraction?)
    /// Rank some or all options; `seats` are filled by `rule`.
    case rank(seats: Int, rule: RankRule)
}

/// The answer of a yes/no question.
public enum YesNo: Int, Sendable, CaseIterable {
    case yes = 0
    case no = 1
    case abstain = 2
}

/// A fraction num/den with 0 < num ≤ den: two thirds is 2/3.
public struct Fraction: Sendable, Equatable {
    public var numerator: UInt64
    public var denominator: UInt64

    /// num/den; `Ballot.check` refuses 0, a zero denominator and a fraction above 1.
    public init(_ numerator: UInt64, _ denominator: UInt64) {
        self.numerator = numerator
        self.denominator = denominator
    }

    /// Whether `part` is at least this fraction of `whole` (`part × den ≥ num × whole`, exact).
    public func isReached(by part: UInt64, of whole: UInt64) -> Bool {
        part.multipliedFullWidth(by: denominator) >= numerator.multipliedFullWidth(by: whole)
    }
}

/// When a yes/no motion passes, in weight (a member's weight, 1 unless the roll says otherwise).
public enum Threshold: Sendable, Equatable {
    /// More yes than no (a simple majority of the votes cast; abstentions and blanks do not count).
    case moreYesThanNo
    /// Yes is at least this fraction of yes + no ("two thirds of the votes cast").
    case ofYesAndNo(Fraction)
    /// Yes is at least this fraction of every ballot cast, abstentions and blanks included.
    case ofBallots(Fraction)
    /// Yes is more than half of the electorate's weight (every authorised member, voting or not).
    case majorityOfElectorate
}

/// How a ranked question fills its seats.
public enum RankRule: String, Sendable, Equatable, CaseIterable {
    /// Scottish STV (SSI 2007/42, Schedule 1 rules 45–52); one seat is instant runoff.
    case scottishSTV = "scottish-stv"
    /// The Schulze method (winning votes); S seats are the first S of its order.
    case schulze
}
