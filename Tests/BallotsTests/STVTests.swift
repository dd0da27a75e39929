import Ballots
import LedgerCrypto
import TestSupport
import Testing

/// Scottish STV (SSI 2007/42, Schedule 1 rules 45–52) on counts worked by hand from the rules' text, each stage's
/// totals written out as a count sheet would show them.
@Suite struct STVTests {
    let lot = testLot()

    /// The worked example of FORMAT.md (computed by hand): a surplus at 4/11 truncated to 0.36363, an exclusion,
    /// papers exhausted both in the surplus and in the exclusions.
    /// Options A 0, B 1, C 2, D 3; 2 seats; 20 valid votes (and a blank one, not valid); quota ⌊20/3⌋ + 1 = 7.
    static let worked = [
        ballot([0, 1], 6), ballot([0, 2], 3), ballot([0], 2), ballot([1], 3), ballot([2, 1]), ballot([2], 3),
        ballot([3, 1]), ballot([3]), ballot([], 4),
    ]

    @Test func surplusAtATruncatedValueThenExclusions() throws {
        let result = STVCount.count(Self.worked, options: 4, seats: 2, lot: lot, question: 0)
        #expect(result.validVote == votes("20"))
        #expect(result.quota == votes("7"))
        #expect(result.elected == [0, 1])
        let surplus = STVAction.surplusTransferred(option: 0, surplus: votes("4"))
        let expected: [(STVAction, [String], [Int], String, String)] = [
            (.firstCount, ["11", "3", "4", "2"], [0], "0", "0"),
            // 4 × 1 / 11 = 0.363636… → 0.36363 a paper: B + 6 × 0.36363, C + 3 × 0.36363, 2 papers exhausted.
            (surplus, ["7", "5.18178", "5.09089", "2"], [], "0.72726", "0.00007"),
            (.excluded(option: 3, votes: votes("2")), ["7", "6.18178", "5.09089", "0"], [], "1.72726", "0.00007"),
            // C's own 4 papers at 1 (one to B, three exhausted) and the 3 from A at 0.36363 (exhausted).
            (.excluded(option: 2, votes: votes("5.09089")), ["7", "7.18178", "0", "0"], [1], "5.81815", "0.00007"),
        ]
        try #require(result.stages.count == expected.count)
        for (stage, (action, totals, elected, exhausted, loss)) in zip(result.stages, expected) {
            #expect(stage.action == action)
            #expect(stage.totals == totals.map(votes))
            #expect(stage.elected == elected)
            #expect(stage.nonTransferable == votes(exhausted))
            #expect(stage.lossFromTruncation == votes(loss))
            #expect(stage.ties.isEmpty)
        }
        #expect(result.stages.map(\.number) == [1, 2, 3, 4])
        #expect(result.stages[3].continuing == [])
        #expect(result.drawsMade == 0)
        // A weighted ballot is that many papers: the same count from single ballots.
        #expect(STVCount.count(copies(Self.worked), options: 4, seats: 2, lot: lot, question: 0) == result)
    }

