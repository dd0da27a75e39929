import FileStore
import Foundation
import Ledger
import LedgerCrypto
import TestSupport
import Testing

/// Places with a ballot of questions (FORMAT.md §11.1 flag bit 2, §11.21 ballot, §11.22 ballot cast, §11.23 counts):
/// `vote verify` and the independent Python verifier (`Tools/verify_ledger.py`, written from FORMAT.md alone) accept
/// the same ballot election, Python's per-question counts equal `vote tally --json`, and both refuse a tampered
/// copy and ledgers whose ballot casts or ballot break a rule, with the same reason.
extension IndependentVerifierTests {
    /// A choose (3 of 6, may be left blank), a 2/3 yes/no with a quorum of 1/4, an instant runoff, a 3-seat Scottish
    /// STV (may be left blank) and a Schulze question (`vote place create --questions`).
    static let ballotQuestions = """
        {"questions": [
          {"title": "Board", "options": ["A", "B", "C", "D", "E", "F"], "blank": true, "method": "choose",
           "min": 1, "max": 3, "seats": 3},
          {"title": "Motion", "method": "yes-no", "threshold": "2/3 of yes-and-no", "quorum": "1/4"},
          {"title": "Chair", "options": ["P", "Q", "R", "S"], "method": "rank", "seats": 1, "rule": "scottish-stv"},
          {"title": "Council", "options": ["a", "b", "c", "d", "e", "f"], "method": "rank", "seats": 3,
           "rule": "scottish-stv", "blank": true},
          {"title": "Logo", "options": ["x", "y", "z", "w"], "method": "rank", "seats": 1, "rule": "schulze"}
        ]}
        """

    /// One voter's `vote cast --answers` to `ballotQuestions`: options numbered from 1, the first ones more popular
    /// (so that counts are close and some ties are drawn by lot), partial rankings, now and then a blank.
    static func randomAnswers(_ random: inout SplitMix64) -> String {
        var parts: [String] = []
        if random.chance(8) {
            parts.append("blank")
        } else {
            let count = random.int(1...3)
            var picked = Set<Int>()
            while picked.count < count { picked.insert(random.chance(50) ? random.int(1...3) : random.int(1...6)) }
            parts.append(picked.sorted().map(String.init).joined(separator: ","))
        }
        parts.append(["yes", "yes", "yes", "no", "abstain"][random.int(0...4)])
        for (options, blank) in [(4, false), (6, true), (4, false)] {
            if blank && random.chance(8) {
                parts.append("blank")
                continue
            }
            var ranking = Array(1...options).shuffled(using: &random)
            if random.chance(40) { ranking.sort() }  // a common preference, so that some options gather votes
            parts.append(ranking.prefix(random.int(1...options)).map(String.init).joined(separator: ">"))
        }
        return parts.joined(separator: ";")
    }

    /// A JSON value as text to compare: a `{"members": N, "weight": W}` count (what `vote tally --json` prints) as
    /// "N/W", arrays element by element, null and missing alike.
    static func canonical(_ value: Any?) -> String {
        guard let value, !(value is NSNull) else { return "null" }
        if let array = value as? [Any] {
            return "[" + array.map { canonical($0) }.joined(separator: ",") + "]"
        }
        if let object = value as? [String: Any] {
            if let members = object["members"] { return canonical(members) + "/" + canonical(object["weight"]) }
            return "{" + object.keys.sorted().map { "\($0):\(canonical(object[$0]))" }.joined(separator: ",") + "}"
        }
        return "\(value)"
    }

    /// Expects the Swift and Python values to be the same count, list or text (`canonical`).
    static func expectSameCount(
        _ swift: Any?, _ python: Any?, _ what: String, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        let (s, p) = (canonical(swift), canonical(python))
        #expect(s == p, "\(what): swift \(s), python \(p)", sourceLocation: sourceLocation)
    }

