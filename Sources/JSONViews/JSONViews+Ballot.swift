public import Ballots
import Election
import Ledger
import VoteLedger

// The JSON shapes of a place's questions and of their counts: the place routes and `vote place show --json` give
// the questions in the very form `vote place create --questions FILE` reads, and the tally routes and
// `vote tally --json` give each question's count.

/// One question as an officer writes it (`vote place create --questions`, which decodes it; every key is optional
/// there, so that a missing one gets its own message) and as the place views and the booth show it (every key the
/// question's method has is present).
public struct QuestionJSON: Codable, Sendable {
    public var title: String?
    public var description: String?
    /// "choose", "yes-no" or "rank".
    public var method: String?
    /// The options, numbered from 1 as voters answer (none for yes/no: yes, no and abstain are 1, 2, 3).
    public var options: [String]?
    /// Whether the question may be left blank.
    public var blank: Bool?
    public var min: Int?
    public var max: Int?
    public var seats: Int?
    /// "more-yes-than-no", "N/D of yes-and-no", "N/D of ballots" or "majority-of-electorate".
    public var threshold: String?
    /// "N/D" of the electorate.
    public var quorum: String?
    /// "scottish-stv" or "schulze".
    public var rule: String?

    enum CodingKeys: String, CodingKey {
        case title, description, method, options, blank, min, max, seats, threshold, quorum, rule
    }

    public init(_ question: Question) {
        title = question.title
        description = question.description
        options = question.options
        blank = question.blankAllowed
        switch question.method {
        case .choose(let min, let max, let seats):
            method = "choose"
            (self.min, self.max, self.seats) = (min, max, seats)
        case .yesNo(let threshold, let quorum):
            method = "yes-no"
            self.threshold =
                switch threshold {
                case .moreYesThanNo: "more-yes-than-no"
                case .ofYesAndNo(let share): "\(share.numerator)/\(share.denominator) of yes-and-no"
                case .ofBallots(let share): "\(share.numerator)/\(share.denominator) of ballots"
                case .majorityOfElectorate: "majority-of-electorate"
                }
            self.quorum = quorum.map { "\($0.numerator)/\($0.denominator)" }
        case .rank(let seats, let rule):
            method = "rank"
            self.seats = seats
            self.rule = rule.rawValue
        }
    }
}

/// One question's count: its totals, what its method decided, and for a ranked question how.
public struct QuestionCountJSON: Encodable, Sendable {
    struct Total: Encodable, Sendable {
        var members: UInt64
        var weight: UInt64
        init(_ weighed: Weighed) {
            members = weighed.members
            weight = weighed.weight
        }
    }

    struct Stage: Encodable, Sendable {
        var number: Int
        /// "first_count", "surplus_transferred", "excluded" or "elected_by_remaining".
        var action: String
        /// The option transferred or excluded, from 1.
        var option: Int?
        /// Every option's votes at the end of the stage, five decimals.
        var totals: [String]
        /// The options elected at the end of the stage, from 1.
        var elected: [Int]
        var nonTransferable: String
        /// Votes lost so far to truncating transfer values, five decimals.
        var loss: String
        enum CodingKeys: String, CodingKey {
            case number, action, option, totals, elected, loss
            case nonTransferable = "non_transferable"
        }
    }

    var title: String
    var ballots: Total
    var blank: Total
    /// Per option: its votes (*choose*, *yes/no*: yes, no, abstain) or first preferences (*rank*).
    var options: [Total]
    /// The options elected, from 1, in order.
    var elected: [Int]
    var passed: Bool?
    var thresholdReached: Bool?
    var quorumMet: Bool?
    /// Scottish STV: the quota and every stage.
    var quota: String?
    var stages: [Stage]?
    /// Schulze: every option in its order, from 1.
    var order: [Int]?

    enum CodingKeys: String, CodingKey {
        case title, ballots, blank, options, elected, passed, quota, stages, order
        case quorumMet = "quorum_met"
        case thresholdReached = "threshold_reached"
    }

    public init(_ question: Question, _ count: QuestionCount) {
        title = question.title
        ballots = Total(count.ballots)
        blank = Total(count.blank)
        options = count.options.map(Total.init)
        elected = count.elected.map { $0 + 1 }
        passed = count.passed
        quorumMet = count.quorumMet
        thresholdReached = count.thresholdReached
        quota = count.stv.map { "\($0.quota)" }
        stages = count.stv?.stages.map { stage in
            let (action, option): (String, Int?) =
                switch stage.action {
                case .firstCount: ("first_count", nil)
                case .surplusTransferred(let option, _): ("surplus_transferred", option + 1)
                case .excluded(let option, _): ("excluded", option + 1)
                case .electedByRemaining: ("elected_by_remaining", nil)
                }
            return Stage(
                number: stage.number, action: action, option: option, totals: stage.totals.map { "\($0)" },
                elected: stage.elected.map { $0 + 1 }, nonTransferable: "\(stage.nonTransferable)",
                loss: "\(stage.lossFromTruncation)")
        }
        order = count.schulze?.order.map { $0 + 1 }
    }
}
