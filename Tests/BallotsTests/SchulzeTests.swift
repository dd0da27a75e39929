import Ballots
import LedgerCrypto
import TestSupport
import Testing

/// The Schulze method (winning votes) on published and hand-computed examples.
@Suite struct SchulzeTests {
    let lot = testLot()

    /// Wikipedia, "Schulze method", the example with 45 voters and options A–E (A 0 … E 4): both matrices as the
    /// article prints them, E wins, and the order is E > A > C > B > D.
    @Test func wikipediaExample() {
        let ballots = [
            ballot([0, 2, 1, 4, 3], 5), ballot([0, 3, 4, 2, 1], 5), ballot([1, 4, 3, 0, 2], 8),
            ballot([2, 0, 1, 4, 3], 3), ballot([2, 0, 4, 1, 3], 7), ballot([2, 1, 0, 3, 4], 2),
            ballot([3, 2, 4, 1, 0], 7), ballot([4, 1, 0, 3, 2], 8),
        ]
        let result = SchulzeCount.count(ballots, options: 5, lot: lot, question: 0)
        #expect(
            result.preferences == [
                [0, 20, 26, 30, 22], [25, 0, 16, 33, 18], [19, 29, 0, 17, 24], [15, 12, 28, 0, 14],
                [23, 27, 21, 31, 0],
            ])
        #expect(
            result.strongestPaths == [
                [0, 28, 28, 30, 24], [25, 0, 28, 33, 24], [25, 29, 0, 29, 24], [25, 28, 28, 0, 24],
                [25, 28, 28, 31, 0],
            ])
        #expect(result.winners == [4])
        #expect(result.order == [4, 0, 2, 1, 3])
        #expect(result.ties.isEmpty)
        #expect(result.elected(seats: 2) == [4, 0])
        #expect(SchulzeCount.count(copies(ballots), options: 5, lot: lot, question: 0) == result)
    }

    /// Wikipedia's Tennessee capital example (see `STVTests.instantRunoffTennessee`): Nashville is the Condorcet
    /// winner, then Chattanooga, Knoxville, Memphis.
    @Test func tennessee() {
        let ballots = [
            ballot([0, 1, 2, 3], 42), ballot([1, 2, 3, 0], 26), ballot([2, 3, 1, 0], 15), ballot([3, 2, 1, 0], 17),
        ]
        let result = SchulzeCount.count(ballots, options: 4, lot: lot, question: 0)
        #expect(result.winners == [1])
        #expect(result.order == [1, 2, 3, 0])
    }

    /// Hand-computed, partial rankings: 3 × [C], 2 × [B, C, A], 4 × [A, B]. A ranked option is above the
    /// unranked ones, so d: A>B 4, B>A 2, B>C 6, C>B 3, C>A 5, A>C 4 — a cycle A → B (4), B → C (6), C → A (5).
    /// With winning votes B wins (p[B][A] = 5 > p[A][B] = 4); margins (2, 3, 1) would make A the winner instead.
    @Test func partialRankingsAndWinningVotes() {
        let ballots = [ballot([2], 1), ballot([1, 2, 0], 2), ballot([0, 1], 4), ballot([2], 2)]
        let result = SchulzeCount.count(ballots, options: 3, lot: lot, question: 0)
        #expect(result.preferences == [[0, 4, 4], [2, 0, 6], [5, 3, 0]])
        #expect(result.strongestPaths == [[0, 4, 4], [5, 0, 6], [5, 4, 0]])
        #expect(result.winners == [1])
        #expect(result.order == [1, 2, 0])
    }

    /// Two unranked options are tied on a ballot; with nothing between them the lot orders them, and the result
    /// says so. An option no ballot ranks comes last.
    @Test func tiesAreOrderedByLot() {
        let ballots = [ballot([0]), ballot([1]), ballot([])]
        let result = SchulzeCount.count(ballots, options: 3, lot: lot, question: 3)
        #expect(result.preferences == [[0, 1, 1], [1, 0, 1], [0, 0, 0]])
        #expect(result.winners == [0, 1])
        let drawn = lot.order([0, 1], question: 3, draw: 0)
        #expect(result.ties == [SchulzeTie(tied: [0, 1], order: drawn, draw: 0, position: 0)])
        #expect(result.order == drawn + [2])
        #expect(result.elected(seats: 1) == [drawn[0]])
    }

    /// Hand-computed: [A, B, C, D] and [B, A, D, C] tie A with B and C with D; each group is ordered by its own
    /// draw, numbered in the order the groups are taken.
    @Test func eachTieGetsTheNextDraw() {
        let result = SchulzeCount.count(
            [ballot([0, 1, 2, 3]), ballot([1, 0, 3, 2])], options: 4, lot: lot, question: 1)
        #expect(result.winners == [0, 1])
        let first = lot.order([0, 1], question: 1, draw: 0)
        let second = lot.order([2, 3], question: 1, draw: 1)
        #expect(
            result.ties == [
                SchulzeTie(tied: [0, 1], order: first, draw: 0, position: 0),
                SchulzeTie(tied: [2, 3], order: second, draw: 1, position: 2),
            ])
        #expect(result.order == first + second)
    }

    /// A ballot of weight w counts as w ballots, on random profiles; and the order never puts an option after one
    /// it beats.
    @Test func weightsAndTheOrderOnRandomProfiles() {
        var random = SplitMix64(seed: 0x5C8)
        for _ in 0..<200 {
            let profile = randomProfile(&random, options: 1...7, ballots: 1...40, seats: 1...1, maxWeight: 5)
            let result = SchulzeCount.count(profile.ballots, options: profile.options, lot: lot, question: 0)
            #expect(
                SchulzeCount.count(copies(profile.ballots), options: profile.options, lot: lot, question: 0)
                    == result)
            let p = result.strongestPaths
            for (place, a) in result.order.enumerated() {
                for b in result.order[(place + 1)...] { #expect(p[b][a] <= p[a][b]) }
            }
            #expect(Set(result.order) == Set(0..<profile.options))
            #expect(result.winners == result.order.prefix(result.winners.count).sorted())
        }
    }
}