    /// Hand-computed: a surplus made partly of papers received at a transfer value moves them at
    /// ⌊surplus × their value / total⌋ (rule 48(3)–(4), the value "when received by that candidate").
    /// Options A–E; 3 seats; 30 votes; quota ⌊30/4⌋ + 1 = 8.
    @Test func aSurplusOfTransferredPapersUsesTheirValue() throws {
        let ballots = [ballot([0, 1, 2], 11), ballot([1, 2], 6), ballot([2], 5), ballot([3], 3), ballot([4, 2], 5)]
        let result = STVCount.count(ballots, options: 5, seats: 3, lot: lot, question: 0)
        #expect(result.quota == votes("8"))
        #expect(result.elected == [0, 1, 2])
        try #require(
            result.stages.map(\.action) == [
                .firstCount, .surplusTransferred(option: 0, surplus: votes("3")),
                .surplusTransferred(option: 1, surplus: votes("0.99992")), .excluded(option: 3, votes: votes("3")),
                .excluded(option: 4, votes: votes("5")),
            ])
        // A's papers: 3 / 11 → 0.27272 each, 11 × 0.27272 = 2.99992 to B, who reaches 8.99992.
        #expect(result.stages[1].totals == ["8", "8.99992", "5", "3", "5"].map(votes))
        #expect(result.stages[1].elected == [1])
        // B's surplus 0.99992 of 8.99992: B's own 6 papers at ⌊0.99992 × 1 / 8.99992⌋ = 0.11110 and A's 11 at
        // ⌊0.99992 × 0.27272 / 8.99992⌋ = 0.03030, so C gets 0.66660 + 0.33330.
        #expect(result.stages[2].totals == ["8", "8", "5.99990", "3", "5"].map(votes))
        #expect(result.stages[2].lossFromTruncation == votes("0.00010"))
        #expect(result.stages[4].totals == ["8", "8", "10.99990", "0", "0"].map(votes))
        #expect(result.stages[4].nonTransferable == votes("3"))
    }

    /// Hand-computed: B and C are equal lowest at stage 3; at stage 1, the most recent stage where they differ,
    /// C had fewer, so C is excluded (rule 51(2)(a)), and that decides the seat. One seat, quota ⌊13/2⌋ + 1 = 7.
    @Test func aTieDecidedByLookingBack() throws {
        let ballots = [ballot([0], 5), ballot([1, 2], 4), ballot([2, 0], 3), ballot([3, 2, 0])]
        let result = STVCount.instantRunoff(ballots, options: 4, lot: lot, question: 0)
        try #require(
            result.stages.map(\.action) == [
                .firstCount, .excluded(option: 3, votes: votes("1")), .excluded(option: 2, votes: votes("4")),
            ])
        #expect(result.stages[1].totals == ["5", "4", "4", "0"].map(votes))
        #expect(
            result.stages[2].ties == [
                STVTie(kind: .exclusion, tied: [1, 2], chosen: 2, decision: .lookingBack(stage: 1))
            ])
        #expect(result.stages[2].totals == ["9", "4", "0", "0"].map(votes))
        #expect(result.elected == [0])
        #expect(result.drawsMade == 0)
    }

    /// Hand-computed: B and C are equal at every stage, so the lot excludes one (rule 51(2)(b)) and the other
    /// takes the seat with its papers. The drawn option is the one `Lot` picks; another seed can pick the other.
    @Test func aTieDecidedByLot() throws {
        let ballots = [ballot([0], 3), ballot([1, 2], 2), ballot([2, 1], 2)]
        func winner(_ lot: Lot) throws -> (excluded: Int, elected: [Int]) {
            let result = STVCount.instantRunoff(ballots, options: 3, lot: lot, question: 4)
            try #require(result.stages.count == 2)
            let excluded = lot.draw(among: [1, 2], question: 4, draw: 0)
            #expect(
                result.stages[1].ties == [
                    STVTie(kind: .exclusion, tied: [1, 2], chosen: excluded, decision: .lot(draw: 0, among: [1, 2]))
                ])
            #expect(result.stages[1].action == .excluded(option: excluded, votes: votes("2")))
            #expect(result.drawsMade == 1)
            return (excluded, result.elected)
        }
        let first = try winner(lot)
        #expect(first.elected == [3 - first.excluded])
        let seeds = (0..<64).lazy.map { testLot("seed \($0)") }
        let other = try #require(seeds.first { $0.draw(among: [1, 2], question: 4, draw: 0) != first.excluded })
        let second = try winner(other)
        #expect(second.excluded != first.excluded)
        #expect(second.elected == [3 - second.excluded])
    }

    /// Hand-computed: four options of one vote each and one seat: three draws, numbered 0, 1, 2 within the count,
    /// each among the options still equal (equal at every earlier stage too), then the last one is elected by
    /// rule 52.
    @Test func drawsAreNumberedWithinTheCount() throws {
        let ballots = [ballot([0]), ballot([1]), ballot([2]), ballot([3])]
        let result = STVCount.instantRunoff(ballots, options: 4, lot: lot, question: 2)
        try #require(result.stages.count == 5)
        var left = [0, 1, 2, 3]
        for draw in 0..<3 {
            let excluded = lot.draw(among: left, question: 2, draw: draw)
            #expect(
                result.stages[draw + 1].ties == [
                    STVTie(kind: .exclusion, tied: left, chosen: excluded, decision: .lot(draw: draw, among: left))
                ])
            left.removeAll { $0 == excluded }
        }
        #expect(result.stages.last?.action == .electedByRemaining(left))
        #expect(result.elected == left)
        #expect(result.stages.last?.nonTransferable == votes("3"))
        #expect(result.drawsMade == 3)
    }

    /// Wikipedia, "Instant-runoff voting", the Tennessee capital example (42 Memphis, 26 Nashville,
    /// 15 Chattanooga, 17 Knoxville): Chattanooga then Nashville are excluded and Knoxville wins with 58.
    @Test func instantRunoffTennessee() throws {
        let ballots = [
            ballot([0, 1, 2, 3], 42), ballot([1, 2, 3, 0], 26), ballot([2, 3, 1, 0], 15), ballot([3, 2, 1, 0], 17),
        ]
        let result = STVCount.instantRunoff(ballots, options: 4, lot: lot, question: 0)
        #expect(result.quota == votes("51"))
        try #require(
            result.stages.map(\.action) == [
                .firstCount, .excluded(option: 2, votes: votes("15")), .excluded(option: 1, votes: votes("26")),
            ])
        let totals = [["42", "26", "15", "17"], ["42", "26", "0", "32"], ["42", "0", "0", "58"]]
        #expect(result.stages.map(\.totals) == totals.map { $0.map(votes) })
        #expect(result.elected == [3])
    }

    /// Hand-computed: A reaches the quota only when C is excluded, and then B alone continues for the one seat
    /// left: B is elected by rule 52 and A's surplus is never transferred (rule 52(2)). 2 seats, quota 11.
    @Test func lastVacancyFilledWithoutTransfer() throws {
        let ballots = [ballot([0], 9), ballot([1], 8), ballot([2, 0], 7), ballot([3], 6)]
        let result = STVCount.count(ballots, options: 4, seats: 2, lot: lot, question: 0)
        try #require(
            result.stages.map(\.action) == [
                .firstCount, .excluded(option: 3, votes: votes("6")), .excluded(option: 2, votes: votes("7")),
                .electedByRemaining([1]),
            ])
        #expect(result.stages[2].elected == [0])
        #expect(result.stages[3].totals == ["16", "8", "0", "0"].map(votes))
        #expect(result.elected == [0, 1])
    }

    /// Hand-computed: both seats are filled at the first count, so neither surplus is transferred (rule 48(1)).
    @Test func noSurplusIsTransferredOnceTheSeatsAreFilled() throws {
        let ballots = [ballot([0, 2], 8), ballot([1, 2], 7), ballot([2])]
        let result = STVCount.count(ballots, options: 3, seats: 2, lot: lot, question: 0)
        #expect(result.quota == votes("6"))
        try #require(result.stages.count == 1)
        #expect(result.elected == [0, 1])
        #expect(result.stages[0].totals == ["8", "7", "1"].map(votes))
    }

    /// Hand-computed: excluding E lifts A and B to 10 each, so their surpluses are equal; A had more at stage 1,
    /// the most recent stage where they differed, so A's goes first (rule 49(2)). 3 seats, quota ⌊33/4⌋ + 1 = 9.
    @Test func equalSurplusesAreOrderedByLookingBack() throws {
        let ballots = [
            ballot([0, 2], 8), ballot([1], 7), ballot([2], 6), ballot([3], 7), ballot([4, 0], 2), ballot([4, 1], 3),
        ]
        let result = STVCount.count(ballots, options: 5, seats: 3, lot: lot, question: 0)
        #expect(result.quota == votes("9"))
        try #require(
            result.stages.map(\.action) == [
                .firstCount, .excluded(option: 4, votes: votes("5")),
                .surplusTransferred(option: 0, surplus: votes("1")),
                .surplusTransferred(option: 1, surplus: votes("1")),
                .excluded(option: 2, votes: votes("6.8")), .electedByRemaining([3]),
            ])
        #expect(result.stages[1].elected == [0, 1])
        #expect(
            result.stages[2].ties == [
                STVTie(kind: .surplusOrder, tied: [0, 1], chosen: 0, decision: .lookingBack(stage: 1))
            ])
        // A's 10 papers at 1 / 10: eight to C, two exhausted.
        #expect(result.stages[2].totals == ["9", "10", "6.8", "7", "0"].map(votes))
        #expect(result.stages[2].nonTransferable == votes("0.2"))
        #expect(result.stages[3].nonTransferable == votes("1.2"))
        #expect(result.elected == [0, 1, 3])
    }

    @Test func fewerOptionsThanSeatsElectsThemAll() {
        let result = STVCount.count([ballot([1])], options: 2, seats: 3, lot: lot, question: 0)
        #expect(Set(result.elected) == [0, 1])
        let none = STVCount.count([ballot([])], options: 0, seats: 1, lot: lot, question: 0)
        #expect(none.elected.isEmpty && none.validVote == .zero && none.quota == votes("1"))
    }

    /// Every stage accounts for every valid vote: the options' totals, the non-transferable papers and the loss
    /// from truncation add up to the valid vote; the seats are filled by distinct options.
    @Test func everyStageAccountsForTheValidVote() {
        var random = SplitMix64(seed: 0x5C07)
        for _ in 0..<300 {
            let profile = randomProfile(&random, options: 2...8, ballots: 1...80, seats: 1...4, maxWeight: 5)
            let result = STVCount.count(
                profile.ballots, options: profile.options, seats: profile.seats, lot: lot, question: 0)
            for stage in result.stages {
                let accounted = stage.totals.reduce(stage.nonTransferable + stage.lossFromTruncation) { $0 + $1 }
                #expect(accounted == result.validVote)
            }
            #expect(result.elected.count == min(profile.seats, profile.options))
            #expect(Set(result.elected).count == result.elected.count)
        }
    }

    /// A ballot of weight w counts exactly as w ballots of weight 1, on random profiles: the same elected options,
    /// the same stages, to the last unit.
    @Test func aWeightCountsAsThatManyBallots() {
        var random = SplitMix64(seed: 0xBA11_07)
        for _ in 0..<200 {
            let profile = randomProfile(&random, options: 2...7, ballots: 1...40, seats: 1...3, maxWeight: 6)
            let weighted = STVCount.count(
                profile.ballots, options: profile.options, seats: profile.seats, lot: lot, question: 1)
            var single = copies(profile.ballots)
            single.shuffle(using: &random)
            let expanded = STVCount.count(
                single, options: profile.options, seats: profile.seats, lot: lot, question: 1)
            #expect(weighted == expanded)
        }
    }
}
