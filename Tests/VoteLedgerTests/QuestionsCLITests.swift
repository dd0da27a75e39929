import Foundation
import Testing

/// A place that asks questions, through the CLI: `vote place create --questions`, `vote cast --answers`,
/// `vote tally`, `vote receipt` and `vote verify`, with the refusals a secretary meets on the way.
@Suite struct QuestionsCLITests {
    static let agenda = """
        {"questions": [
          {"title": "Board", "description": "Elect three", "method": "choose", "min": 1, "max": 3,
           "options": ["Ana", "Ben", "Chloé", "Dev", "Eun"], "blank": true},
          {"title": "Adopt the new bylaws?", "method": "yes-no", "threshold": "2/3 of yes-and-no", "quorum": "1/4"},
          {"title": "Chair", "method": "rank", "options": ["Ana", "Ben", "Chloé"]},
          {"title": "Delegates", "method": "rank", "seats": 2, "rule": "schulze", "options": ["Ana", "Ben", "Chloé"]}
        ]}
        """

    @Test func anAgendaIsAskedAnsweredAndCounted() throws {
        let election = try TestElection()
        let opens = try election.place(name: "AGM", extra: ["--questions", election.write("agenda.json", Self.agenda)])
        let shown = try election.ok(["place", "show", "1"])
        #expect(shown.contains("question 1: Board (choose 1 to 3; 3 elected; may be left blank)"), "\(shown)")
        #expect(shown.contains("question 3: Chair (rank; 1 elected by instant runoff)"), "\(shown)")
        let place = try #require(try json(try election.ok(["place", "show", "1", "--json"])) as? [String: Any])
        let questions = try #require(place["questions"] as? [[String: Any]])
        #expect(questions.map { $0["method"] as? String } == ["choose", "yes-no", "rank", "rank"])
        #expect(
            questions[1]["threshold"] as? String == "2/3 of yes-and-no" && questions[1]["quorum"] as? String == "1/4")

        let tokens = try (1...6).map { try election.authorize("member-\($0)") }
        // No candidate can register in it.
        let candidate = try election.vote(["candidate", "register", "--place", "1", "--name", "Ana"])
        #expect(candidate.status == 1 && candidate.err.contains("place 1 asks questions"), "\(candidate.err)")
        election.advance(to: opens)
        func cast(_ index: Int, _ answers: String) throws -> VoteCLI.Result {
            try election.vote([
                "cast", "--place", "1", "--token-file", election.write("t\(index)", tokens[index]), "--answers",
                answers,
            ])
        }
        for (index, answers) in ["1,2,3;yes;1>2;1>2>3", "2,1;yes;2>1>3;2>1", "blank;no;3>2;3", "3,1;abstain;3;3>1"]
            .enumerated()
        {
            let result = try cast(index, answers)
            #expect(result.status == 0, "\(answers): \(result.err)")
        }
        // Refusals name the question and the rule, and record nothing.
        let before = try election.fingerprint()
        for (answers, fragment) in [
            ("1,2,3,4;yes;1;1", "answer to question 1: pick at most 3"),
            ("1;yes;1>1;1", "answer to question 3: an option is given twice"),
            ("1;yes;4;1", "answer to question 3: no such option"),
            ("1;blank;1;1", "answer to question 2: this question may not be left blank"),
            ("1;yes;1", "the ballot asks 4 questions"),
            ("1;perhaps;1;1", "answer to question 2: give option numbers"),
        ] {
            let refused = try cast(4, answers)
            #expect(refused.status != 0 && refused.err.contains(fragment), "\(answers): \(refused.err)")
        }
        let twice = try cast(0, "1;yes;1;1")
        #expect(twice.status == 1 && twice.err.contains("this token has already voted"), "\(twice.err)")
        let byCandidate = try election.vote(
            ["cast", "--place", "1", "--token-file", election.write("t5", tokens[5]), "--candidate", "1"])
        #expect(byCandidate.status == 1 && byCandidate.err.contains("asks questions"), "\(byCandidate.err)")
        #expect(try election.fingerprint() == before)

        // The receipt of a ballot is issued again like a vote's.
        let receipt = try election.vote([
            "receipt", "--place", "1", "--token-file", election.write("t0", tokens[0]), "--json",
        ])
        #expect(receipt.status == 0, "\(receipt.err)")