    /// A ballot election driven through the CLI on its own clock: 48 authorised members, every fifth of them
    /// weighted (2 to 150 shares), 44 of whom cast seeded random answers and 8 of those cast again (the place
    /// allows re-voting); after voting ends `vote verify --json` and the Python verifier report the same summary, and
    /// every question's count (ballots, blank, per-option totals, elected, passed and quorum_met, the STV quota and
    /// every stage, the Schulze order) equals `vote tally --place 1 --json`. Then a copy with one byte of the last
    /// ballot cast's answers changed (its frame checksum made right again) fails both at that block, the same way.
    @Test func generatedBallotElection() throws {
        let election = try TestElection()
        let questions = election.write("questions.json", Self.ballotQuestions)
        let opens = try election.place(name: "Ballot", extra: ["--questions", questions, "--revoting"])
        let voters = 48
        var random = SplitMix64(seed: 0xB411_07ED)
        let lines = (1...voters).map { $0 % 5 == 0 ? "member-\($0),\(2 + random.next() % 149)" : "member-\($0)" }
        let members = election.write("members.txt", lines.joined(separator: "\n") + "\n")
        let tokensOut = election.root + "/tokens.csv"
        try election.ok(["voter", "authorize", "--place", "1", "--from", members, "--tokens-out", tokensOut])
        let tokens = try String(contentsOfFile: tokensOut, encoding: .utf8).split(separator: "\n")
            .map { String($0.split(separator: ",")[1]) }  // "identity,token"
        #expect(tokens.count == voters)

        election.advance(to: opens)
        for token in tokens.prefix(44) + tokens.prefix(40).suffix(8) {
            SecretsLog.record(token)
            try election.ok(["cast", "--place", "1", "--token", token, "--answers", Self.randomAnswers(&random)])
        }
        election.advance(to: opens.addingTimeInterval(3600))  // voting ends: the counts are final

        let ledger = election.ledger
        let summary = try Self.voteJSON(["verify", "--ledger", ledger])
        let python = try Self.python([ledger])
        #expect(python.status == 0, "\(python.text)")
        for key in Self.summaryKeys + ["places"] {
            Self.expectSame(summary[key], python.json[key], key)
        }

        let tally = try #require(try json(try election.ok(["tally", "--place", "1", "--json"])) as? [String: Any])
        let place = try #require((python.json["tallies"] as? [[String: Any]])?.first)
        let turnout = try #require(place["turnout"] as? [String: Any])
        #expect("\(turnout["authorized"] ?? "") \(turnout["voted"] ?? "")" == "48 44")
        let swiftTurnout = try #require(tally["turnout"] as? [String: Any])
        for key in ["authorized_weight", "voted_weight"] {
            Self.expectSameCount(swiftTurnout[key], turnout[key], key)
        }
        #expect((turnout["authorized_weight"] as? Int ?? 0) > 48, "\(turnout)")
        let swiftQuestions = try #require(tally["questions"] as? [[String: Any]])
        let pythonQuestions = try #require(place["questions"] as? [[String: Any]])
        #expect(swiftQuestions.count == 5 && pythonQuestions.count == 5)
        for (index, (s, p)) in zip(swiftQuestions, pythonQuestions).enumerated() {
            let q = "question \(index + 1)"
            Self.expectSameCount(s["ballots"], p["ballots"], "\(q) ballots")
            Self.expectSameCount(s["blank"], p["blank"], "\(q) blank")
            Self.expectSameCount(s["options"], p["totals"], "\(q) totals")
            Self.expectSameCount(s["elected"], p["elected"], "\(q) elected")
            switch index {
            case 1:
                Self.expectSameCount(s["passed"], p["passed"], "\(q) passed")
                Self.expectSameCount(s["quorum_met"], p["quorum_met"], "\(q) quorum_met")
            case 2, 3:
                Self.expectSameCount(s["quota"], p["quota"], "\(q) quota")
                let swiftStages = s["stages"] as? [[String: Any]] ?? []
                let pythonStages = p["stages"] as? [[String: Any]] ?? []
                #expect(swiftStages.count == pythonStages.count && !swiftStages.isEmpty, "\(q) stages")
                for (a, b) in zip(swiftStages, pythonStages) {
                    for key in ["number", "action", "option", "totals", "non_transferable", "elected"]
                    where key != "elected" || a[key] != nil {
                        Self.expectSameCount(a[key], b[key], "\(q) stage \(a["number"] ?? "?") \(key)")
                    }
                }
            case 4:
                Self.expectSameCount(s["order"], p["order"], "\(q) order")
            default:
                break
            }
        }
        let elected = pythonQuestions.map { ($0["elected"] as? [Any])?.count ?? -1 }
        #expect(elected[0] == 3 && elected[2] == 1 && elected[3] == 3 && elected[4] == 1, "\(elected)")

        // The last block holds the last re-vote alone; its last byte is in the answers (the Schulze ranking).
        let name = "segment-00000000.vlseg"
        let pristine = [UInt8](try #require(FileManager.default.contents(atPath: ledger + "/" + name)))
        let frames = Self.frames(pristine)
        let last = try #require(frames.last)
        #expect(last.upperBound == pristine.count)
        #expect(pristine[last.lowerBound + 12 + 176 + 4..<last.lowerBound + 12 + 176 + 6] == [0x01, 0x0C])
        var tampered = pristine
        tampered[last.upperBound - 1] ^= 0x01
        let body = last.lowerBound + 12
        let crc = CRC32C.checksum(Array(tampered[body..<last.upperBound]))
        tampered.replaceSubrange(last.lowerBound + 8..<last.lowerBound + 12, with: Self.bigEndian(crc))
        let (swift, pythonTampered) = try Self.verifyBoth(ledger, [name: tampered])
        let context: Comment = "tampered ballot replaced: swift \(swift.err) python \(pythonTampered.text)"
        #expect(swift.status == 3 && pythonTampered.status == 3, context)
        #expect(Self.swiftHeight(swift) == frames.count - 1, context)
        #expect(pythonTampered.json["height"] as? Int == frames.count - 1, context)
        #expect(pythonTampered.json["error"] as? String == "block \(frames.count - 1): tree root mismatch", context)
        // `vote verify` names the frame as the Python verifier's `file` and `offset` do (§7).
        #expect(pythonTampered.json["offset"] as? Int == last.lowerBound, context)
        #expect(
            swift.err == "vote: integrity failure: block \(frames.count - 1): tree root mismatch (\(name), byte offset "
                + "\(last.lowerBound))\n", context)
    }

