/// The single transferable vote under Scottish STV: The Scottish Local Government Elections Order 2007
/// (SSI 2007/42), Schedule 1 rules 45–52, with each ballot counting as its weight in ballot papers.
///
/// - Rule 45: a ranking with no option is not a valid vote; the valid vote is the summed weight of the rest,
///   each credited to its first preference at value 1 per paper.
/// - Rule 46: quota = ⌊valid vote / (seats + 1)⌋ + 1 whole votes.
/// - Rule 47: at the end of every stage, each continuing option whose total reaches the quota is elected.
/// - Rules 48–49: while vacancies remain, the largest untransferred surplus is transferred, one per stage: every
///   paper the option holds moves to its next continuing preference at
///   ⌊surplus × paper value / option's total⌋ to five decimals (weighted inclusive Gregory); papers with no
///   continuing preference are non-transferable at that same value; what truncation leaves is lost. The
///   elected option keeps the quota.
/// - Rules 50–51: with no surplus to transfer, the continuing option with the fewest votes is excluded and all its
///   papers move at their current values.
/// - Rule 52: when the continuing options are no more than the vacancies, they are all elected, with no further
///   transfer; the count also ends as soon as every vacancy is filled (no surplus is transferred then).
/// - Ties (rules 49(2)–(3), 51(2)): the stages before are looked at, most recent first, and the tied options
///   narrowed at each stage to those with the most votes (surplus order) or the fewest (exclusion); what stays
///   tied at the first stage is decided by `Lot`, with `draw` counting the draws of this count from 0.
///
/// All arithmetic is in `Votes` (1/100000 units): the count is exact and reproducible. FORMAT.md states the same
/// rules for an outside verifier.
public enum STVCount {
    /// Counts `ballots` for `seats` seats among `options` options (indexes `0..<options`); `lot` and `question`
    /// (the question's index on the ballot) key every draw by lot.
    ///
    /// Each ballot's ranking must name options in range, each at most once (the question's rules refuse anything
    /// else before a count). Fewer options than seats elects them all.
    public static func count(
        _ ballots: [RankedBallot], options: Int, seats: Int, lot: Lot, question: Int
    ) -> STVResult {
        precondition(options >= 0 && seats >= 1, "a count needs options and at least one seat")
        var count = ScottishCount(ballots, options: options, seats: seats, lot: lot, question: question)
        count.run()
        return STVResult(
            seats: seats, validVote: count.validVote, quota: count.quota, elected: count.elected,
            stages: count.stages, drawsMade: count.drawsMade)
    }

    /// Instant runoff (the alternative vote): Scottish STV for one seat. The quota is then a majority of the
    /// valid vote, and options are excluded one at a time until one reaches it or only one is left.
    public static func instantRunoff(_ ballots: [RankedBallot], options: Int, lot: Lot, question: Int) -> STVResult {
        count(ballots, options: options, seats: 1, lot: lot, question: question)
    }
}

/// A finished Scottish STV count: who was elected, in order, and every stage that led there.
public struct STVResult: Sendable, Equatable {
    /// The seats to fill.
    public var seats: Int
    /// The summed weight of the valid (non-empty) rankings: the first stage's total.
    public var validVote: Votes
    /// ⌊validVote / (seats + 1)⌋ + 1 whole votes (rule 46).
    public var quota: Votes
    /// The options elected, in order of election. Options elected at the same stage come by their total at that
    /// stage, most first, then by index (the Order elects them together).
    public var elected: [Int]
    /// Every stage, the first count first.
    public var stages: [STVStage]
    /// How many draws by lot the count made (numbered `0..<drawsMade`).
    public var drawsMade: Int
}

