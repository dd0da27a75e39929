import Foundation
import TestSupport
import Testing

/// `vote voter mail` against a real SMTP relay (aiosmtpd, `Tests/mail/smtp_relay.py`): STARTTLS with a certificate of the
/// test's own, AUTH PLAIN, a recipient refused for good. The contact data comes from a membership list as an
/// association keeps it, stays sealed in the key directory, and never reaches the ledger.
@Suite(.serialized) struct MailCLITests {
    typealias Relay = SMTPTestRelay

    /// A ledger with a board place, its members authorised from a list with names, addresses and languages, and
    /// a certificate for the relay.
    static func association() throws -> TestElection {
        let election = try TestElection()
        _ = try election.place(name: "Board 2027", registration: 60, voting: 86_400)
        try election.ok(["candidate", "register", "--place", "1", "--name", "Ada Park"])
        let list = election.write(
            "members.csv",
            """
            Name,Email,Unit,Lang
            "Núñez, José",jose@example.org,2G-001,en
            김민수,minsu@example.org,2G-002,ko
            Refused Person,refuse@example.org,2G-003,
            No Mail,,2G-004,

            """)
        try election.ok([
            "voter", "authorize", "--place", "1", "--from", list, "--identity-column", "Unit", "--name-column", "Name",
            "--email-column", "Email", "--language-column", "Lang", "--tokens-out", election.root + "/tokens.csv",
        ])
        try SMTPTestRelay.makeCertificate(root: election.root)
        return election
    }

    static func mail(_ election: TestElection, _ relay: Relay, _ extra: [String] = []) throws -> VoteCLI.Result {
        try election.vote(
            [
                "voter", "mail", "--base-url", "https://vote.example.org", "--help-contact", "secretary@example.org",
                "--from", "vote@example.org", "--smtp-host", "127.0.0.1", "--smtp-port", String(relay.port),
                "--smtp-cacert", election.root + "/relay-cert.pem", "--smtp-user", "officer", "--smtp-password-file",
                election.root + "/smtp-password", "--time-zone", "Asia/Seoul", "--rate", "100000",
            ] + extra)
    }

    /// The token of `unit` in the tokens file.
    static func token(_ election: TestElection, _ unit: String) throws -> String {
        let lines = try String(contentsOfFile: election.root + "/tokens.csv", encoding: .utf8).split(separator: "\n")
        let line = try #require(lines.first { $0.hasPrefix(unit + ",") })
        return String(line.split(separator: ",")[1])
    }

    @Test func membersGetTheirLinksInTheirLanguageAndOnlyOnce() throws {
        let election = try Self.association()
        let relay = try Relay(root: election.root)
        defer { relay.stop() }

        let first = try Self.mail(election, relay)
        #expect(first.status == 1, "\(first.out)\(first.err)")
        #expect(first.out == "2 messages sent, 1 failed, 0 already sent or not due\n", "\(first.out)")
        #expect(first.err.contains("1 member to mail has no e-mail address"), "\(first.err)")
        #expect(first.err.contains("1 message failed"), "\(first.err)")
        let messages = try relay.messages()
        try #require(messages.count == 2)
        let jose = messages[0]
        #expect(jose["recipients"] as? [String] == ["jose@example.org"])
        #expect(jose["to"] as? String == "\"Núñez, José\" <jose@example.org>", "\(jose["to"] ?? "")")
        #expect(jose["subject"] as? String == "Your vote: Test Union")
        #expect(jose["tls"] as? Bool == true && jose["authenticated"] as? Bool == true)
        let text = try #require(jose["text"] as? String)
        let compact = try Self.token(election, "2G-001").replacingOccurrences(of: "-", with: "")
        #expect(text.hasPrefix("Dear Núñez, José,\n"), "\(text)")
        #expect(text.contains("https://vote.example.org/#/booth/1?t=\(compact)\n"), "\(text)")
        #expect(text.contains("(Asia/Seoul time)") && text.contains("Questions? Ask secretary@example.org."))
        #expect(
            (jose["html"] as? String)?.contains("<a href=\"https://vote.example.org/#/booth/1?t=\(compact)\">") == true)
        let minsu = messages[1]
        #expect(minsu["subject"] as? String == "투표 안내: Test Union")
        #expect((minsu["text"] as? String)?.hasPrefix("김민수 님께,") == true)

