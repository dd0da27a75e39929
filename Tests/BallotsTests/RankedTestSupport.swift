import Ballots
import LedgerCrypto
import TestSupport

// What the ranked-count tests share: a lot, vote amounts written as decimals, and seeded random profiles.

/// A lot keyed by the digest of `text`.
func testLot(_ text: String = "the place's ballots") -> Lot {
    Lot(seed: SHA256.hash(Array(text.utf8)))
}

/// `text` ("5.18178", "7") as votes; the tests write expected totals the way a count sheet shows them.
func votes(_ text: String) -> Votes {
    let parts = text.split(separator: ".", omittingEmptySubsequences: false)
    let fraction = parts.count > 1 ? String(parts[1]) : ""
    precondition(parts.count <= 2 && fraction.count <= 5, "at most five decimals")
    let whole = UInt64(parts[0])!
    let padded = fraction + String(repeating: "0", count: 5 - fraction.count)
    return Votes(units: whole * Votes.unitsPerVote + UInt64(padded)!)
}

/// `weight` ballots ranking `ranking`, as one weighted ballot.
func ballot(_ ranking: [Int], _ weight: UInt64 = 1) -> RankedBallot {
    RankedBallot(ranking: ranking, weight: weight)
}

/// Every weighted ballot as that many ballots of weight 1.
func copies(_ ballots: [RankedBallot]) -> [RankedBallot] {
    ballots.flatMap { Array(repeating: RankedBallot(ranking: $0.ranking), count: Int($0.weight)) }
}

/// A random election: its options, seats and ballots.
struct RankedProfile {
    var options: Int
    var seats: Int
    var ballots: [RankedBallot]
}

/// A profile of `options` options and `ballotCount` ballots of weight `1...maxWeight`. Each option gets a
/// popularity and each ranking is drawn option by option in proportion to it (Plackett–Luce), so totals rarely
/// tie; rankings are complete or cut short at random, and about one in forty is blank.
func randomProfile(
    _ random: inout SplitMix64, options: ClosedRange<Int>, ballots: ClosedRange<Int>, seats: ClosedRange<Int>,
    maxWeight: Int = 1
) -> RankedProfile {
    let optionCount = random.int(options)
    let popularity = (0..<optionCount).map { _ in random.int(1...40) }
    var made: [RankedBallot] = []
    for _ in 0..<random.int(ballots) {
        let length = random.int(0...39) == 0 ? 0 : random.int(0...2) == 0 ? optionCount : random.int(1...optionCount)
        var left = Array(0..<optionCount)
        var ranking: [Int] = []
        while ranking.count < length {
            var pick = random.int(0...left.map { popularity[$0] }.reduce(0, +) - 1)
            var index = 0
            while pick >= popularity[left[index]] {
                pick -= popularity[left[index]]
                index += 1
            }
            ranking.append(left.remove(at: index))
        }
        made.append(RankedBallot(ranking: ranking, weight: UInt64(random.int(1...maxWeight))))
    }
    return RankedProfile(options: optionCount, seats: min(random.int(seats), optionCount), ballots: made)
}
