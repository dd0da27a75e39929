import Ledger
public import LedgerCrypto

/// One counted answer: what the voter answered and the weight their authorisation carries (1 unless the roll
/// says otherwise).
public struct CastAnswer: Sendable, Equatable {
    public var answer: Answer
    public var weight: UInt64

    /// An answer of `weight`.
    public init(_ answer: Answer, weight: UInt64 = 1) {
        self.answer = answer
        self.weight = weight
    }
}

/// Members and their weight: of the electorate, of a total, of an option.
public struct Weighed: Sendable, Equatable {
    /// How many members (ballots).
    public var members: UInt64
    /// Their summed weight; equal to `members` where every weight is 1.
    public var weight: UInt64

    /// `members` members of summed `weight`.
    public init(members: UInt64 = 0, weight: UInt64 = 0) {
        self.members = members
        self.weight = weight
    }

    mutating func add(_ weight: UInt64) {
        members += 1
        self.weight += weight
    }
}

/// A question's count: every total, what the method decides, and how each tie was decided.
public struct QuestionCount: Sendable, Equatable {
    /// Every ballot of the place, blank answers to this question included (the turnout).
    public var ballots = Weighed()
    /// The ballots that left this question blank.
    public var blank = Weighed()
    /// Per option: the ballots that picked it (*choose*, *yes/no*) or ranked it first (*rank*).
    public var options: [Weighed]
    /// The options elected, in order (most weight first for *choose*; in order of election for *rank*); empty for
    /// *yes/no*.
    public var elected: [Int] = []
    /// For *yes/no*: whether the motion passed (threshold and quorum both met).
    public var passed: Bool?
    /// For *yes/no* with a quorum: whether the turnout reached it.
    public var quorumMet: Bool?
    /// For *yes/no*: whether the threshold was reached (the motion passes if the quorum is met too).
    public var thresholdReached: Bool?
    /// For a question ranked by Scottish STV: every stage of the count.
    public var stv: STVResult?
    /// For a question ranked by Schulze: the pairwise preferences, the strongest paths and the order.
    public var schulze: SchulzeResult?
    /// The ties a draw by lot decided, in the order drawn: the tied options and those drawn.
    public var draws: [Draw] = []

    init(optionCount: Int) {
        options = Array(repeating: Weighed(), count: optionCount)
    }
}

/// A tie the lot decided.
public struct Draw: Sendable, Equatable {
    /// The draw's number within the question's count (`Lot`'s `draw`).
    public var number: Int
    /// The tied options.
    public var among: [Int]
    /// The options the lot picked, first drawn first.
    public var drawn: [Int]

    /// Draw `number` among `among`, which picked `drawn`.
    public init(number: Int, among: [Int], drawn: [Int]) {
        self.number = number
        self.among = among
        self.drawn = drawn
    }
}

extension Question {
    /// Counts `answers` (each already valid for this question) for a place whose electorate is `electorate`;
    /// `lot` decides what the method leaves to chance, `index` is the question's place on the ballot.
    public func count(_ answers: [CastAnswer], electorate: Weighed, lot: Lot, index: Int) -> QuestionCount {
        var count = QuestionCount(optionCount: optionCount)
        for cast in answers {
            count.ballots.add(cast.weight)
            switch cast.answer {
            case .blank:
                count.blank.add(cast.weight)
            case .options(let picked):
                if case .rank = method {
                    if let first = picked.first { count.options[first].add(cast.weight) }
                } else {
                    for option in picked { count.options[option].add(cast.weight) }
                }
            }
        }
        switch method {
        case .choose(_, _, let seats):
            count.elected = Question.mostWeight(
                count.options, seats: seats, lot: lot, index: index, draws: &count.draws)
        case .yesNo(let threshold, let quorum):
            let yes = count.options[YesNo.yes.rawValue].weight
            let no = count.options[YesNo.no.rawValue].weight
            let reached: Bool
            switch threshold {
            case .moreYesThanNo: reached = yes > no
            case .ofYesAndNo(let fraction): reached = yes + no > 0 && fraction.isReached(by: yes, of: yes + no)
            case .ofBallots(let fraction): reached = yes > 0 && fraction.isReached(by: yes, of: count.ballots.weight)
            case .majorityOfElectorate: reached = yes.multipliedFullWidth(by: 2) > (0, electorate.weight)
            }
            count.quorumMet = quorum.map { $0.isReached(by: count.ballots.weight, of: electorate.weight) }
            count.thresholdReached = reached
            count.passed = reached && count.quorumMet != false
        case .rank(let seats, let rule):
            let ballots = answers.compactMap { cast -> RankedBallot? in
                guard case .options(let ranking) = cast.answer else { return nil }
                return RankedBallot(ranking: ranking, weight: cast.weight)
            }
            // No ranking to count: no one is elected, by lot or otherwise (FORMAT.md §11.23).
            guard !ballots.isEmpty else { break }
            switch rule {
            case .scottishSTV:
                let result = STVCount.count(ballots, options: optionCount, seats: seats, lot: lot, question: index)
                count.elected = result.elected
                count.stv = result
            case .schulze:
                let result = SchulzeCount.count(ballots, options: optionCount, lot: lot, question: index)
                count.elected = result.elected(seats: seats)
                count.schulze = result
            }
        }
        return count
    }

    /// The `seats` options with the most weight, most first; an option no ballot picked is never elected. Options
    /// tied across the last seat are ordered by one draw (number 0).
    private static func mostWeight(
        _ totals: [Weighed], seats: Int, lot: Lot, index: Int, draws: inout [Draw]
    ) -> [Int] {
        let ranked = totals.indices.filter { totals[$0].weight > 0 }.sorted {
            totals[$0].weight != totals[$1].weight ? totals[$0].weight > totals[$1].weight : $0 < $1
        }
        guard ranked.count > seats else { return ranked }
        let boundary = totals[ranked[seats - 1]].weight
        guard totals[ranked[seats]].weight == boundary else { return Array(ranked.prefix(seats)) }
        let above = ranked.filter { totals[$0].weight > boundary }
        let tied = ranked.filter { totals[$0].weight == boundary }
        let order = lot.order(tied, question: index, draw: 0)
        let drawn = Array(order.prefix(seats - above.count))
        draws.append(Draw(number: 0, among: tied, drawn: drawn))
        return above + drawn
    }
}

extension Ballot {
    /// Counts every question over `cast` (each voter's valid answers with their weight, in ledger order) for an
    /// electorate of `electorate`. Ties are drawn by a `Lot` keyed by the ballots themselves (`lotSeed`), so the
    /// draw is fixed once the last ballot is cast and no one can choose it.
    public func count(_ cast: [(answers: [Answer], weight: UInt64)], electorate: Weighed) -> [QuestionCount] {
        let lot = Lot(seed: Ballot.lotSeed(cast.map(\.answers)))
        return questions.indices.map { index in
            questions[index].count(
                cast.map { CastAnswer($0.answers[index], weight: $0.weight) }, electorate: electorate, lot: lot,
                index: index)
        }
    }

    /// The seed of a place's draws: SHA-256 of the encodings of every ballot's answers (FORMAT.md §11.22),
    /// concatenated in ledger order.
    public static func lotSeed(_ ballots: [[Answer]]) -> Digest {
        var hasher = SHA256Hasher()
        for answers in ballots {
            var writer = ByteWriter()
            write(answers: answers, to: &writer)
            hasher.update(writer.bytes)
        }
        return hasher.finalize()
    }
}
