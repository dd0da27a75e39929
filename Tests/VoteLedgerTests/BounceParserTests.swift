import Foundation
import Mail
import Testing
import VoteLedger

/// Delivery status notifications as real MTAs write them (Postfix, Exim, Gmail), and the messages a mailbox also
/// holds that are not one: what `vote voter bounces` reads.
@Suite struct BounceParserTests {
    // MARK: - Fixtures

    /// Postfix's bounce (`bounce(8)`): the boundary folded onto a tab-indented line, a folded Diagnostic-Code, the
    /// returned message's headers as text/rfc822-headers.
    static let postfix = """
        Return-Path: <>
        Received: by mx.example.org (Postfix)
        \tid 4Z1xYc3kPqz9sW; Mon, 30 Nov 2026 01:12:44 +0000 (UTC)
        Date: Mon, 30 Nov 2026 01:12:44 +0000 (UTC)
        From: MAILER-DAEMON@mx.example.org (Mail Delivery System)
        Subject: Undelivered Mail Returned to Sender
        To: vote@example.org
        Auto-Submitted: auto-replied
        MIME-Version: 1.0
        Content-Type: multipart/report; report-type=delivery-status;
        \tboundary="4Z1xYc3kPqz9sW.1764465164/mx.example.org"
        Content-Transfer-Encoding: 7bit
        Message-Id: <20261130011244.4Z1xYc3kPqz9sW@mx.example.org>

        This is a MIME-encapsulated message.

        --4Z1xYc3kPqz9sW.1764465164/mx.example.org
        Content-Description: Notification
        Content-Type: text/plain; charset=us-ascii

        This is the mail system at host mx.example.org.

        I'm sorry to have to inform you that your message could not
        be delivered to one or more recipients. It's attached below.

        <jose@example.org>: host mail.example.org[192.0.2.25] said: 550 5.1.1
            <jose@example.org>: Recipient address rejected: User unknown in local
            recipient table (in reply to RCPT TO command)

        --4Z1xYc3kPqz9sW.1764465164/mx.example.org
        Content-Description: Delivery report
        Content-Type: message/delivery-status

        Reporting-MTA: dns; mx.example.org
        X-Postfix-Queue-ID: 4Z1xYc3kPqz9sW
        X-Postfix-Sender: rfc822; vote@example.org
        Arrival-Date: Mon, 30 Nov 2026 01:12:40 +0000 (UTC)

        Final-Recipient: rfc822; jose@example.org
        Original-Recipient: rfc822;Jose@Example.ORG
        Action: failed
        Status: 5.1.1
        Remote-MTA: dns; mail.example.org
        Diagnostic-Code: smtp; 550 5.1.1 <jose@example.org>: Recipient address
            rejected: User unknown in local recipient table

        --4Z1xYc3kPqz9sW.1764465164/mx.example.org
        Content-Description: Undelivered Message Headers
        Content-Type: text/rfc822-headers

        Return-Path: <vote@example.org>
        From: vote@example.org
        To: "Núñez, José" <jose@example.org>
        Subject: Your vote: Test Union
        Message-ID: <0c6f2a4e-1111-4222-8333-944455556666@example.org>
        MIME-Version: 1.0

        --4Z1xYc3kPqz9sW.1764465164/mx.example.org--

        """

    /// Exim's delay warning (`delay_warning`): a multipart/report whose one recipient is delayed, not failed.
    static let eximDelayed = """
        Received: from mailnull by mx2.example.net with local (Exim 4.97)
        \tid 1vPq2R-000abc-Ef
        \tfor vote@example.org; Mon, 30 Nov 2026 02:00:01 +0000
        X-Failed-Recipients: minsu@example.net
        Auto-Submitted: auto-replied
        From: Mail Delivery System <Mailer-Daemon@mx2.example.net>
        To: vote@example.org
        Content-Type: multipart/report; report-type=delivery-status; boundary=1764468001-eximdsn-1804289383
        MIME-Version: 1.0
        Subject: Warning: message 1vPq2R-000abc-Ef delayed 24 hours

        --1764468001-eximdsn-1804289383
        Content-type: text/plain; charset=us-ascii

        This message was created automatically by mail delivery software.
        A message that you sent has not yet been delivered to one or more of its
        recipients after more than 24 hours on the queue on mx2.example.net.

        --1764468001-eximdsn-1804289383
        Content-type: message/delivery-status

        Reporting-MTA: dns; mx2.example.net

        Action: delayed
        Final-Recipient: rfc822;minsu@example.net
        Status: 4.0.0
        Remote-MTA: dns; mail.example.net
        Diagnostic-Code: smtp; 451 4.7.1 Greylisting in action, please come back later
        Will-Retry-Until: Thu, 03 Dec 2026 02:00:01 +0000

        --1764468001-eximdsn-1804289383
        Content-type: text/rfc822-headers

        Message-ID: <7d1c-exim@example.org>
        Subject: Your vote: Test Union

        --1764468001-eximdsn-1804289383--

        """

