import Ballots
import LedgerCrypto
import TestSupport
import Testing

/// What a ballot's questions accept and how *choose* and *yes/no* questions count, worked by hand.
@Suite struct QuestionTests {
    let lot = Lot(seed: SHA256.hash(Array("the place's ballots".utf8)))
    let board = Question(
        title: "Elect three members of the board", options: ["Ana", "Ben", "Chloé", "Dev", "Eun", "Femi", "Gus"],
        method: .choose(min: 1, max: 3, seats: 3), blankAllowed: true)
    let bylaws = Question(
        title: "Adopt the new bylaws?", options: [],
        method: .yesNo(threshold: .ofYesAndNo(Fraction(2, 3)), quorum: Fraction(1, 4)), blankAllowed: false)

    @Test func answersAreCheckedAgainstTheirQuestion() {
        #expect(board.violation(of: .options([0, 2, 6])) == nil)
        #expect(board.violation(of: .blank) == nil)
        #expect(board.violation(of: .options([0, 1, 2, 3])) == .tooManyOptions(maximum: 3))
        #expect(board.violation(of: .options([])) == .tooFewOptions(minimum: 1))
        #expect(board.violation(of: .options([2, 2])) == .repeatedOption)
        #expect(board.violation(of: .options([2, 0])) == .optionsOutOfOrder)
        #expect(board.violation(of: .options([7])) == .unknownOption)
        #expect(board.violation(of: .options([-1])) == .unknownOption)
        #expect(bylaws.violation(of: .blank) == .blankNotAllowed)
        #expect(bylaws.violation(of: .options([YesNo.abstain.rawValue])) == nil)
        #expect(bylaws.violation(of: .options([3])) == .unknownOption)
        #expect(bylaws.violation(of: .options([0, 1])) == .tooManyOptions(maximum: 1))
        let chair = Question(
            title: "Rank the candidates for chair", options: ["Ana", "Ben", "Chloé"],
            method: .rank(seats: 1, rule: .scottishSTV), blankAllowed: false)
        #expect(chair.violation(of: .options([2, 0])) == nil)
        #expect(chair.violation(of: .options([2, 0, 2])) == .repeatedOption)
        let ballot = Ballot(questions: [board, bylaws, chair])
        #expect(ballot.violation(of: [.blank, .options([0]), .options([1])]) == nil)
        #expect(ballot.violation(of: [.blank, .options([0])])?.violation == .wrongNumberOfAnswers(expected: 3))
        #expect(ballot.violation(of: [.blank, .blank, .options([1])])! == (1, .blankNotAllowed))
    }

    @Test func malformedBallotsAreRefused() {
        #expect(Ballot(questions: [board, bylaws]).violation == nil)
        #expect(Ballot(questions: []).violation == .questionCount)
        var question = board
        question.method = .choose(min: 2, max: 1, seats: 1)
        #expect(Ballot(questions: [question]).violation == .selectionLimits(question: 0))
        question.method = .choose(min: 1, max: 8, seats: 1)
        #expect(Ballot(questions: [bylaws, question]).violation == .selectionLimits(question: 1))
        question.method = .choose(min: 1, max: 3, seats: 0)
        #expect(Ballot(questions: [question]).violation == .seats(question: 0))
        var motion = bylaws
        motion.method = .yesNo(threshold: .ofBallots(Fraction(3, 2)), quorum: nil)
        #expect(Ballot(questions: [motion]).violation == .fraction(question: 0))
        motion.method = .yesNo(threshold: .moreYesThanNo, quorum: Fraction(0, 4))
        #expect(Ballot(questions: [motion]).violation == .fraction(question: 0))
        motion.options = ["yes"]
        #expect(Ballot(questions: [motion]).violation == .optionCount(question: 0))
        let ranked = Question(
            title: "Chair", options: ["Ana", "Ben"], method: .rank(seats: 2, rule: .schulze), blankAllowed: false)
        #expect(Ballot(questions: [ranked]).violation == .seats(question: 0))
    }

    @Test func threeOfSevenElectsTheMostWeightAndCountsBlanksApart() {
        let answers = [
            CastAnswer(.options([0, 1, 2])), CastAnswer(.options([0, 3, 4])), CastAnswer(.options([0, 1, 5])),
            CastAnswer(.options([1, 6])), CastAnswer(.blank), CastAnswer(.options([3]), weight: 120),
        ]
        let count = board.count(answers, electorate: Weighed(members: 10, weight: 129), lot: lot, index: 0)
        #expect(count.elected == [3, 0, 1])
        #expect(count.options[3] == Weighed(members: 2, weight: 121))
        #expect(count.options[0] == Weighed(members: 3, weight: 3))
        #expect(count.blank == Weighed(members: 1, weight: 1))
        #expect(count.ballots == Weighed(members: 6, weight: 125))
        #expect(count.draws.isEmpty)
    }

    @Test func aTieAcrossTheLastSeatIsDrawnByTheLot() {
        let plurality = Question(
            title: "Treasurer", options: ["Ana", "Ben", "Chloé"], method: .choose(min: 1, max: 1, seats: 1),
            blankAllowed: false)
        let answers = [CastAnswer(.options([0])), CastAnswer(.options([2])), CastAnswer(.options([1]))]
        let count = plurality.count(answers, electorate: Weighed(members: 3, weight: 3), lot: lot, index: 4)
        let drawn = lot.draw(among: [0, 1, 2], question: 4, draw: 0)
        #expect(count.elected == [drawn])
        #expect(count.draws == [Draw(number: 0, among: [0, 1, 2], drawn: [drawn])])
        // The draw follows the ballots: under other seeds every option is drawn some time.
        let winners = Set(
            (0..<64).map { seed in
                plurality.count(
                    answers, electorate: Weighed(members: 3, weight: 3),
                    lot: Lot(seed: SHA256.hash([UInt8(seed)])), index: 4
                ).elected[0]
            })
        #expect(winners == [0, 1, 2])
    }