/// One stage of the count: what was done, and the totals at its end.
public struct STVStage: Sendable, Equatable {
    /// The stage's number, 1 for the first count.
    public var number: Int
    /// What the stage did.
    public var action: STVAction
    /// Each option's votes at the end of the stage (by option index): a continuing option's total, an elected
    /// option's total (the quota once its surplus is transferred), zero for an excluded option.
    public var totals: [Votes]
    /// The options still continuing at the end of the stage, ascending.
    public var continuing: [Int]
    /// The options deemed elected at the end of this stage, in the result's order.
    public var elected: [Int]
    /// All votes set aside as non-transferable (exhausted) so far.
    public var nonTransferable: Votes
    /// All votes lost so far to truncating transfer values to five decimals.
    public var lossFromTruncation: Votes
    /// The ties decided to choose this stage's surplus or exclusion.
    public var ties: [STVTie]
}

/// What a stage of the count did.
public enum STVAction: Sendable, Equatable {
    /// First preferences credited (rule 45).
    case firstCount
    /// `option`'s surplus over the quota transferred (rule 48).
    case surplusTransferred(option: Int, surplus: Votes)
    /// `option` excluded, its `votes` transferred at their current values (rule 50).
    case excluded(option: Int, votes: Votes)
    /// The continuing options, as many as the vacancies left, elected without transfer (rule 52).
    case electedByRemaining([Int])
}

/// A tie the count had to decide.
public struct STVTie: Sendable, Equatable {
    /// What the tie decided.
    public enum Kind: Sendable, Equatable {
        /// Whose equal surplus is transferred first (rule 49(2)–(3)).
        case surplusOrder
        /// Which of the options equal lowest is excluded (rule 51).
        case exclusion
    }

    /// How the tie was decided.
    public enum Decision: Sendable, Equatable {
        /// By the totals at the end of stage `stage`, the most recent earlier stage that left one option.
        case lookingBack(stage: Int)
        /// By `Lot.draw(among: among, question:, draw: draw)`: `among` are the options equal at every stage.
        case lot(draw: Int, among: [Int])
    }

    /// What was decided.
    public var kind: Kind
    /// The options tied, ascending.
    public var tied: [Int]
    /// The option chosen: transferred first, or excluded.
    public var chosen: Int
    /// How it was chosen.
    public var decision: Decision

    /// A tie of `kind` among `tied` that `decision` resolved to `chosen`.
    public init(kind: Kind, tied: [Int], chosen: Int, decision: Decision) {
        self.kind = kind
        self.tied = tied
        self.chosen = chosen
        self.decision = decision
    }
}

/// The count's working state: the papers, who holds them, each option's total and status.
private struct ScottishCount {
    enum Status { case continuing, elected, excluded }

    /// Ballots with the same ranking, merged: their values stay equal throughout, so `weight` papers of one
    /// `value` each count exactly as separate ballots would (FORMAT.md allows one record per ranking with the
    /// summed weight). The ranking is `rankings[start..<end]`, and the paper is at its preference
    /// `rankings[position]` (`end` once non-transferable): one flat array for every ranking, so moving a paper
    /// touches no reference count.
    struct Paper {
        var start: Int
        var end: Int
        var position: Int
        var weight: UInt64
        var value: UInt64
    }

    let seats: Int
    let lot: Lot
    let question: Int
    var papers: [Paper] = []
    var rankings: [UInt32] = []
    var piles: [[Int]]
    var totals: [UInt64]
    var status: [Status]
    var surplusDone: [Bool]
    var validVote = Votes.zero
    var quota = Votes.zero
    var elected: [Int] = []
    var stages: [STVStage] = []
    var nonTransferable: UInt64 = 0
    var loss: UInt64 = 0
    var drawsMade = 0