    /// Gmail's bounce: a multipart/related first part (text and HTML alternatives), a folded Diagnostic-Code in
    /// Gmail's multi-line SMTP reply, the original Message-ID among the per-message fields and the message returned
    /// as message/rfc822.
    static let gmail = """
        Delivered-To: vote@example.org
        Return-Path: <>
        From: Mail Delivery Subsystem <mailer-daemon@googlemail.com>
        To: vote@example.org
        Auto-Submitted: auto-replied
        Subject: Delivery Status Notification (Failure)
        References: <b1c2@example.org>
        In-Reply-To: <b1c2@example.org>
        X-Failed-Recipients: ANA@Example.COM
        Message-ID: <6745a1b2.050a0220.3c2a1.7b0cGMR@mx.google.com>
        Date: Sun, 29 Nov 2026 17:13:22 -0800 (PST)
        MIME-Version: 1.0
        Content-Type: multipart/report; boundary="000000000000a1b2c3d4e5f60718"; report-type=delivery-status

        --000000000000a1b2c3d4e5f60718
        Content-Type: multipart/related; boundary="000000000000a1b2c3d4e5f60720"

        --000000000000a1b2c3d4e5f60720
        Content-Type: multipart/alternative; boundary="000000000000a1b2c3d4e5f60728"

        --000000000000a1b2c3d4e5f60728
        Content-Type: text/plain; charset="UTF-8"

        ** Address not found **

        Your message wasn't delivered to ANA@Example.COM because the address couldn't be found.

        --000000000000a1b2c3d4e5f60728
        Content-Type: text/html; charset="UTF-8"

        <html><body><h2>Address not found</h2></body></html>

        --000000000000a1b2c3d4e5f60728--
        --000000000000a1b2c3d4e5f60720--
        --000000000000a1b2c3d4e5f60718
        Content-Type: message/delivery-status

        Reporting-MTA: dns; googlemail.com
        Received-From-MTA: dns; vote@example.org
        Arrival-Date: Sun, 29 Nov 2026 17:13:21 -0800 (PST)
        X-Original-Message-ID: <b1c2@example.org>

        Final-Recipient: rfc822; ANA@Example.COM
        Action: failed
        Status: 5.1.1
        Remote-MTA: dns; mx.example.com. (192.0.2.40, the server for the domain example.com.)
        Diagnostic-Code: smtp; 550-5.1.1 The email account that you tried to reach does not exist. Please try
         550-5.1.1 double-checking the recipient's email address for typos or
         550 5.1.1 unnecessary spaces.  a1si2345678pgb.1 - gsmtp
        Last-Attempt-Date: Sun, 29 Nov 2026 17:13:22 -0800 (PST)

        --000000000000a1b2c3d4e5f60718
        Content-Type: message/rfc822

        From: vote@example.org
        To: ANA@Example.COM
        Subject: Your vote: Test Union
        Message-ID: <b1c2@example.org>
        Content-Type: text/plain; charset=utf-8

        Dear Ana,

        --000000000000a1b2c3d4e5f60718--

        """

    /// An old-style bounce (plain text, no DSN), as Exim wrote before its DSNs, and an out-of-office reply.
    static let plainBounce = """
        From: Mail Delivery System <Mailer-Daemon@old.example.net>
        To: vote@example.org
        Subject: Mail delivery failed: returning message to sender
        Content-Type: text/plain

        This message was created automatically by mail delivery software.

        A message that you sent could not be delivered to one or more of its
        recipients. This is a permanent error. The following address(es) failed:

          someone@old.example.net
            retry timeout exceeded

        """

    static func crlf(_ text: String) -> String { text.replacingOccurrences(of: "\n", with: "\r\n") }

    // MARK: - Reports

