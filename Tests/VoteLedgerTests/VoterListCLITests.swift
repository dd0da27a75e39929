import Foundation
import Testing
import VoteCommandLine

/// `vote voter authorize --from` reads a list as spreadsheets export it: a header line is skipped with a note,
/// never authorised, and each voter is named in the tokens file as listed (the tag keys the normalised identity:
/// member ids compare without regard to ASCII case, so "ab-123" is the voter "AB-123" again).
@Suite struct VoterListCLITests {
    @Test func headerIsSkippedAndIdentitiesAreKeptAsListed() throws {
        let election = try TestElection()
        _ = try election.place()
        let list = election.write("voters.csv", "Identity,Name\r\nAB-123\r\n+82 10 5555 0001\r\nab-123\r\nvoter\r\n")
        let tokensOut = election.root + "/tokens.csv"
        let run = try election.vote(["voter", "authorize", "--place", "1", "--from", list, "--tokens-out", tokensOut])
        #expect(run.status == 1 && run.err.contains("the first line is a header (it names a column), skipped"))
        #expect(run.err.contains("line 4: voter already authorised") && run.err.contains("1 line was rejected"))
        let lines = try String(contentsOfFile: tokensOut, encoding: .utf8).split(separator: "\n")
        lines.forEach { SecretsLog.record(String($0.split(separator: ",")[1])) }
        // Only line 1 is a header: a member whose id is "voter" is authorised on any other line.
        #expect(lines.map { $0.split(separator: ",")[0] } == ["AB-123", "+82 10 5555 0001", "voter"])
        let reissued = try election.ok(["voter", "reissue", "--place", "1", "--voter", "ab-123"])
        SecretsLog.record(reissued.trimmingCharacters(in: .whitespacesAndNewlines))
        let identity = try election.vote(["voter", "reissue", "--place", "1", "--voter", "identity"])
        #expect(identity.status == 1 && identity.err == "vote: voter not authorised in place 1\n")
    }

    /// A tenants' association's own list: a header, names with accents, a quoted name holding a comma, e-mail
    /// addresses as identities (one written twice in other case), shares as weights, a blank spreadsheet row.
    static let tenants = """
        \u{FEFF}Name,Email,Unit,Shares\r
        José Álvarez,Jose.Alvarez@Example.org,2G-001,3\r
        "Kim, Min-ji",minji.kim@example.org,2G-002,1\r
        Zoë Brontë,zoe@example.org,3A-101,120\r
        ,,,\r
        Again,JOSE.ALVAREZ@example.org,2G-001,3\r
        No address,,4B-404,1\r
        Broken,"not closed@example.org,4B-405,1\r

        """

    @Test func aTableAsTheAssociationKeepsIt() throws {
        let election = try TestElection()
        _ = try election.place(
            name: "AGM", extra: ["--questions", election.write("agenda.json", QuestionsCLITests.agenda)])
        let list = election.write("members.csv", Self.tenants)
        let tokensOut = election.root + "/tokens.csv"
        let run = try election.vote([
            "voter", "authorize", "--place", "1", "--from", list, "--identity-column", "email", "--weight-column", "4",
            "--tokens-out", tokensOut,
        ])
        // Three authorised; the repeat (by case), the empty identity and the unclosed quote each refused by line.
        #expect(run.status == 1 && run.err.contains("3 lines were rejected"), "\(run.err)")
        #expect(run.err.contains("line 6: voter already authorised"), "\(run.err)")
        #expect(run.err.contains("line 7: voter identity must be"), "\(run.err)")
        #expect(run.err.contains("line 8: a quoted field is not closed on its line"), "\(run.err)")
        let text = try String(contentsOfFile: tokensOut, encoding: .utf8)
        let voters = try VoterLetters.read(tokensFile: text)
        voters.forEach { SecretsLog.record($0.token.display) }
        #expect(voters.map(\.identity) == ["Jose.Alvarez@Example.org", "minji.kim@example.org", "zoe@example.org"])
        let tally = try election.ok(["tally", "--place", "1", "--json"])
        let turnout = try #require(
            (try JSONSerialization.jsonObject(with: Data(tally.utf8)) as? [String: Any])?["turnout"] as? [String: Any])
        #expect(turnout["authorized"] as? Int == 3 && turnout["authorized_weight"] as? Int == 124, "\(tally)")
        // The same member by another spelling is the same voter.
        let again = try election.vote(["voter", "authorize", "--place", "1", "--voter", " jose.alvarez@EXAMPLE.org"])
        #expect(again.status == 1 && again.err == "vote: voter already authorised\n", "\(again.err)")
    }

    /// A quoted identity holding a comma reaches the tokens file quoted, and the letters read it back whole.
    @Test func anIdentityWithACommaIsQuotedInTheTokensFile() throws {
        let election = try TestElection()
        _ = try election.place()
        let list = election.write("members.tsv", "Unit\tName\n2G-001\t\"Kim, Min-ji\"\n2G-002\tJosé Álvarez\n")
        let tokensOut = election.root + "/tokens.csv"
        try election.ok([
            "voter", "authorize", "--place", "1", "--from", list, "--identity-column", "Name", "--tokens-out",
            tokensOut,
        ])
        let text = try String(contentsOfFile: tokensOut, encoding: .utf8)
        #expect(text.hasPrefix("\"Kim, Min-ji\","), "\(text)")
        let voters = try VoterLetters.read(tokensFile: text)
        voters.forEach { SecretsLog.record($0.token.display) }
        #expect(voters.map(\.identity) == ["Kim, Min-ji", "José Álvarez"])
        let again = try election.vote(["voter", "authorize", "--place", "1", "--voter", "JOSE\u{301} ÁLVAREZ"])
        #expect(again.status == 1 && again.err == "vote: voter already authorised\n", "\(again.err)")
    }

    /// A list that authorises no one is an error and leaves no tokens file, so the rerun can use the same name; a
    /// column the header does not have is named with the header's columns before anything is written.
    @Test func aListThatAuthorisesNoOneLeavesNothingBehind() throws {
        let election = try TestElection()
        _ = try election.place()
        let tokensOut = election.root + "/tokens.csv"
        let before = try election.fingerprint()
        let refused = try election.vote([
            "voter", "authorize", "--place", "1", "--from", election.write("bad.csv", "a@@b\n@x\n+12\n"),
            "--tokens-out", tokensOut,
        ])
        #expect(refused.status == 1, "\(refused.err)")
        #expect(
            refused.err.hasSuffix(
                "vote: no voter was authorised: all 3 lines of \(election.root)/bad.csv were refused (listed above); \(tokensOut) was not kept\n"
            ), "\(refused.err)")
        #expect(!FileManager.default.fileExists(atPath: tokensOut))
        let column = try election.vote([
            "voter", "authorize", "--place", "1", "--from", election.write("members.csv", Self.tenants),
            "--identity-column", "E-mail", "--tokens-out", tokensOut,
        ])
        #expect(column.status == 2, "\(column.err)")
        #expect(
            column.err
                == "vote: the list has no column \"E-mail\" (its header names \"Name\", \"Email\", \"Unit\", \"Shares\")\n",
            "\(column.err)")
        #expect(!FileManager.default.fileExists(atPath: tokensOut))
        #expect(try election.fingerprint() == before)
    }
}