    init(_ ballots: [RankedBallot], options: Int, seats: Int, lot: Lot, question: Int) {
        self.seats = seats
        self.lot = lot
        self.question = question
        piles = Array(repeating: [], count: options)
        totals = Array(repeating: 0, count: options)
        status = Array(repeating: .continuing, count: options)
        surplusDone = Array(repeating: false, count: options)
        // Identical rankings are found with an open-addressing table of paper indexes (`-1` empty), hashed over the
        // ranking in `rankings`: no array per ballot and no `Hasher` on the way.
        let counted = ballots.lazy.filter { !$0.ranking.isEmpty && $0.weight > 0 }
        let (ballotCount, optionCount) = counted.reduce((0, 0)) { ($0.0 + 1, $0.1 + $1.ranking.count) }
        var slots = [Int](repeating: -1, count: 1 << max(4, Int.bitWidth - (2 * ballotCount).leadingZeroBitCount))
        let mask = slots.count - 1
        var seen = [Int](repeating: -1, count: options)
        rankings.reserveCapacity(optionCount)
        papers.reserveCapacity(ballotCount)
        var weight: UInt64 = 0
        for (number, ballot) in counted.enumerated() {
            var hash: UInt64 = 0xCBF2_9CE4_8422_2325
            for option in ballot.ranking {
                precondition(
                    option >= 0 && option < options && seen[option] != number,
                    "a ranking names an unknown option or one option twice")
                seen[option] = number
                hash = (hash ^ UInt64(option)) &* 0x0000_0100_0000_01B3
            }
            weight += ballot.weight
            var slot = Int(truncatingIfNeeded: ((hash ^ (hash >> 29)) &* 0xBF58_476D_1CE4_E5B9) >> 32) & mask
            while slots[slot] >= 0 {
                let paper = papers[slots[slot]]
                if paper.end - paper.start == ballot.ranking.count
                    && zip(rankings[paper.start..<paper.end], ballot.ranking).allSatisfy({ Int($0) == $1 })
                {
                    break
                }
                slot = (slot + 1) & mask
            }
            if slots[slot] >= 0 {
                papers[slots[slot]].weight += ballot.weight
            } else {
                slots[slot] = papers.count
                let start = rankings.count
                for option in ballot.ranking { rankings.append(UInt32(option)) }
                papers.append(
                    Paper(
                        start: start, end: rankings.count, position: start, weight: ballot.weight,
                        value: Votes.unitsPerVote))
            }
        }
        guard let valid = Votes(whole: weight), let quota = Votes(whole: weight / UInt64(seats + 1) + 1) else {
            preconditionFailure("the valid vote is too large to count in 1/100000 units")
        }
        validVote = valid
        self.quota = quota
    }

    /// Rule 45, then stages until every vacancy is filled or rule 52 fills the rest.
    mutating func run() {
        for index in papers.indices {
            let first = Int(rankings[papers[index].start])
            piles[first].append(index)
            totals[first] += papers[index].value * papers[index].weight
        }
        endStage(.firstCount, ties: [])
        while elected.count < seats {
            let continuing = status.indices.filter { status[$0] == .continuing }
            if continuing.count <= seats - elected.count {
                if !continuing.isEmpty {
                    let order = electionOrder(continuing)
                    for option in order { status[option] = .elected }
                    elected += order
                    record(.electedByRemaining(order), electedNow: order, ties: [])
                }
                return
            }
            let surpluses = elected.filter { !surplusDone[$0] && totals[$0] > quota.units }
            if !surpluses.isEmpty {
                let (option, ties) = choose(among: surpluses, kind: .surplusOrder)
                let surplus = Votes(units: totals[option] - quota.units)
                transferSurplus(of: option)
                endStage(.surplusTransferred(option: option, surplus: surplus), ties: ties)
            } else {
                let (option, ties) = choose(among: continuing, kind: .exclusion)
                let votes = Votes(units: totals[option])
                exclude(option)
                endStage(.excluded(option: option, votes: votes), ties: ties)
            }
        }
    }

    /// Rule 47: elects every continuing option at or over the quota, then records the stage.
    mutating func endStage(_ action: STVAction, ties: [STVTie]) {
        let reached = electionOrder(status.indices.filter { status[$0] == .continuing && totals[$0] >= quota.units })
        for option in reached { status[option] = .elected }
        elected += reached
        record(action, electedNow: reached, ties: ties)
    }