    // MARK: - Ballots written around the contract

    /// A question (§11.21): title, empty description, flags, method and its fields, options.
    static func ballotQuestion(
        _ title: String, method: UInt8, fields: [UInt8], options: [String], blank: Bool = false
    ) -> [UInt8] {
        var bytes: [UInt8] = IndependentRuleTests.text(title)
        bytes += IndependentRuleTests.text("")
        bytes += [blank ? 1 : 0, method]
        bytes += fields
        bytes += IndependentRuleTests.be(UInt16(options.count))
        for option in options { bytes += IndependentRuleTests.text(option) }
        return bytes
    }

    /// A choose question (method 1): min, max, seats.
    static func chooseQuestion(
        _ title: String, _ options: [String], min: UInt16, max: UInt16, seats: UInt16, blank: Bool = false
    ) -> [UInt8] {
        let be = { (value: UInt16) in IndependentRuleTests.be(value) }
        return ballotQuestion(title, method: 1, fields: be(min) + be(max) + be(seats), options: options, blank: blank)
    }

    /// A ranked question (method 3) with `seats` and `rule` (1 Scottish STV, 2 Schulze).
    static func rankQuestion(_ title: String, _ options: [String], seats: UInt16, rule: UInt8) -> [UInt8] {
        ballotQuestion(title, method: 3, fields: IndependentRuleTests.be(seats) + [rule], options: options)
    }

    /// Place 1 with the standard windows (IndependentRuleTests), flag bit 2 and `questions` as its ballot (version 1).
    static func ballotPlace(_ questions: [[UInt8]]) -> LedgerEvent {
        let rules = IndependentRuleTests.self
        var ballot: [UInt8] = [1, UInt8(questions.count)]
        for question in questions { ballot += question }
        let parts: [[UInt8]] = [
            rules.be(UInt32(1)), rules.text("Ballot"), rules.text(""), rules.be(rules.registration.start),
            rules.be(rules.registration.end), rules.be(rules.voting.start), rules.be(rules.voting.end),
            rules.be(UInt32(0)), rules.be(UInt32(4)), ballot,
        ]
        return rules.raw(0x0101, parts)
    }

