import Foundation
import Testing

/// What the CLI prints for a person to read: tables aligned for wide (Korean) names, percentages by the
/// README's one rounding rule, and nouns in the number they take.
@Suite struct CLIDisplayTests {
    /// Columns a terminal gives `text`: 2 for a Hangul syllable or CJK ideograph, 1 for anything else here.
    private func columns(_ text: Substring) -> Int {
        text.unicodeScalars.reduce(0) {
            $0 + ((0xAC00...0xD7A3).contains($1.value) || (0x4E00...0x9FFF).contains($1.value) ? 2 : 1)
        }
    }

    /// A tally of Korean and Latin names lines its VOTES column up on a terminal; 5 voters of 16 is 31.3%
    /// (31.25 rounded half away from zero, as the web page shows it); one vote is "1 vote", not "1 votes".
    @Test func tallyAlignsWideNamesAndRoundsOneWay() throws {
        let election = try TestElection()
        let opens = try election.place()
        for name in ["김민지", "Ada Park", "이준호 候補"] {
            try election.ok(["candidate", "register", "--place", "1", "--name", name])
        }
        let input = election.write("voters.txt", (1...16).map { "member-\($0)" }.joined(separator: "\n") + "\n")
        let tokensPath = election.root + "/tokens.csv"
        let authorized = try election.ok([
            "voter", "authorize", "--place", "1", "--from", input, "--tokens-out", tokensPath,
        ])
        #expect(authorized.hasPrefix("authorised 16 voters for place 1; 0 rejected"))
        let tokens = try String(contentsOfFile: tokensPath, encoding: .utf8).split(separator: "\n")
            .map { String($0.split(separator: ",")[1]) }
        tokens.forEach(SecretsLog.record)
        election.advance(to: opens)
        let one = election.write("one.txt", "\(tokens[0]),1\n")
        #expect(try election.ok(["cast", "--place", "1", "--from", one]) == "cast 1 vote in place 1; 0 rejected\n")
        let four = election.write(
            "four.txt", tokens[1...4].enumerated().map { "\($1),\($0 % 2 + 2)" }.joined(separator: "\n"))
        #expect(try election.ok(["cast", "--place", "1", "--from", four]) == "cast 4 votes in place 1; 0 rejected\n")

        let lines = try election.ok(["tally", "--place", "1"]).split(separator: "\n")
        let table = lines.filter { !$0.hasPrefix("place ") && !$0.hasPrefix("turnout") }
        #expect(table.count == 4, "\(lines)")
        // Where the last column (SHARE) starts, in terminal columns: the same on every row.
        let starts = table.map { row in
            let last = row.split(separator: "  ", omittingEmptySubsequences: true).last!
            return columns(row[..<row.range(of: last, options: .backwards)!.lowerBound])
        }
        #expect(Set(starts).count == 1, "\(table)")
        #expect(table[1].hasSuffix("20.0%") && table[2].hasSuffix("40.0%"), "\(table)")
        #expect(lines.last?.hasPrefix("turnout: 5 of 16 (31.3%)") == true, "\(lines)")
        #expect(try election.ok(["place", "show", "1"]).contains("5 of 16 authorised voters (31.3%)"))
    }
}
