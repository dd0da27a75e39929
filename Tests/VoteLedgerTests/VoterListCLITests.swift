import Foundation
import Testing

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
}
