import Foundation
import Testing
import VoteCommandLine
import VoteLedger

/// Voting links and voter letters from the CLI: `vote voter authorize --base-url` adds each voter's link to the
/// tokens file, and `vote voter letters` turns the file into a new 0600 HTML page per voter whose QR code, printed
/// by headless Chromium, a decoder (`zbarimg`) reads back as the link.
@Suite struct VoterLettersCLITests {
    @Test func lettersCarryTheLinkAsAQRCode() throws {
        let election = try TestElection()
        _ = try election.place(name: "Board & Staff")
        let list = election.write("voters.csv", "identity\nAB-123\n+82 10 5555 0001\n")
        let tokensOut = election.root + "/tokens.csv"
        let base = "https://vote.example.org/union/"
        try election.ok([
            "voter", "authorize", "--place", "1", "--from", list, "--tokens-out", tokensOut, "--base-url", base,
        ])
        let rows = try String(contentsOfFile: tokensOut, encoding: .utf8).split(separator: "\n").map {
            $0.split(separator: ",").map(String.init)
        }
        rows.forEach { SecretsLog.record($0[1]) }
        #expect(rows.map { $0[0] } == ["AB-123", "+82 10 5555 0001"])
        for row in rows {
            let token = try #require(VotingToken(typed: row[1]))
            #expect(row[2] == "https://vote.example.org/union/#/booth/1?t=" + token.compact)
        }

        let letters = election.root + "/letters.html"
        let wrote = try election.ok([
            "voter", "letters", "--place", "1", "--tokens", tokensOut, "--base-url", base, "--out", letters,
        ])
        #expect(wrote == "wrote 2 voter letters for place 1 to \(letters)\n")
        let attributes = try FileManager.default.attributesOfItem(atPath: letters)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        let html = try String(contentsOfFile: letters, encoding: .utf8)
        #expect(html.contains("@page { size: A4;") && html.contains("Test Union") && html.contains("Board &amp; Staff"))
        #expect(html.components(separatedBy: "<section class=\"letter\">").count == 3)
        for row in rows {
            #expect(html.contains(row[0]) && html.contains(row[1]) && html.contains(row[2]))
        }

        // The first letter as a browser prints it: its QR code reads back as the first voter's link.
        let shot = election.root + "/letter.png"
        let chromium = Process()
        chromium.executableURL = URL(fileURLWithPath: "/usr/bin/chromium")
        chromium.arguments = [
            "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--window-size=794,1123",
            "--screenshot=\(shot)", "file://\(letters)",
        ]
        chromium.standardOutput = FileHandle.nullDevice
        chromium.standardError = FileHandle.nullDevice
        try chromium.run()
        chromium.waitUntilExit()
        #expect(try QRCodeTests.zbarimg(shot) == "QR-Code:\(rows[0][2])\n")

        // Refusals write nothing: the letters file exists; a base URL that is not http(s); a bad tokens line.
        let again = try election.vote([
            "voter", "letters", "--place", "1", "--tokens", tokensOut, "--base-url", base, "--out", letters,
        ])
        #expect(again.status != 0 && again.err.split(separator: "\n").count == 1)
        let notHTTP = try election.vote([
            "voter", "letters", "--place", "1", "--tokens", tokensOut, "--base-url", "javascript:alert(1)", "--out",
            election.root + "/other.html",
        ])
        #expect(notHTTP.status != 0 && notHTTP.err.contains("the base URL must start with https://"))
        let bad = election.write("bad.csv", "AB-123,not-a-token\n")
        let badLine = try election.vote([
            "voter", "letters", "--place", "1", "--tokens", bad, "--base-url", base, "--out", election.root + "/o.html",
        ])
        #expect(badLine.err == "vote: line 1 of the tokens file is not \"identity,token\" with a well-formed token\n")
        #expect(!FileManager.default.fileExists(atPath: election.root + "/other.html"))
        #expect(!FileManager.default.fileExists(atPath: election.root + "/o.html"))
    }
}
