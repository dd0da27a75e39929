import Foundation
import TestSupport
import Testing

/// `vote voter bounces` after a real mailing through the relay (`MailCLITests.Relay`): a delivery status
/// notification for a message the relay accepted marks that member bounced in the log, and `--failed-only` mails
/// them again; reading it twice records nothing new; bad input is refused in one line and writes nothing.
@Suite(.serialized) struct BouncesCLITests {
    /// A bounce as Postfix writes it (LF line ends, folded headers) for `recipient`, the returned headers naming
    /// `messageID` if given.
    static func postfixBounce(
        _ recipient: String, action: String = "failed", status: String = "5.1.1", messageID: String? = nil
    ) -> String {
        """
        From MAILER-DAEMON  Mon Nov 30 01:12:44 2026
        Return-Path: <>
        From: MAILER-DAEMON@mx.example.org (Mail Delivery System)
        Subject: Undelivered Mail Returned to Sender
        To: vote@example.org
        MIME-Version: 1.0
        Content-Type: multipart/report; report-type=delivery-status;
        \tboundary="4Z1xYc3kPqz9sW.1764465164/mx.example.org"

        This is a MIME-encapsulated message.

        --4Z1xYc3kPqz9sW.1764465164/mx.example.org
        Content-Description: Notification
        Content-Type: text/plain; charset=us-ascii

        This is the mail system at host mx.example.org.

        --4Z1xYc3kPqz9sW.1764465164/mx.example.org
        Content-Description: Delivery report
        Content-Type: message/delivery-status

        Reporting-MTA: dns; mx.example.org
        X-Postfix-Sender: rfc822; vote@example.org

        Final-Recipient: rfc822; \(recipient)
        Action: \(action)
        Status: \(status)
        Diagnostic-Code: smtp; 550 5.1.1 <\(recipient)>: Recipient address
            rejected: User unknown in local recipient table

        --4Z1xYc3kPqz9sW.1764465164/mx.example.org
        Content-Description: Undelivered Message Headers
        Content-Type: text/rfc822-headers

        From: vote@example.org
        Subject: Your vote: Test Union
        \(messageID.map { "Message-ID: <\($0)>" } ?? "X-Nothing: here")

        --4Z1xYc3kPqz9sW.1764465164/mx.example.org--

        """
    }

    static func logLines(_ election: TestElection) throws -> [String: String] {
        var lines: [String: String] = [:]
        for line in try election.ok(["voter", "mail-log"]).split(separator: "\n") {
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            lines[String(fields[0])] = fields.dropFirst(2).joined(separator: "\t")
        }
        return lines
    }