    /// The `answers` of §11.22: a count, then per question its option indexes (nil: blank, n = 0xFFFF).
    static func encodedAnswers(_ answers: [[UInt16]?]) -> [UInt8] {
        var bytes: [UInt8] = [UInt8(answers.count)]
        for answer in answers {
            guard let options = answer else {
                bytes += IndependentRuleTests.be(UInt16(0xFFFF))
                continue
            }
            bytes += IndependentRuleTests.be(UInt16(options.count))
            for option in options { bytes += IndependentRuleTests.be(option) }
        }
        return bytes
    }

    /// A ballot cast (0x010B) in place 1 by `token` with `answers` bytes.
    static func ballotCast(token: String, _ answers: [UInt8]) -> LedgerEvent {
        IndependentRuleTests.raw(
            0x010B, [IndependentRuleTests.be(UInt32(1)), IndependentRuleTests.digest(token).bytes, answers])
    }

    /// Ledgers written raw (bypassing the contract, as `IndependentRuleTests` writes them): a ballot cast with too
    /// many choices, a repeated rank, an unknown option, answers cut short, and a ballot whose choose question has
    /// min > max. `vote verify` and the Python verifier both refuse each at the same event with the same reason
    /// (§11.2, §11.21.3, §11.22.7), and both accept the same ledger with a valid ballot cast.
    @Test func ballotRulesRefusedByBoth() throws {
        let rules = IndependentRuleTests.self
        let t = rules.t
        let ballot = [
            Self.chooseQuestion("Board", ["A", "B", "C", "D", "E", "F"], min: 1, max: 3, seats: 3, blank: true),
            Self.rankQuestion("Chair", ["P", "Q", "R", "S"], seats: 1, rule: 1),
        ]
        let setUp: [IndependentRuleTests.Block] = [
            (t, [Self.ballotPlace(ballot)]), (t + 1600, [rules.authorize("a", token: "A")]),
        ]
        let valid = setUp + [(t + 3500, [Self.ballotCast(token: "A", Self.encodedAnswers([[0, 2], [1, 0, 3]]))])]
        try rules.expectBoth("valid ballot cast", valid, nil)
        let blank = setUp + [(t + 3500, [Self.ballotCast(token: "A", Self.encodedAnswers([nil, [3]]))])]
        try rules.expectBoth("blank choose answer", blank, nil)

        let cases: [(String, [[UInt16]?], String)] = [
            ("11.22.7 too many choices", [[0, 1, 2, 3], [1]], "answer to question 1: pick at most 3"),
            ("11.22.7 repeated rank", [[0], [1, 0, 1]], "answer to question 2: an option is given twice"),
            ("11.22.7 unknown option", [[0], [1, 4]], "answer to question 2: no such option"),
            (
                "11.22.7 not ascending", [[2, 0], [1]],
                "answer to question 1: the options picked must be listed in ascending order"
            ),
            ("11.22.7 not blank", [[0], nil], "answer to question 2: this question may not be left blank"),
            ("11.22.6", [[0]], "answer to question 2: the ballot asks 2 questions: give one answer to each"),
        ]
        for (label, answers, reason) in cases {
            let blocks = setUp + [(t + 3500, [Self.ballotCast(token: "A", Self.encodedAnswers(answers))])]
            try rules.expectBoth(label, blocks, rules.broken(blocks, reason))
        }

        let short = Array(Self.encodedAnswers([[0], [1]]).dropLast())
        let truncated = setUp + [(t + 3500, [Self.ballotCast(token: "A", short)])]
        try rules.expectBoth(
            "answers cut short", truncated, "block 3, event 0: ballot cast: truncated (needs 2 bytes, has 1)")

        let minAboveMax: [IndependentRuleTests.Block] = [
            (t, [Self.ballotPlace([Self.chooseQuestion("Board", ["A", "B", "C"], min: 3, max: 2, seats: 1)])])
        ]
        try rules.expectBoth(
            "11.21.3 min > max", minAboveMax,
            rules.broken(
                minAboveMax,
                "the ballot question 1: min must be at least 1 and at most max, and max at most the number of options"))
    }
}