        // The refused recipient is in the log; running again mails no one a second time.
        let log = try election.ok(["voter", "mail-log"])
        #expect(log.contains("2g-003\trefuse@example.org\trefused\t550 5.1.1 no such user here"), "\(log)")
        let again = try Self.mail(election, relay, ["--failed-only", "--json"])
        let totals = try #require(try json(again.out) as? [String: Any])
        #expect(totals["recipients"] as? Int == 1 && totals["refused"] as? Int == 1 && totals["sent"] as? Int == 0)
        #expect(again.status == 1)
        let rerun = try Self.mail(election, relay)
        #expect(rerun.out.hasPrefix("0 messages sent, 1 failed, 2 already sent"), "\(rerun.out)")
        #expect(try relay.messages().count == 2)

        // Nothing of the contact data is on the ledger or in the key directory in the clear.
        for directory in [election.ledger, election.keys] {
            for name in try FileManager.default.contentsOfDirectory(atPath: directory) {
                let bytes = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name))
                for secret in ["example.org", "José", "김민수"] {
                    #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(name) holds \(secret)")
                }
            }
        }

        // Who has not voted, from the ledger's own state; a reminder goes only to them.
        election.advance(to: election.now.addingTimeInterval(120))
        try election.ok(["cast", "--place", "1", "--candidate", "1", "--token", try Self.token(election, "2G-001")])
        let pending = try #require(
            try json(try election.ok(["voter", "pending", "--place", "1", "--json"])) as? [String: Any])
        #expect(pending["authorized"] as? Int == 4 && pending["voted"] as? Int == 1)
        #expect(
            (pending["pending"] as? [[String: Any]])?.compactMap { $0["identity"] as? String } == [
                "2g-002", "2g-003", "2g-004",
            ])
        let reminder = try Self.mail(election, relay, ["--remind"])
        #expect(reminder.out.hasPrefix("1 message sent, 1 failed"), "\(reminder.out)\(reminder.err)")
        let reminded = try relay.messages()
        try #require(reminded.count == 3)
        #expect(reminded[2]["recipients"] as? [String] == ["minsu@example.org"])
        #expect((reminded[2]["subject"] as? String)?.hasPrefix("아직 투표하지 않으셨습니다") == true)

        // A re-issued token replaces the old one in the contact book: the next reminder carries the new link.
        let reissued = try election.vote(["voter", "reissue", "--place", "1", "--voter", "2G-002"])
        #expect(reissued.err.contains("(the contact book has it too)"), "\(reissued.err)")
        let newToken = reissued.out.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(
            of: "-", with: "")
        let invited = try Self.mail(election, relay)
        #expect(invited.out.hasPrefix("1 message sent, 1 failed"), "\(invited.out)\(invited.err)")
        let latest = try #require(try relay.messages().last)
        #expect(latest["recipients"] as? [String] == ["minsu@example.org"])
        #expect(latest["subject"] as? String == "투표 안내: Test Union")
        #expect((latest["text"] as? String)?.contains("?t=\(newToken)\n") == true, "\(latest["text"] ?? "")")
    }

    /// The relay dies in the middle of the second message: the run stops and says so; run again, it goes on
    /// where it stopped, and the member whose message went is not mailed a second time.
    @Test func anInterruptedRunResumesWithoutMailingAnyoneTwice() throws {
        let election = try Self.association()
        let dying = try Relay(root: election.root, dieAfter: 1)
        let stopped = try Self.mail(election, dying)
        dying.stop()
        #expect(stopped.status == 1)
        #expect(stopped.err.contains("run the same command again to go on where this stopped"), "\(stopped.err)")
        #expect(try dying.messages().count == 1)

        let relay = try Relay(root: election.root)
        defer { relay.stop() }
        let resumed = try Self.mail(election, relay)
        #expect(
            resumed.out.hasPrefix("resumed the invitation mailing: 1 message sent, 1 failed, 1 already sent"),
            "\(resumed.out)\(resumed.err)")
        let messages = try relay.messages()
        #expect(
            messages.compactMap { ($0["recipients"] as? [String])?.first } == ["jose@example.org", "minsu@example.org"])
    }

    /// Settings that cannot work fail before anything is mailed or logged, each in one line.
    @Test func wrongSettingsFailInOneLineAndLogNothing() throws {
        let election = try Self.association()
        let relay = try Relay(root: election.root)
        defer { relay.stop() }
        let untrusted = try election.vote([
            "voter", "mail", "--base-url", "https://vote.example.org", "--help-contact", "x", "--from",
            "vote@example.org",
            "--smtp-host", "127.0.0.1", "--smtp-port", String(relay.port), "--rate", "100000",
        ])
        #expect(
            untrusted.status == 1
                && untrusted.err.hasSuffix("its TLS certificate is not trusted: self-signed certificate\n"),
            "\(untrusted.err)")
        let plain = try Self.mail(election, relay, ["--smtp-security", "none"])
        #expect(
            plain.status != 0 && plain.err.contains("a password is never sent to an SMTP relay without TLS"),
            "\(plain.err)")
        let badZone = try Self.mail(election, relay, ["--time-zone", "Mars/Olympus"])
        #expect(badZone.status == 2 && badZone.err.contains("is not a time zone name"), "\(badZone.err)")
        let remote = try Self.mail(election, relay, ["--smtp-security", "none", "--smtp-host", "mail.example.org"])
        #expect(remote.status == 2 && remote.err.contains("for a relay on this machine only"), "\(remote.err)")

        // A second run while one holds the log's lock is refused, in one line.
        let lock = election.keys + "/mail.sealed.lock"
        let (holder, _, _) = try startProgram(
            "/usr/bin/env",
            [
                "python3", "-c",
                "import fcntl,os,sys,time; f=os.open(sys.argv[1], os.O_RDWR|os.O_CREAT, 0o600); fcntl.flock(f, fcntl.LOCK_EX); open(sys.argv[1]+'.held','w').close(); time.sleep(120)",
                lock,
            ])
        defer { kill(holder.processIdentifier, SIGKILL) }
        try waitForBlocking("the lock to be held") {
            FileManager.default.fileExists(atPath: lock + ".held")
        } until: {
            $0
        }
        let second = try Self.mail(election, relay)
        #expect(
            second.status == 1 && second.err.contains("another run is mailing from this key directory"), "\(second.err)"
        )
        #expect(try election.ok(["voter", "mail-log"]) == "no invitation was mailed yet\n")
        #expect(try relay.messages().isEmpty)
    }

    /// A cancelled place is mailed to no one: its links would be refused.
    @Test func aCancelledPlaceIsNotMailed() throws {
        let election = try Self.association()
        try election.ok(["place", "cancel", "--place", "1", "--reason", "merged into the spring meeting"])
        let relay = try Relay(root: election.root)
        defer { relay.stop() }
        let run = try Self.mail(election, relay)
        #expect(
            run.status == 0 && run.out == "0 messages sent, 0 failed, 0 already sent or not due\n",
            "\(run.out)\(run.err)")
        #expect(try relay.messages().isEmpty)
    }

    /// The contact book on disk: a record cut short (a crash inside an append) is dropped and the rest read; a
    /// flipped byte makes it damaged, said in one line, and nothing is mailed from it.
    @Test func aTornContactBookLosesOnlyItsTailAndADamagedOneIsRefused() throws {
        let election = try Self.association()
        let book = election.keys + "/contacts.sealed"
        let whole = try Data(contentsOf: URL(fileURLWithPath: book))
        let more = election.write("more.csv", "Name,Email,Unit\nLate Joiner,late@example.org,3A-001\n")
        try election.ok([
            "voter", "authorize", "--place", "1", "--from", more, "--identity-column", "Unit", "--name-column", "Name",
            "--email-column", "Email", "--tokens-out", election.root + "/more-tokens.csv",
        ])
        let pending = { () throws -> [String] in
            let answer = try #require(
                try json(try election.ok(["voter", "pending", "--place", "1", "--json"])) as? [String: Any])
            return (answer["pending"] as? [[String: Any]] ?? []).compactMap { $0["identity"] as? String }
        }
        #expect(try pending() == ["2g-001", "2g-002", "2g-003", "2g-004", "3a-001"])

        // Cut inside the second record, or inside its length: the first is read, the second as if never written.
        let grown = try Data(contentsOf: URL(fileURLWithPath: book))
        for cut in [whole.count + 10, whole.count + 5] {
            try grown.prefix(cut).write(to: URL(fileURLWithPath: book))
            #expect(try pending() == ["2g-001", "2g-002", "2g-003", "2g-004"])
        }

        // A flipped bit in the first record's length, which then points past the end of the file: refused as
        // damage, not dropped as a torn tail (the next append would cut off the second record with it).
        var longer = grown
        longer[1] ^= 0x01
        try longer.write(to: URL(fileURLWithPath: book))
        let lengthDamaged = try election.vote(["voter", "pending", "--place", "1"])
        #expect(
            lengthDamaged.status == 1
                && lengthDamaged.err.hasPrefix("vote: contact book \(book) is damaged at byte 0"),
            "\(lengthDamaged.err)")

        // A flipped byte inside the first record: refused, one line.
        var flipped = whole
        flipped[whole.count / 2] ^= 0x40
        try flipped.write(to: URL(fileURLWithPath: book))
        let damaged = try election.vote(["voter", "pending", "--place", "1"])
        #expect(
            damaged.status == 1 && damaged.err.hasPrefix("vote: contact book \(book) is damaged at byte 0"),
            "\(damaged.err)")
        #expect(damaged.err.split(separator: "\n").count == 1)
    }
}