    @Test(arguments: [false, true]) func postfixFailureWithFoldedHeaders(crlf: Bool) throws {
        let report = try #require(try BounceParser.report(in: crlf ? Self.crlf(Self.postfix) : Self.postfix))
        #expect(report.originalMessageID == "0c6f2a4e-1111-4222-8333-944455556666@example.org")
        #expect(
            report.recipients == [
                DeliveryStatus(
                    finalRecipient: "jose@example.org", originalRecipient: "Jose@Example.ORG", action: .failed,
                    status: "5.1.1",
                    diagnostic:
                        "550 5.1.1 <jose@example.org>: Recipient address rejected: User unknown in local recipient table"
                )
            ])
    }

    @Test(arguments: [false, true]) func eximDelayIsNotAFailure(crlf: Bool) throws {
        let report = try #require(try BounceParser.report(in: crlf ? Self.crlf(Self.eximDelayed) : Self.eximDelayed))
        #expect(report.recipients.count == 1)
        #expect(report.recipients[0].action == .delayed && report.recipients[0].status == "4.0.0")
        #expect(report.recipients[0].finalRecipient == "minsu@example.net")
        #expect(report.originalMessageID == "7d1c-exim@example.org")
    }

    @Test(arguments: [false, true]) func gmailFailureInsideNestedParts(crlf: Bool) throws {
        let report = try #require(try BounceParser.report(in: crlf ? Self.crlf(Self.gmail) : Self.gmail))
        #expect(report.originalMessageID == "b1c2@example.org")
        let recipient = try #require(report.recipients.first)
        #expect(recipient.finalRecipient == "ANA@Example.COM" && recipient.action == .failed)
        #expect(recipient.originalRecipient == nil && recipient.status == "5.1.1")
        #expect(
            recipient.diagnostic
                == "550-5.1.1 The email account that you tried to reach does not exist. Please try 550-5.1.1 double-checking the recipient's email address for typos or 550 5.1.1 unnecessary spaces.  a1si2345678pgb.1 - gsmtp"
        )
    }

    @Test func aReportInBase64IsRead() throws {
        let fields =
            "Reporting-MTA: dns; mx\r\n\r\nFinal-Recipient: rfc822; a@b.example\r\nAction: failed\r\n"
            + "Status: 5.2.2\r\n"
        let message = """
            Content-Type: multipart/report; report-type="Delivery-Status"; boundary=b

            --b
            Content-Type: message/delivery-status
            Content-Transfer-Encoding: base64

            \(Data(fields.utf8).base64EncodedString())
            --b--

            """
        let report = try #require(try BounceParser.report(in: message))
        #expect(report.recipients.map(\.status) == ["5.2.2"])
        #expect(report.originalMessageID == nil)
    }

    @Test func messagesThatAreNotDeliveryReports() throws {
        #expect(try BounceParser.report(in: Self.plainBounce) == nil)
        #expect(try BounceParser.report(in: Self.crlf(Self.plainBounce)) == nil)
        // A read receipt is a report, but not of delivery.
        let receipt = """
            Content-Type: multipart/report; report-type=disposition-notification; boundary="r"

            --r
            Content-Type: message/disposition-notification

            Final-Recipient: rfc822; jose@example.org
            Disposition: manual-action/MDN-sent-manually; displayed

            --r--

            """
        #expect(try BounceParser.report(in: receipt) == nil)
        // A newsletter's alternatives.
        let alternative = """
            Content-Type: multipart/alternative; boundary=x

            --x
            Content-Type: text/plain

            hello
            --x--

            """
        #expect(try BounceParser.report(in: alternative) == nil)
    }

    // MARK: - Damaged input

    @Test func damagedMIMEIsRefusedInOneLine() throws {
        let noClosing = String(Self.postfix.split(separator: "--4Z1xYc3kPqz9sW.1764465164/mx.example.org--")[0])
        let noBoundary = Self.postfix.replacingOccurrences(
            of: "\tboundary=\"4Z1xYc3kPqz9sW.1764465164/mx.example.org\"", with: "\tcharset=us-ascii")
        let noStatusPart = Self.postfix.replacingOccurrences(
            of: "Content-Type: message/delivery-status", with: "Content-Type: text/plain")
        let noAction = Self.postfix.replacingOccurrences(of: "Action: failed\n", with: "")
        let badHeader = "this is not a header\n\nbody\n"
        let cases: [(String, String)] = [
            (noClosing, "without its closing boundary"), (noBoundary, "without a boundary"),
            (noStatusPart, "without its message/delivery-status part"), (noAction, "a recipient without Action"),
            (badHeader, "a header line without a field name and colon"),
        ]
        for (message, reason) in cases {
            do {
                _ = try BounceParser.report(in: message)
                Issue.record("no error for a message that should say \(reason)")
            } catch {
                #expect(error.message.contains(reason), "\(error.message)")
                #expect(!error.message.contains("\n"))
            }
        }
    }

    /// Every fixture cut short anywhere, or with a line's end lost, is read or refused in one line: never a crash.
    @Test func cutOrMangledReportsNeverCrash() {
        for fixture in [Self.postfix, Self.eximDelayed, Self.gmail, Self.crlf(Self.gmail)] {
            let scalars = Array(fixture.unicodeScalars)
            for cut in stride(from: 0, to: scalars.count, by: 11) {
                var view = String.UnicodeScalarView()
                view.append(contentsOf: scalars[..<cut])
                let short = String(view)
                var mangled = String.UnicodeScalarView()
                mangled.append(contentsOf: scalars.enumerated().filter { $0.offset != cut }.map(\.element))
                for message in [short, String(mangled)] {
                    do { _ = try BounceParser.report(in: message) } catch {
                        #expect(!error.message.isEmpty && !error.message.contains("\n"))
                    }
                }
            }
        }
    }

    // MARK: - Mailboxes

    @Test func anMboxSplitsAtItsFromLinesOnly() {
        let mbox =
            "From MAILER-DAEMON  Mon Nov 30 01:12:44 2026\n" + Self.postfix + "\n"
            + "From MAILER-DAEMON  Mon Nov 30 02:00:01 2026\n" + Self.plainBounce
            + ">From the office: a quoted line\n\n"
            + "From Mailer-Daemon@mx2.example.net Mon Nov 30 02:00:02 2026\r\n" + Self.crlf(Self.eximDelayed)
        let messages = SavedMail.split(mbox)
        #expect(messages.count == 3)
        #expect(messages[1].contains("\nFrom the office: a quoted line\n"))
        #expect(messages[0].hasPrefix("Return-Path: <>\n"))
        #expect(SavedMail.split(Self.postfix) == [Self.postfix])
    }
}