    /// Appends the stage that `action` ended, with the totals as they stand.
    mutating func record(_ action: STVAction, electedNow: [Int], ties: [STVTie]) {
        stages.append(
            STVStage(
                number: stages.count + 1, action: action, totals: totals.map(Votes.init(units:)),
                continuing: status.indices.filter { status[$0] == .continuing }, elected: electedNow,
                nonTransferable: Votes(units: nonTransferable), lossFromTruncation: Votes(units: loss), ties: ties))
    }

    /// Options elected together: most votes first, then lowest index (presentation only).
    func electionOrder(_ options: [Int]) -> [Int] {
        options.sorted { totals[$0] != totals[$1] ? totals[$0] > totals[$1] : $0 < $1 }
    }

    /// Moves paper `index` to its next continuing preference; `nil` when it has none (non-transferable).
    mutating func advance(_ index: Int) -> Int? {
        var position = papers[index].position + 1
        let end = papers[index].end
        while position < end {
            let option = Int(rankings[position])
            if status[option] == .continuing {
                papers[index].position = position
                return option
            }
            position += 1
        }
        papers[index].position = end
        return nil
    }

    /// Rule 48: every paper of `option` moves on at ⌊surplus × value / total⌋ units per paper.
    mutating func transferSurplus(of option: Int) {
        let total = totals[option]
        let surplus = total - quota.units
        var moved: UInt64 = 0
        for index in piles[option] {
            let product = surplus.multipliedFullWidth(by: papers[index].value)
            let transferValue = total.dividingFullWidth(product).quotient
            let amount = transferValue * papers[index].weight
            papers[index].value = transferValue
            moved += amount
            if let next = advance(index) {
                piles[next].append(index)
                totals[next] += amount
            } else {
                nonTransferable += amount
            }
        }
        loss += surplus - moved
        piles[option] = []
        totals[option] = quota.units
        surplusDone[option] = true
    }

    /// Rule 50: `option` is excluded; every paper it holds moves on at its current value.
    mutating func exclude(_ option: Int) {
        status[option] = .excluded
        for index in piles[option] {
            let amount = papers[index].value * papers[index].weight
            if let next = advance(index) {
                piles[next].append(index)
                totals[next] += amount
            } else {
                nonTransferable += amount
            }
        }
        piles[option] = []
        totals[option] = 0
    }

    /// Rules 49 and 51: the option with the largest surplus (or the fewest votes) among `candidates`; equal ones
    /// are narrowed by the earlier stages, most recent first, and what stays equal is drawn by lot.
    mutating func choose(among candidates: [Int], kind: STVTie.Kind) -> (Int, [STVTie]) {
        let most = kind == .surplusOrder
        let extreme = most ? candidates.map { totals[$0] }.max()! : candidates.map { totals[$0] }.min()!
        var tied = candidates.filter { totals[$0] == extreme }.sorted()
        guard tied.count > 1 else { return (tied[0], []) }
        let original = tied
        for stage in stages.dropLast().reversed() {
            let values = tied.map { stage.totals[$0].units }
            let best = most ? values.max()! : values.min()!
            let narrowed = tied.filter { stage.totals[$0].units == best }
            if narrowed.count == 1 {
                let decision = STVTie.Decision.lookingBack(stage: stage.number)
                return (narrowed[0], [STVTie(kind: kind, tied: original, chosen: narrowed[0], decision: decision)])
            }
            tied = narrowed
        }
        let chosen = lot.draw(among: tied, question: question, draw: drawsMade)
        let tie = STVTie(kind: kind, tied: original, chosen: chosen, decision: .lot(draw: drawsMade, among: tied))
        drawsMade += 1
        return (chosen, [tie])
    }
}
