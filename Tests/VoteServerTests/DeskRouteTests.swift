import FileStore
import Foundation
import Hummingbird
import HummingbirdTesting
import TestSupport
import Testing
import VoteLedger
import VoteServer

/// The officer's desk (issue 36): `GET /api/v1/admin/places/P/desk` counts from the server's own ledger and draws
/// turnout over time from the vote events' block times; `POST /api/v1/admin/places/P/mail` mails through the relay
/// `vote serve` was started with, one mailing at a time, and `GET /api/v1/admin/mail` follows it.
@Suite(.serialized) struct DeskRouteTests {
    @Test func theDeskCountsTheLedgersVotesOverTime() async throws {
        let fixture = try ServedLedger("desk by route")
        try await fixture.testRoutes { client in
            let tokens = try await fixture.register(
                .router(client), candidates: ["Ada", "Grace"], voters: ["member-1", "member-2", "member-3", "member-4"])
            let withdrawn = try await client.executeRequest(
                uri: "/api/v1/places/1/voters/withdraw", method: .post, headers: fixture.auth,
                body: body(["identity": "member-4"]))
            #expect(withdrawn.status == .ok, "\(String(buffer: withdrawn.body))")
            let desk = "/api/v1/admin/places/1/desk"
            let before = try await client.executeRequest(
                uri: desk, method: .get, headers: fixture.auth, body: ByteBuffer())
            #expect(before.status == .ok, "\(String(buffer: before.body))")
            let empty = object(before.body)
            #expect(empty["voted"] as? Int == 0 && empty["authorized"] as? Int == 3, "\(empty)")
            #expect((empty["timeline"] as? [String: Any])?["buckets"] as? [Any] != nil, "\(empty)")

            // Two votes ten minutes into the window, one at forty; the desk is read at fifty: ten buckets of 5 min.
            let votes = "/api/v1/places/1/votes"
            for (minute, token) in [(10, tokens[0]), (10, tokens[1]), (40, tokens[2])] {
                fixture.clock.set(fixture.start + hour + Int64(minute) * 60_000)
                let cast = try await client.executeRequest(
                    uri: votes, method: .post, headers: jsonHeaders, body: body(["candidate": 1, "token": token]))
                #expect(cast.status == .created || cast.status == .ok, "\(String(buffer: cast.body))")
            }
            fixture.clock.set(fixture.start + hour + 50 * 60_000)
            let read = try await client.executeRequest(
                uri: desk, method: .get, headers: fixture.auth, body: ByteBuffer())
            #expect(read.status == .ok, "\(String(buffer: read.body))")
            let figures = object(read.body)
            #expect(figures["authorized"] as? Int == 3 && figures["withdrawn"] as? Int == 1, "\(figures)")
            #expect(figures["voted"] as? Int == 3 && figures["percentage"] as? Double == 100, "\(figures)")
            #expect(figures["issued"] == nil && figures["mail"] == nil, "\(figures)")
            #expect(figures["mail_action"] as? Bool == false, "\(figures)")
            let timeline = try #require(figures["timeline"] as? [String: Any])
            #expect(timeline["bucket_seconds"] as? Int == 300, "\(timeline)")
            let buckets = try #require(timeline["buckets"] as? [[String: Any]])
            #expect(buckets.map { $0["votes"] as? Int } == [0, 0, 2, 0, 0, 0, 0, 0, 1, 0], "\(buckets)")
            #expect(buckets.map { $0["total"] as? Int } == [0, 0, 2, 2, 2, 2, 2, 2, 3, 3], "\(buckets)")
            #expect(buckets.first?["start"] as? String == iso(fixture.start + hour), "\(buckets)")

            // Refusals: no such place, no token, a wrong token, no relay, a kind that is not one. Nothing written.
            let head = try fixture.head()
            let unknown = try await client.executeRequest(
                uri: "/api/v1/admin/places/9/desk", method: .get, headers: fixture.auth, body: ByteBuffer())
            #expect(unknown.status == .notFound && errorCode(unknown.body) == "place_not_found")
            let anonymous = try await client.executeRequest(uri: desk, method: .get, headers: [:], body: ByteBuffer())
            #expect(anonymous.status == .unauthorized)
            let wrong = try await client.executeRequest(
                uri: desk, method: .get, headers: adminHeaders(String(repeating: "0", count: 64)), body: ByteBuffer())
            #expect(wrong.status == .forbidden)
            let mail = "/api/v1/admin/places/1/mail"
            let noRelay = try await client.executeRequest(
                uri: mail, method: .post, headers: fixture.auth, body: body(["kind": "reminder"]))
            #expect(
                noRelay.status == .conflict && errorCode(noRelay.body) == "no_relay", "\(String(buffer: noRelay.body))")
            #expect(String(buffer: noRelay.body).contains("vote serve was started without a relay"))
            let noPlace = try await client.executeRequest(
                uri: "/api/v1/admin/places/9/mail", method: .post, headers: fixture.auth,
                body: body(["kind": "reminder"]))
            #expect(noPlace.status == .notFound)
            let noToken = try await client.executeRequest(
                uri: mail, method: .post, headers: [.contentType: "application/json"], body: body(["kind": "reminder"]))
            #expect(noToken.status == .unauthorized)
            let progress = try await client.executeRequest(
                uri: "/api/v1/admin/mail", method: .get, headers: fixture.auth, body: ByteBuffer())
            #expect(progress.status == .ok && object(progress.body)["state"] as? String == "idle")
            #expect(try fixture.head() == head)
            let document = try await client.executeRequest(
                uri: "/api/v1/openapi.json", method: .get, headers: [:], body: ByteBuffer())
            let paths = object(document.body)["paths"] as? [String: Any] ?? [:]
            for route in [
                "/api/v1/admin/places/{place}/desk", "/api/v1/admin/places/{place}/mail", "/api/v1/admin/mail",
            ] {
                #expect(paths[route] != nil, "\(route) is not documented")
            }
        }
    }

    /// The console's voter upload with contact columns fills the contact book as `vote voter authorize` does: the
    /// desk then counts the members in it; a memory ledger (no key directory) refuses contact columns, writing nothing.
    @Test func contactColumnsOfTheUploadFillTheContactBook() async throws {
        let fixture = try ServedLedger("desk contacts", store: .file)
        try await fixture.testRoutes { client in
            let created = try await client.executeRequest(
                uri: "/api/v1/places", method: .post, headers: fixture.auth, body: body(placeBody(from: fixture.start)))
            #expect(created.status == .created)
            let list =
                "Name,Email,Unit,Lang,Zone\nJo Kim,jo@example.org,U-1,ko,Asia/Seoul\nNo Mail,,U-2,,\n"
                + "Bad,not-an-address,U-3,en,\nNowhere,n@example.org,U-4,,Mars/Olympus\n"
            let uri =
                "/api/v1/places/1/voters?identity_column=Unit&name_column=Name&email_column=Email&language_column=Lang"
                + "&time_zone_column=Zone"
            let uploaded = try await client.executeRequest(
                uri: uri, method: .post, headers: adminHeaders(fixture.admin, csv: true), body: ByteBuffer(string: list)
            )
            #expect(uploaded.status == .created, "\(String(buffer: uploaded.body))")
            let answer = object(uploaded.body)
            #expect((answer["tokens"] as? [Any])?.count == 2, "\(answer)")
            #expect(answer["rejected_total"] as? Int == 2, "\(answer)")
            let reasons = (answer["rejected"] as? [[String: Any]] ?? []).compactMap { $0["message"] as? String }
            #expect(reasons.contains { $0.contains("\"Mars/Olympus\" is not a time zone name") }, "\(answer)")
            let desk = try await client.executeRequest(
                uri: "/api/v1/admin/places/1/desk", method: .get, headers: fixture.auth, body: ByteBuffer())
            let mail = try #require(object(desk.body)["mail"] as? [String: Any], "\(String(buffer: desk.body))")
            #expect(mail["in_contact_book"] as? Int == 2 && mail["without_email"] as? Int == 1, "\(mail)")
            #expect(mail["not_mailed"] as? Int == 1, "\(mail)")
            let alone = try await client.executeRequest(
                uri: "/api/v1/places/1/voters?email_column=Email", method: .post,
                headers: adminHeaders(fixture.admin, csv: true), body: ByteBuffer(string: list))
            #expect(alone.status == .badRequest && String(buffer: alone.body).contains("email_column goes with"))
        }
        let memory = try ServedLedger("desk no contacts")
        try await memory.testRoutes { client in
            let created = try await client.executeRequest(
                uri: "/api/v1/places", method: .post, headers: memory.auth, body: body(placeBody(from: memory.start)))
            #expect(created.status == .created)
            let head = try memory.head()
            let refused = try await client.executeRequest(
                uri: "/api/v1/places/1/voters?identity_column=1&email_column=2", method: .post,
                headers: adminHeaders(memory.admin, csv: true),
                body: ByteBuffer(string: "Unit,Email\nU-1,a@example.org\n"))
            #expect(refused.status == .conflict && errorCode(refused.body) == "no_contact_book")
            #expect(try memory.head() == head)
        }
    }

    /// A real `vote serve` with the relay options of `vote voter mail`, over a contact book `vote voter authorize`
    /// filled from a membership list: the desk's mail figures, invitations and a reminder sent from the console's
    /// routes to a real relay, and a mailing refused while another holds the mail log.
    @Test func theDeskMailsThroughTheRelayOneMailingAtATime() async throws {
        let ledger = try ProcessLedger("desk mail")
        try SMTPTestRelay.makeCertificate(root: ledger.root)
        let relay = try SMTPTestRelay(root: ledger.root)
        defer { relay.stop() }

        // The place, created through a server on the real clock; its members from their list by the CLI.
        let registration = try ledger.serve(offset: 0)
        let admin = try String(contentsOfFile: ledger.tokenFile, encoding: .utf8).trimmingCharacters(
            in: .whitespacesAndNewlines)
        SecretsLog.record([admin])
        let created = try await fetch(
            registration.port, "/api/v1/places", .post, headers: adminHeaders(admin),
            body: body(placeBody(from: ledger.start)))
        #expect(created.status == .created)
        let candidate = try await fetch(
            registration.port, "/api/v1/places/1/candidates", .post, headers: adminHeaders(admin),
            body: body(["name": "Ada Park"]))
        #expect(candidate.status == .created)
        #expect(registration.stop().status == 0)
        let list = ledger.root + "/members.csv"
        try """
        Name,Email,Unit
        Jo Kim,jo@example.org,2G-001
        Min Lee,min@example.org,2G-002
        Refused Person,refuse@example.org,2G-003
        No Mail,,2G-004

        """.write(toFile: list, atomically: true, encoding: .utf8)
        let tokensFile = ledger.root + "/tokens.csv"
        let authorized = try VoteBinary.run(
            [
                "voter", "authorize", "--place", "1", "--from", list, "--identity-column", "Unit", "--name-column",
                "Name", "--email-column", "Email", "--tokens-out", tokensFile,
            ] + ledger.location)
        #expect(authorized.status == 0, "\(authorized.err)")
        let tokens = try String(contentsOfFile: tokensFile, encoding: .utf8).split(separator: "\n").filter {
            $0.hasPrefix("2G-")
        }.map { String($0.split(separator: ",")[1]) }
        SecretsLog.record(tokens)
        try #require(tokens.count == 4)

        // Voting open: the server mails through the relay, the password from a file as vote voter mail reads it.
        let relayArguments = [
            "--base-url", "https://vote.example.org", "--help-contact", "secretary@example.org", "--from",
            "vote@example.org", "--smtp-host", "127.0.0.1", "--smtp-port", String(relay.port), "--smtp-cacert",
            ledger.root + "/relay-cert.pem", "--smtp-user", "officer", "--smtp-password-file",
            ledger.root + "/smtp-password",
        ]
        let server = try ledger.serve(offset: hour + 60_000, arguments: relayArguments + ["--rate", "100000"])
        let auth = adminHeaders(admin)
        let desk = "/api/v1/admin/places/1/desk"
        let fresh = object(try await fetch(server.port, desk, headers: auth).body)
        let freshMail = try #require(fresh["mail"] as? [String: Any], "\(fresh)")
        #expect(freshMail["in_contact_book"] as? Int == 4 && freshMail["without_email"] as? Int == 1, "\(freshMail)")
        #expect(freshMail["not_mailed"] as? Int == 3 && fresh["mail_action"] as? Bool == true, "\(fresh)")

        let invited = try await fetch(
            server.port, "/api/v1/admin/places/1/mail", .post, headers: auth, body: body(["kind": "invitation"]))
        #expect(invited.status == .accepted, "\(String(buffer: invited.body ?? ByteBuffer()))")
        let done = try await Self.mailingEnds(server.port, auth)
        #expect(done["sent"] as? Int == 2 && done["failed"] as? Int == 1 && done["total"] as? Int == 3, "\(done)")
        #expect(done["without_address"] as? Int == 1, "\(done)")
        #expect(try relay.messages().count == 2)

        // One member votes; the reminder goes to the one with an address who has not.
        let cast = try await fetch(
            server.port, "/api/v1/places/1/votes", .post, headers: jsonHeaders,
            body: body(["candidate": 1, "token": tokens[0]]))
        #expect(cast.status == .created || cast.status == .ok, "\(String(buffer: cast.body ?? ByteBuffer()))")
        let reminded = try await fetch(
            server.port, "/api/v1/admin/places/1/mail", .post, headers: auth, body: body(["kind": "reminder"]))
        #expect(reminded.status == .accepted, "\(String(buffer: reminded.body ?? ByteBuffer()))")
        let reminder = try await Self.mailingEnds(server.port, auth)
        #expect(reminder["sent"] as? Int == 1 && reminder["failed"] as? Int == 1, "\(reminder)")
        let messages = try relay.messages()
        #expect(messages.count == 3)
        #expect((messages.last?["recipients"] as? [String]) == ["min@example.org"], "\(messages.last ?? [:])")

        let after = object(try await fetch(server.port, desk, headers: auth).body)
        #expect(after["voted"] as? Int == 1 && after["authorized"] as? Int == 4, "\(after)")
        let mail = try #require(after["mail"] as? [String: Any], "\(after)")
        let invitations = try #require(mail["invitations"] as? [String: Any])
        #expect(invitations["sent"] as? Int == 2 && invitations["refused"] as? Int == 1, "\(mail)")
        #expect((mail["reminders"] as? [String: Any])?["sent"] as? Int == 1, "\(mail)")
        #expect(mail["not_mailed"] as? Int == 0 && mail["last_reminder"] is String, "\(mail)")
        let buckets = try #require((after["timeline"] as? [String: Any])?["buckets"] as? [[String: Any]])
        #expect(buckets.last?["total"] as? Int == 1, "\(buckets)")

        // A mailing while another holds the mail log (here the test, as a `vote voter mail` run would) is a 409.
        let lock = try Self.mailLogLock(ledger)
        let busy = try await fetch(
            server.port, "/api/v1/admin/places/1/mail", .post, headers: auth, body: body(["kind": "reminder"]))
        #expect(
            busy.status == .conflict && errorCode(busy.body) == "mailing_under_way",
            "\(String(buffer: busy.body ?? ByteBuffer()))")
        #expect(try relay.messages().count == 3)
        close(lock)
        #expect(server.stop().status == 0)

        // A second mailing while the first is under way: at one message a minute the first holds the log for a
        // minute after its first message, and the second start, a moment after the first's answer, is refused.
        let slow = try ledger.serve(offset: hour + 60_000, arguments: relayArguments + ["--rate", "1"])
        let first = try await fetch(
            slow.port, "/api/v1/admin/places/1/mail", .post, headers: auth, body: body(["kind": "reminder"]))
        #expect(first.status == .accepted, "\(String(buffer: first.body ?? ByteBuffer()))")
        #expect(object(first.body)["total"] as? Int == 2, "\(String(buffer: first.body ?? ByteBuffer()))")
        let second = try await fetch(
            slow.port, "/api/v1/admin/places/1/mail", .post, headers: auth, body: body(["kind": "invitation"]))
        #expect(
            second.status == .conflict && errorCode(second.body) == "mailing_under_way",
            "\(String(buffer: second.body ?? ByteBuffer()))")
        let running = object(try await fetch(slow.port, "/api/v1/admin/mail", headers: auth).body)
        #expect(running["state"] as? String == "running" && running["kind"] as? String == "reminder", "\(running)")
        #expect(slow.stop().status == 0)
    }

    /// Holds the lock of the ledger's mail log, as a running `vote voter mail` does.
    static func mailLogLock(_ ledger: ProcessLedger) throws -> Int32 {
        let keys = KeyDirectory(defaultFor: ledger.ledger).path
        let descriptor = open(keys + "/mail.sealed.lock", O_RDWR | O_CREAT, 0o600)
        try #require(descriptor >= 0 && flock(descriptor, LOCK_EX | LOCK_NB) == 0)
        return descriptor
    }

    /// Polls the mailing's progress until it is no longer running (ten minutes at most), and returns it.
    static func mailingEnds(_ port: Int, _ auth: HTTPFields) async throws -> [String: Any] {
        let last = try await waitFor("the console's mailing to end", every: .milliseconds(100)) {
            String(buffer: try await fetch(port, "/api/v1/admin/mail", headers: auth).body ?? ByteBuffer())
        } until: {
            !$0.contains("\"running\"")
        }
        let progress = object(ByteBuffer(string: last))
        #expect(progress["state"] as? String == "done", "\(progress)")
        return progress
    }
}