        // After the close: every question counted from the chain.
        election.advance(to: opens.addingTimeInterval(3600))
        let text = try election.ok(["tally", "--place", "1"])
        #expect(text.contains("elected: Ana, Ben, Chloé"), "\(text)")
        #expect(text.contains("passed; the quorum was reached"), "\(text)")
        let tally = try #require(try json(try election.ok(["tally", "--place", "1", "--json"])) as? [String: Any])
        let counts = try #require(tally["questions"] as? [[String: Any]])
        #expect(counts[0]["elected"] as? [Int] == [1, 2, 3])
        #expect((counts[0]["blank"] as? [String: Any])?["members"] as? Int == 1)
        // Bylaws: 2 yes, 1 no: two thirds of yes and no exactly; 4 of 6 took part, over the quarter quorum.
        #expect(counts[1]["passed"] as? Bool == true && counts[1]["quorum_met"] as? Bool == true)
        // Chair by instant runoff: first preferences Ana 1, Ben 1, Chloé 2; quota 3 of 4.
        #expect(counts[2]["quota"] as? String == "3.00000")
        #expect((counts[2]["elected"] as? [Int])?.count == 1)
        #expect((counts[3]["order"] as? [Int])?.count == 3)
        let csv = try election.ok(["tally", "--place", "1", "--csv"])
        #expect(csv.hasPrefix("question,option,name,votes,elected\n1,1,Ana,3,true\n"), "\(csv)")
        let log = try election.ok(["log"])
        #expect(log.contains("ballot cast in place 1: 1,2,3;1;1,2;1,2,3"), "\(log)")
        try election.ok(["verify"])
        // Certified: each question's outcome is signed on the ledger, and `vote verify` recounts it.
        let certified = try #require(
            try json(try election.ok(["place", "close", "--place", "1", "--json"])) as? [String: Any])
        let outcomes = try #require(certified["questions"] as? [[String: Any]])
        #expect(outcomes.count == counts.count && (certified["tally"] as? [Any])?.isEmpty == true)
        for (outcome, count) in zip(outcomes, counts) {
            #expect("\(outcome["elected"] ?? "")" == "\(count["elected"] ?? "")")
            #expect("\(outcome["passed"] ?? "nil")" == "\(count["passed"] ?? "nil")")
        }
        #expect(try election.ok(["log"]).contains("ballot results of place 1 certified"))
        let again = try election.vote(["place", "close", "--place", "1"])
        #expect(again.status != 0 && again.err.contains("already certified"), "\(again.err)")
        let final = try #require(try json(try election.ok(["tally", "--place", "1", "--json"])) as? [String: Any])
        #expect(final["certified_height"] is Int, "\(final)")
        try election.ok(["verify"])
    }

    /// A shareholders' motion: a holder of 120 shares outweighs two of 1; `--weight`, a list's "identity,weight"
    /// lines, the tally's members and weight, and weights refused where they do not apply.
    @Test func weightedVotersCountAsTheirWeight() throws {
        let election = try TestElection()
        let motion = #"{"questions": [{"title": "Merge?", "method": "yes-no", "quorum": "1/2"}]}"#
        let opens = try election.place(name: "AGM", extra: ["--questions", election.write("m.json", motion)])
        let big = try election.ok(["voter", "authorize", "--place", "1", "--voter", "holder-1", "--weight", "120"])
            .trimmingCharacters(in: .whitespacesAndNewlines)
        SecretsLog.record(big)
        let list = election.write("holders.csv", "identity\nholder-2\nholder-3,1\nholder-4,80\nholder-5,0\n")
        let tokensOut = election.root + "/holders-tokens.csv"
        let bulk = try election.vote([
            "voter", "authorize", "--place", "1", "--from", list, "--tokens-out", tokensOut,
        ])
        #expect(bulk.err.contains("line 5: a weight must be a whole number from 1 to 1000000"), "\(bulk.err)")
        let tokens = try String(contentsOfFile: tokensOut, encoding: .utf8).split(separator: "\n")
            .map { String($0.split(separator: ",")[1]) }
        #expect(tokens.count == 3)
        tokens.forEach(SecretsLog.record)
        election.advance(to: opens)
        try election.ok(["cast", "--place", "1", "--token", big, "--answers", "yes"])
        try election.ok(["cast", "--place", "1", "--token", tokens[0], "--answers", "no"])
        try election.ok(["cast", "--place", "1", "--token", tokens[1], "--answers", "no"])
        let tally = try #require(try json(try election.ok(["tally", "--place", "1", "--json"])) as? [String: Any])
        let question = try #require((tally["questions"] as? [[String: Any]])?.first)
        let options = try #require(question["options"] as? [[String: Any]])
        #expect(options.map { "\($0["members"] ?? "")/\($0["weight"] ?? "")" } == ["1/120", "2/2", "0/0"])
        #expect(question["passed"] as? Bool == true, "\(question)")  // 122 of 202 took part: the quorum is met
        let turnout = try #require(tally["turnout"] as? [String: Any])
        #expect(turnout["authorized_weight"] as? Int == 202 && turnout["voted_weight"] as? Int == 122, "\(turnout)")
        #expect(try election.ok(["tally", "--place", "1"]).contains("weight: 122 of 202"))
        try election.ok(["verify"])

        // A weight in a place with candidates is refused, nothing written.
        _ = try election.place(name: "Mayor")
        let refused = try election.vote([
            "voter", "authorize", "--place", "2", "--voter", "holder-1", "--weight", "3",
        ])
        #expect(refused.status != 0 && refused.err.contains("only a place that asks questions"), "\(refused.err)")
    }

    @Test func aReVotingPlaceCountsTheLastBallot() throws {
        let election = try TestElection()
        let motion = #"{"questions": [{"title": "Strike?", "method": "yes-no"}]}"#
        let opens = try election.place(
            name: "Ballot", extra: ["--questions", election.write("m.json", motion), "--revoting"])
        #expect(try election.ok(["place", "show", "1"]).contains("only the last ballot counts"))
        let token = election.write("t", try election.authorize("member-1"))
        let other = election.write("u", try election.authorize("member-2"))
        election.advance(to: opens)
        try election.ok(["cast", "--place", "1", "--token-file", token, "--answers", "yes"])
        try election.ok(["cast", "--place", "1", "--token-file", other, "--answers", "yes"])
        let again = try election.ok(["cast", "--place", "1", "--token-file", token, "--answers", "no"])
        #expect(again.contains("replaces your earlier one"), "\(again)")
        let tally = try #require(try json(try election.ok(["tally", "--place", "1", "--json"])) as? [String: Any])
        let question = try #require((tally["questions"] as? [[String: Any]])?.first)
        let options = try #require(question["options"] as? [[String: Any]])
        #expect(options.map { $0["members"] as? Int } == [1, 1, 0])
        #expect((tally["turnout"] as? [String: Any])?["voted"] as? Int == 2)
        // The receipt issued again is that of the last ballot.
        let receipt = try #require(
            try json(try election.ok(["receipt", "--place", "1", "--token-file", token, "--json"])) as? [String: Any])
        #expect((receipt["index"] as? Int).map { $0 > 0 } == true)
        #expect(try election.ok(["log"]).contains("ballot cast again in place 1"))
        try election.ok(["verify"])
        let refused = try election.vote([
            "place", "create", "--name", "Mayor", "--registration", "+1m/+1h", "--voting", "+1h/+2h", "--revoting",
        ])
        #expect(refused.status == 2 && refused.err.contains("--revoting goes with --questions"), "\(refused.err)")
    }

    @Test func aQuestionsFileWithAMistakeIsRefusedInOneLine() throws {
        let election = try TestElection()
        let before = try election.fingerprint()
        for (file, fragment) in [
            (
                #"{"questions": [{"title": "Board", "method": "choose", "seat": 3, "options": ["a", "b"]}]}"#,
                #"question 1: unknown key "seat" for a choose question"#
            ),
            (
                #"{"questions": [{"title": "Board", "method": "choose", "max": true, "options": ["a"]}]}"#,
                "question 1's max has the wrong type"
            ),
            (
                #"{"questions": [{"title": "Board", "method": "vote", "options": ["a"]}]}"#,
                "method must be choose, yes-no or rank"
            ),
            (
                #"{"questions": [{"title": "Bylaws", "method": "yes-no", "threshold": "3/2 of ballots"}]}"#,
                "threshold must be a fraction N/D"
            ),
            (
                #"{"questions": [{"title": "Board", "method": "choose", "min": 2, "max": 1, "options": ["a", "b"]}]}"#,
                "the ballot question 1: min must be at least 1"
            ),
            (
                #"{"questions": [{"title": "Board", "method": "choose", "options": ["Ana", "ANA"]}]}"#,
                #"question 1 has two options named "ANA""#
            ),
            (
                #"{"questions": [{"title": " ", "method": "choose", "options": ["a"]}]}"#,
                "question 1 title must not be empty"
            ),
            (#"{"questions": []}"#, "the ballot must ask 1 to 64 questions"),
            ("not json", "is not JSON"),
        ] {
            let path = election.write("questions.json", file)
            let result = try election.vote([
                "place", "create", "--name", "AGM", "--registration", "+1m/+1h", "--voting", "+1h/+2h",
                "--questions", path,
            ])
            #expect(result.status != 0 && result.err.contains(fragment), "\(file): \(result.err)")
            #expect(result.err.split(separator: "\n").count == 1, "\(result.err)")
        }
        let anonymous = try election.vote([
            "place", "create", "--name", "AGM", "--registration", "+1m/+1h", "--voting", "+1h/+2h", "--questions",
            election.write("q.json", Self.agenda), "--ballot", "anonymous", "--revoting",
        ])
        #expect(
            anonymous.status == 2 && anonymous.err.contains("an anonymous credential casts one ballot"),
            "\(anonymous.err)")
        #expect(try election.fingerprint() == before)
    }
}
