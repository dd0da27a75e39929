/// The Schulze method (Schulze, "A new monotonic, clone-independent, reversal symmetric, and Condorcet-consistent
/// single-winner election method", Social Choice and Welfare 36, 2011) over weighted, possibly partial rankings.
///
/// - `d[a][b]` is the summed weight of the ballots that rank `a` above `b`. A ranked option is above every
///   unranked one; two unranked options are tied (the ballot adds to neither `d[a][b]` nor `d[b][a]`).
/// - Strength is **winning votes**: the link `a → b` exists when `d[a][b] > d[b][a]` and has strength `d[a][b]`.
///   `p[a][b]` is the strength of the strongest path (the weakest link of the best chain), 0 when there is none.
///   (pref_voting's `beat_path` defaults to margins, `d[a][b] − d[b][a]`, which differ on partial rankings;
///   `beat_path(profile, strength_function=profile.support)` on a `ProfileWithTies` after
///   `use_extended_strict_preference()` is this rule.)
/// - `a` beats `b` when `p[a][b] > p[b][a]`; the winners are the options no option beats.
/// - The order (Schulze's ranking) puts `a` before `b` whenever `a` beats `b`. It is built by taking, again and
///   again, the options no remaining option beats; when several are taken at once they are ordered by
///   `Lot.order(_:question:draw:)`, `draw` counting those orderings from 0, and reported as a tie.
/// - With S seats, the elected are the first S of the order (`SchulzeResult.elected(seats:)`).
public enum SchulzeCount {
    /// Counts `ballots` over `options` options (indexes `0..<options`); `lot` and `question` (the question's index
    /// on the ballot) order the options the method leaves tied. Rankings must name options in range, once each.
    public static func count(_ ballots: [RankedBallot], options: Int, lot: Lot, question: Int) -> SchulzeResult {
        precondition(options >= 0, "a count needs a number of options")
        var d = Array(repeating: Array(repeating: UInt64(0), count: options), count: options)
        for ballot in ballots where !ballot.ranking.isEmpty {
            var ranked = Array(repeating: false, count: options)
            for option in ballot.ranking {
                precondition(
                    (0..<options).contains(option) && !ranked[option], "a ranking names an unknown option or one twice")
                ranked[option] = true
            }
            for (place, above) in ballot.ranking.enumerated() {
                for below in ballot.ranking[(place + 1)...] { d[above][below] += ballot.weight }
                for below in 0..<options where !ranked[below] { d[above][below] += ballot.weight }
            }
        }
        var p = Array(repeating: Array(repeating: UInt64(0), count: options), count: options)
        for a in 0..<options {
            for b in 0..<options where a != b && d[a][b] > d[b][a] { p[a][b] = d[a][b] }
        }
        for via in 0..<options {
            for a in 0..<options where a != via {
                for b in 0..<options where b != a && b != via {
                    p[a][b] = max(p[a][b], min(p[a][via], p[via][b]))
                }
            }
        }
        let beats = { (a: Int, b: Int) in p[a][b] > p[b][a] }
        var remaining = Array(0..<options)
        var order: [Int] = []
        var ties: [SchulzeTie] = []
        var winners: [Int]?
        while !remaining.isEmpty {
            let unbeaten = remaining.filter { a in !remaining.contains { beats($0, a) } }
            winners = winners ?? unbeaten
            if unbeaten.count == 1 {
                order += unbeaten
            } else {
                let drawn = lot.order(unbeaten, question: question, draw: ties.count)
                ties.append(SchulzeTie(tied: unbeaten, order: drawn, draw: ties.count, position: order.count))
                order += drawn
            }
            remaining.removeAll { unbeaten.contains($0) }
        }
        return SchulzeResult(preferences: d, strongestPaths: p, winners: winners ?? [], order: order, ties: ties)
    }
}

/// A finished Schulze count: both matrices, the winners, the full order and the ties the lot ordered.
public struct SchulzeResult: Sendable, Equatable {
    /// `preferences[a][b]`: the summed weight of ballots ranking `a` above `b` (`d`).
    public var preferences: [[UInt64]]
    /// `strongestPaths[a][b]`: the winning-votes strength of the strongest path from `a` to `b` (`p`).
    public var strongestPaths: [[UInt64]]
    /// The options no option beats, ascending (several when the method itself ties them).
    public var winners: [Int]
    /// Every option, by Schulze's ranking with its ties ordered by lot.
    public var order: [Int]
    /// Each group of options the method left tied, as ordered by lot.
    public var ties: [SchulzeTie]

    /// The first `seats` options of the order: how Schulze fills several seats here.
    public func elected(seats: Int) -> [Int] {
        Array(order.prefix(seats))
    }
}

/// Options Schulze's ranking leaves tied where the order takes them, ordered by lot.
public struct SchulzeTie: Sendable, Equatable {
    /// The tied options, ascending.
    public var tied: [Int]
    /// Their order by `Lot.order`, first drawn first.
    public var order: [Int]
    /// The draw number given to `Lot.order`.
    public var draw: Int
    /// Where the group starts in the full order (0 for a tie among the winners).
    public var position: Int

    /// `tied`, ordered `order` by draw `draw`, starting at `position` of the full order.
    public init(tied: [Int], order: [Int], draw: Int, position: Int) {
        self.tied = tied
        self.order = order
        self.draw = draw
        self.position = position
    }
}