    @Test func aTwoThirdsMotionNeedsItsThresholdAndItsQuorum() {
        func count(yes: Int, no: Int, abstain: Int, electorate: UInt64) -> QuestionCount {
            let answers =
                Array(repeating: CastAnswer(.options([YesNo.yes.rawValue])), count: yes)
                + Array(repeating: CastAnswer(.options([YesNo.no.rawValue])), count: no)
                + Array(repeating: CastAnswer(.options([YesNo.abstain.rawValue])), count: abstain)
            return bylaws.count(
                answers, electorate: Weighed(members: electorate, weight: electorate), lot: lot, index: 1)
        }
        // Exactly two thirds of yes + no passes; one vote short does not; abstentions do not count against it.
        #expect(count(yes: 50, no: 25, abstain: 30, electorate: 300).passed == true)
        #expect(count(yes: 49, no: 25, abstain: 30, electorate: 300).passed == false)
        // 75 of 300 is the 25 % quorum; 74 is not, whatever the yes share.
        let atQuorum = count(yes: 60, no: 0, abstain: 15, electorate: 300)
        #expect(atQuorum.quorumMet == true && atQuorum.passed == true)
        let belowQuorum = count(yes: 60, no: 0, abstain: 14, electorate: 300)
        #expect(belowQuorum.quorumMet == false && belowQuorum.passed == false)
    }

    @Test func everyThresholdIsExact() {
        func passes(_ threshold: Threshold, yes: UInt64, no: UInt64, abstain: UInt64, electorate: UInt64) -> Bool {
            let motion = Question(
                title: "Motion", options: [], method: .yesNo(threshold: threshold, quorum: nil), blankAllowed: true)
            let answers = [
                CastAnswer(.options([0]), weight: yes), CastAnswer(.options([1]), weight: no),
                CastAnswer(.options([2]), weight: abstain),
            ].filter { $0.weight > 0 }
            return motion.count(answers, electorate: Weighed(members: 3, weight: electorate), lot: lot, index: 0)
                .passed!
        }
        #expect(passes(.moreYesThanNo, yes: 11, no: 10, abstain: 50, electorate: 100))
        #expect(!passes(.moreYesThanNo, yes: 10, no: 10, abstain: 0, electorate: 100))
        #expect(passes(.ofBallots(Fraction(1, 2)), yes: 30, no: 0, abstain: 30, electorate: 100))
        #expect(!passes(.ofBallots(Fraction(1, 2)), yes: 29, no: 0, abstain: 31, electorate: 100))
        #expect(passes(.majorityOfElectorate, yes: 51, no: 0, abstain: 0, electorate: 100))
        #expect(!passes(.majorityOfElectorate, yes: 50, no: 0, abstain: 0, electorate: 100))
        // Shares that overflow 64 bits when multiplied still compare exactly.
        #expect(
            passes(
                .ofYesAndNo(Fraction(2, 3)), yes: UInt64.max / 3 * 2, no: UInt64.max / 3, abstain: 0,
                electorate: UInt64.max))
        #expect(
            !passes(
                .ofYesAndNo(Fraction(2, 3)), yes: UInt64.max / 3 * 2 - 1, no: UInt64.max / 3, abstain: 0,
                electorate: UInt64.max))
    }

    @Test func aRankedQuestionNoOneAnsweredElectsNoOne() {
        for rule in RankRule.allCases {
            let chair = Question(
                title: "Chair", options: ["Ana", "Ben", "Chloé"], method: .rank(seats: 1, rule: rule),
                blankAllowed: true)
            let count = chair.count(
                [CastAnswer(.blank), CastAnswer(.blank)], electorate: Weighed(members: 5, weight: 5), lot: lot, index: 2
            )
            #expect(count.elected.isEmpty && count.stv == nil && count.schulze == nil, "\(rule)")
            #expect(count.blank == Weighed(members: 2, weight: 2))
        }
    }

    @Test func aWeightCountsAsThatManyMembers() {
        var generator = SplitMix64(seed: 29)
        for _ in 0..<200 {
            let answers = (0..<Int.random(in: 1...12, using: &generator)).map { _ -> CastAnswer in
                let picked = Array(
                    Set(
                        (0..<Int.random(in: 1...3, using: &generator)).map { _ in
                            Int.random(in: 0..<7, using: &generator)
                        })
                ).sorted()
                return CastAnswer(.options(picked), weight: UInt64.random(in: 1...4, using: &generator))
            }
            let copies = answers.flatMap { Array(repeating: CastAnswer($0.answer), count: Int($0.weight)) }
            let weighted = board.count(answers, electorate: Weighed(members: 50, weight: 50), lot: lot, index: 0)
            let copied = board.count(copies, electorate: Weighed(members: 50, weight: 50), lot: lot, index: 0)
            #expect(weighted.elected == copied.elected)
            #expect(weighted.options.map(\.weight) == copied.options.map(\.weight))
        }
    }
}