    @Test func aBounceMarksItsMemberAndFailedOnlyMailsThemAgain() throws {
        let election = try MailCLITests.association()
        let relay = try MailCLITests.Relay(root: election.root)
        defer { relay.stop() }
        let first = try MailCLITests.mail(election, relay)
        #expect(first.out.hasPrefix("2 messages sent, 1 failed"), "\(first.out)\(first.err)")
        let sent = try relay.messages()
        try #require(sent.count == 2)
        let joseID = try #require((sent[0]["message_id"] as? String)?.dropFirst().dropLast()).description
        #expect(sent[0]["recipients"] as? [String] == ["jose@example.org"] && joseID.hasSuffix("@example.org"))

        // José's message bounced (the DSN spells the domain in capitals); Minsu's is only delayed; a stranger is
        // not in the contact book; an old MTA's plain-text bounce is no DSN.
        let mbox = election.write(
            "bounces.mbox",
            Self.postfixBounce("jose@EXAMPLE.ORG", messageID: joseID) + "\n"
                + Self.postfixBounce("minsu@example.org", action: "delayed", status: "4.4.7") + "\n"
                + Self.postfixBounce("stranger@example.org") + "\n"
                + "From MAILER-DAEMON  Mon Nov 30 01:20:00 2026\nFrom: Mailer-Daemon@old.example.net\n"
                + "Subject: Mail delivery failed\n\nA message that you sent could not be delivered.\n")
        let read = try #require(try json(try election.ok(["voter", "bounces", mbox, "--json"])) as? [String: Int])
        #expect(
            read == [
                "messages": 4, "reports": 3, "bounced": 1, "already_recorded": 0, "not_in_contact_book": 1,
                "not_in_log": 0, "not_failed": 1, "not_reports": 1,
            ], "\(read)")
        var log = try Self.logLines(election)
        #expect(
            log["2g-001"]
                == "bounced\t5.1.1 550 5.1.1 <jose@EXAMPLE.ORG>: Recipient address rejected: User unknown in local recipient table",
            "\(log)")
        #expect(log["2g-002"]?.hasPrefix("sent\t") == true, "\(log)")
        #expect(log["2g-003"]?.hasPrefix("refused\t") == true, "\(log)")

        // The same bounces again: nothing new.
        let again = try election.ok(["voter", "bounces", mbox])
        #expect(
            again
                == "3 delivery reports read: 0 members marked bounced, 1 already recorded, 1 address not in the contact book, 0 not of a message in the log, 1 delayed or delivered; 1 message not a delivery report skipped\n",
            "\(again)")
        #expect(try Self.logLines(election) == log)

        // A resend of failures mails José again (and tries the refused address again): the relay takes one message.
        let resend = try MailCLITests.mail(election, relay, ["--failed-only", "--json"])
        let totals = try #require(try json(resend.out) as? [String: Any])
        #expect(totals["recipients"] as? Int == 2 && totals["sent"] as? Int == 1 && totals["refused"] as? Int == 1)
        let resent = try relay.messages()
        try #require(resent.count == 3)
        #expect(resent[2]["recipients"] as? [String] == ["jose@example.org"])
        #expect(resent[2]["message_id"] as? String != sent[0]["message_id"] as? String)
        log = try Self.logLines(election)
        #expect(log["2g-001"]?.hasPrefix("sent\t") == true, "\(log)")

        // The old bounce names the old message: the new one is not marked by it.
        let stale = try #require(try json(try election.ok(["voter", "bounces", mbox, "--json"])) as? [String: Int])
        #expect(stale["bounced"] == 0 && stale["already_recorded"] == 1, "\(stale)")
        #expect(try Self.logLines(election)["2g-001"]?.hasPrefix("sent\t") == true)

        // A Maildir holding a bounce of Minsu's message without its Message-ID: matched by address, case aside.
        let maildir = election.root + "/Maildir"
        for sub in ["new", "cur", "tmp"] {
            try FileManager.default.createDirectory(atPath: maildir + "/" + sub, withIntermediateDirectories: true)
        }
        let gmailStyle = Self.postfixBounce("Minsu@Example.Org", status: "5.2.1").split(
            separator: "\n", maxSplits: 1)[1].replacingOccurrences(of: "\n", with: "\r\n")
        try Data(gmailStyle.utf8).write(to: URL(fileURLWithPath: maildir + "/cur/1764465164.M1P2.host:2,S"))
        let fromMaildir = try #require(
            try json(try election.ok(["voter", "bounces", maildir, "--json"])) as? [String: Int])
        #expect(fromMaildir["reports"] == 1 && fromMaildir["bounced"] == 1, "\(fromMaildir)")
        #expect(try Self.logLines(election)["2g-002"]?.hasPrefix("bounced\t5.2.1 ") == true)
    }

    /// Two members of one household share an address: a bounce that names no message marks both.
    @Test func aSharedAddressMarksEveryMemberWithIt() throws {
        let election = try MailCLITests.association()
        let family = election.write(
            "family.csv", "Name,Email,Unit\nKim One,family@example.org,3A-001\nKim Two,Family@Example.org,3A-002\n")
        try election.ok([
            "voter", "authorize", "--place", "1", "--from", family, "--identity-column", "Unit", "--name-column",
            "Name", "--email-column", "Email", "--tokens-out", election.root + "/family-tokens.csv",
        ])
        let relay = try MailCLITests.Relay(root: election.root)
        defer { relay.stop() }
        let first = try MailCLITests.mail(election, relay)
        #expect(first.out.hasPrefix("4 messages sent, 1 failed"), "\(first.out)\(first.err)")
        let mbox = election.write("family.mbox", Self.postfixBounce("FAMILY@example.ORG"))
        let read = try #require(try json(try election.ok(["voter", "bounces", mbox, "--json"])) as? [String: Int])
        #expect(read["bounced"] == 2 && read["not_in_contact_book"] == 0, "\(read)")
        let log = try Self.logLines(election)
        #expect(log["3a-001"]?.hasPrefix("bounced\t5.1.1 ") == true && log["3a-002"]?.hasPrefix("bounced\t") == true)
        #expect(log["2g-001"]?.hasPrefix("sent\t") == true, "\(log)")
        let resend = try MailCLITests.mail(election, relay, ["--failed-only", "--json"])
        let totals = try #require(try json(resend.out) as? [String: Any])
        #expect(totals["recipients"] as? Int == 3 && totals["sent"] as? Int == 2, "\(totals)")
        #expect(
            try relay.messages().dropFirst(4).compactMap { ($0["recipients"] as? [String])?.first } == [
                "family@example.org", "Family@Example.org",
            ])
    }

    @Test func badInputIsRefusedInOneLineAndWritesNothing() throws {
        let election = try MailCLITests.association()
        let relay = try MailCLITests.Relay(root: election.root)
        defer { relay.stop() }
        _ = try MailCLITests.mail(election, relay)
        let logFile = election.keys + "/mail.sealed"
        let before = try Data(contentsOf: URL(fileURLWithPath: logFile))
        let good = election.write("good.eml", Self.postfixBounce("jose@example.org"))

        let notMaildir = election.root + "/not-a-maildir"
        try FileManager.default.createDirectory(atPath: notMaildir, withIntermediateDirectories: true)
        let latin1 = election.root + "/latin1.eml"
        try Data("Subject: Caf\u{e9}\n\nd\u{e9}j\u{e0}\n".utf8.map { $0 == 0xC3 ? 0x20 : $0 }).write(
            to: URL(fileURLWithPath: latin1))
        let damaged = election.write(
            "damaged.eml",
            Self.postfixBounce("jose@example.org").replacingOccurrences(
                of: "--4Z1xYc3kPqz9sW.1764465164/mx.example.org--", with: ""))
        let huge = election.root + "/huge.mbox"
        #expect(FileManager.default.createFile(atPath: huge, contents: nil))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: huge))
        try handle.truncate(atOffset: 65 << 20)
        try handle.close()
        let cases: [(String, String)] = [
            (notMaildir, "\(notMaildir) is a directory but not a Maildir (it has no new/ and cur/)"),
            (latin1, "\(latin1) is not UTF-8 text"),
            (damaged, "\(damaged): damaged MIME: a multipart/report without its closing boundary"),
            (huge, "\(huge) is over 64 MB"),
            (election.root + "/missing.eml", "no such file or directory"),
        ]
        for (path, message) in cases {
            // The good file first: nothing of it is recorded when a later one is bad.
            let result = try election.vote(["voter", "bounces", good, path])
            #expect(result.status == 1 && result.err.contains(message), "\(result.err)")
            #expect(result.err.split(separator: "\n").count == 1, "\(result.err)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: logFile)) == before)
        }
    }
}
