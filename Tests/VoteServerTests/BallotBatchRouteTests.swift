import BlindRSA
import Election
import Foundation
import Hummingbird
import HummingbirdTesting
import JSONViews
import Ledger
import LedgerCrypto
import Testing
import VoteLedger

@testable import VoteServer

/// An anonymous place that writes its ballots in batches (FORMAT.md §11.31), over HTTP: ballots are held and
/// answered 202 with their batch's due time, written together in one block when the rule says (a size, an
/// interval, voting about to close, the server stopping), and their receipts fetched once written.
@Suite struct BallotBatchRouteTests {
    typealias Device = AnonymousBallotRouteTests.Device

    /// An anonymous place with two candidates, the batch rule `batches`, and `voters` members; the clock is then
    /// moved `into` ms into voting. Returns the issuance codes and the place's ballot key.
    private static func place(
        _ fixture: ServedLedger, _ client: any TestClientProtocol, batches: [String: Any], voters: Int, into: Int64
    ) async throws -> (codes: [String], key: BlindRSAPublicKey) {
        var place = placeBody(from: fixture.start, ballot: "anonymous")
        place["batches"] = batches
        try await client.execute(uri: "/api/v1/places", method: .post, headers: fixture.auth, body: body(place)) {
            #expect($0.status == .created, "\(String(buffer: $0.body))")
        }
        for name in ["Ada", "Grace"] {
            try await client.execute(
                uri: "/api/v1/places/1/candidates", method: .post, headers: fixture.auth, body: body(["name": name])
            ) { #expect($0.status == .created) }
        }
        let members = (1...voters).map { "member-\($0)" }.joined(separator: "\n")
        let codes = try await client.execute(
            uri: "/api/v1/places/1/voters", method: .post, headers: adminHeaders(fixture.admin, csv: true),
            body: ByteBuffer(string: members)
        ) { answer in
            (object(answer.body)["tokens"] as? [[String: Any]] ?? []).compactMap { $0["token"] as? String }
        }
        SecretsLog.record(codes)
        let shown = try await client.execute(uri: "/api/v1/places/1", method: .get) { object($0.body) }
        let text = try #require(shown["ballot_key"] as? String)
        let spki = try #require(Base64URL.decode(text))
        fixture.clock.set(fixture.start + hour + into)
        return (codes, try BlindRSAPublicKey(derRepresentation: spki))
    }

    private static func post(
        _ client: any TestClientProtocol, _ uri: String, _ json: [String: Any]
    ) async throws -> (HTTPResponse.Status, [String: Any]) {
        try await client.execute(uri: uri, method: .post, headers: jsonHeaders, body: body(json)) {
            ($0.status, object($0.body))
        }
    }

    /// A credential issued for `code`: the device and the ballot for `candidate` it casts.
    private static func ballot(
        _ client: any TestClientProtocol, key: BlindRSAPublicKey, code: String, candidate: Int
    ) async throws -> [String: Any] {
        let device = try Device(key)
        let (status, answer) = try await post(
            client, "/api/v1/places/1/credentials", device.request.merging(["code": code]) { $1 })
        #expect(status == .ok)
        return device.ballot(try device.finalize(answer), candidate: candidate)
    }

    /// Asks for each ballot's receipt until every one is written (deadline: a minute), and returns where each went
    /// (block, event).
    private static func written(
        _ client: any TestClientProtocol, _ ballots: [[String: Any]]
    ) async throws -> [(height: Int, index: Int)] {
        let deadline = ContinuousClock.now + .seconds(60)
        var last = ""
        while ContinuousClock.now < deadline {
            var found: [(Int, Int)] = []
            for ballot in ballots {
                let (status, answer) = try await post(
                    client, "/api/v1/places/1/ballots/receipt", ["credential": ballot["credential"] as Any])
                last = "\(status) \(answer)"
                guard status == .ok, let height = answer["height"] as? Int, let index = answer["index"] as? Int else {
                    break
                }
                found.append((height, index))
            }
            if found.count == ballots.count { return found }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("the batch was not written within a minute; the last answer: \(last)")
        return []
    }

    /// The error code of an answer.
    private static func code(_ answer: [String: Any]) -> String? {
        (answer["error"] as? [String: Any])?["code"] as? String
    }

    /// Whether the ballots went into one block, one after another.
    private static func oneBlock(_ places: [(height: Int, index: Int)]) -> Bool {
        let indices = places.map(\.index).sorted()
        return Set(places.map(\.height)).count == 1 && indices.last! - indices.first! == indices.count - 1
    }

    @Test func aSizeRuleHoldsBallotsUntilTheBatchIsFull() async throws {
        let fixture = try ServedLedger("Batches by size")
        try await fixture.testRoutes { client in
            let (codes, key) = try await Self.place(fixture, client, batches: ["size": 3], voters: 4, into: 1)
            try await client.execute(uri: "/api/v1/places/1", method: .get) {
                let batches = object($0.body)["batches"] as? [String: Any]
                #expect(batches?["size"] as? Int == 3 && batches?["interval_seconds"] == nil)
            }
            var ballots: [[String: Any]] = []
            for (index, code) in codes.prefix(3).enumerated() {
                ballots.append(try await Self.ballot(client, key: key, code: code, candidate: 1 + index % 2))
            }
            let head = try fixture.head()
            var (status, answer) = try await Self.post(client, "/api/v1/places/1/ballots", ballots[0])
            #expect(status == .accepted && answer["held"] as? Bool == true, "\(answer)")
            #expect(answer["batch_due"] is NSNull && answer["receipt"] == nil)
            // Held, not written: the same ballot again answers the same; another choice with its credential is
            // refused; the receipt route says held.
            (status, answer) = try await Self.post(client, "/api/v1/places/1/ballots", ballots[0])
            #expect(status == .accepted && answer["held"] as? Bool == true)
            var changed = ballots[0]
            changed["candidate"] = 2
            (status, answer) = try await Self.post(client, "/api/v1/places/1/ballots", changed)
            #expect(status == .conflict && Self.code(answer) == "credential_already_voted", "\(answer)")
            (status, answer) = try await Self.post(
                client, "/api/v1/places/1/ballots/receipt", ["credential": ballots[0]["credential"] as Any])
            #expect(status == .accepted && answer["held"] as? Bool == true)
            // A ballot the rules refuse is refused at once, not held.
            var forged = ballots[1]
            forged["signature"] = ballots[2]["signature"]
            (status, answer) = try await Self.post(client, "/api/v1/places/1/ballots", forged)
            #expect(Self.code(answer) == "invalid_ballot_signature", "\(answer)")
            (status, _) = try await Self.post(client, "/api/v1/places/1/ballots", ballots[1])
            #expect(status == .accepted)
            try await Task.sleep(for: .seconds(1))
            #expect(try fixture.head() == head, "a batch of 2 was written under a rule of 3")

            (status, _) = try await Self.post(client, "/api/v1/places/1/ballots", ballots[2])
            #expect(status == .accepted)
            let places = try await Self.written(client, ballots)
            #expect(Self.oneBlock(places), "\(places)")
            try await client.execute(uri: "/api/v1/places/1/tally", method: .get) {
                let rows = object($0.body)["tally"] as? [[String: Any]] ?? []
                #expect(rows.map { $0["votes"] as? Int } == [2, 1], "\(rows)")
            }
            // Written: casting it again is refused as a credential that voted.
            (status, answer) = try await Self.post(client, "/api/v1/places/1/ballots", ballots[0])
            #expect(status == .conflict && Self.code(answer) == "credential_already_voted")
        }
    }

    @Test func anIntervalRuleWritesAtTheIntervalsEndAndEverythingBeforeVotingCloses() async throws {
        let fixture = try ServedLedger("Batches by interval")
        try await fixture.testRoutes { client in
            let (codes, key) = try await Self.place(
                fixture, client, batches: ["interval_seconds": 60], voters: 5, into: 10_000)
            var ballots: [[String: Any]] = []
            for code in codes { ballots.append(try await Self.ballot(client, key: key, code: code, candidate: 1)) }
            let head = try fixture.head()
            for ballot in ballots.prefix(2) {
                let (status, answer) = try await Self.post(client, "/api/v1/places/1/ballots", ballot)
                #expect(status == .accepted && answer["batch_due"] as? String == iso(fixture.start + hour + 60_000))
            }
            try await Task.sleep(for: .seconds(1))
            #expect(try fixture.head() == head, "a batch was written before its interval ended")
            fixture.clock.set(fixture.start + hour + 60_000)
            #expect(Self.oneBlock(try await Self.written(client, Array(ballots.prefix(2)))))

            // Held 20 s before voting ends: the interval would end after it, so it is written as voting closes.
            fixture.clock.set(fixture.start + 2 * hour - 20_000)
            var (status, answer) = try await Self.post(client, "/api/v1/places/1/ballots", ballots[2])
            #expect(status == .accepted, "\(answer)")
            #expect(answer["batch_due"] as? String == iso(fixture.start + 2 * hour - BallotBatches.closing))
            fixture.clock.set(fixture.start + 2 * hour - BallotBatches.closing)
            _ = try await Self.written(client, [ballots[2]])
            // In the last seconds a ballot is written as it arrives.
            (status, answer) = try await Self.post(client, "/api/v1/places/1/ballots", ballots[3])
            #expect(status == .created && answer["receipt"] is String, "\(status) \(answer)")
        }
    }

    /// An interval and a size: an interval that ends short of the size writes nothing, and its ballots are then due
    /// at the end of the current interval (the receipt route says so, not the time that passed); the interval that
    /// ends holding enough writes them all in one block.
    @Test func anIntervalShortOfTheSizeMovesTheDueTimeOn() async throws {
        let fixture = try ServedLedger("Batches by interval and size")
        try await fixture.testRoutes { client in
            let (codes, key) = try await Self.place(
                fixture, client, batches: ["interval_seconds": 60, "size": 3], voters: 3, into: 10_000)
            var ballots: [[String: Any]] = []
            for code in codes { ballots.append(try await Self.ballot(client, key: key, code: code, candidate: 2)) }
            let head = try fixture.head()
            for ballot in ballots.prefix(2) {
                let (status, answer) = try await Self.post(client, "/api/v1/places/1/ballots", ballot)
                #expect(status == .accepted && answer["batch_due"] as? String == iso(fixture.start + hour + 60_000))
            }
            fixture.clock.set(fixture.start + hour + 61_000)
            try await Task.sleep(for: .seconds(1))
            #expect(try fixture.head() == head, "an interval short of the size wrote its ballots")
            let (status, answer) = try await Self.post(
                client, "/api/v1/places/1/ballots/receipt", ["credential": ballots[0]["credential"] as Any])
            #expect(status == .accepted && answer["batch_due"] as? String == iso(fixture.start + hour + 120_000))
            let (third, held) = try await Self.post(client, "/api/v1/places/1/ballots", ballots[2])
            #expect(third == .accepted && held["batch_due"] as? String == iso(fixture.start + hour + 120_000))
            fixture.clock.set(fixture.start + hour + 120_000)
            #expect(Self.oneBlock(try await Self.written(client, ballots)))
        }
    }

    @Test func aServerThatStopsWritesWhatItHolds() async throws {
        let fixture = try ServedLedger("Batches at the stop")
        let held = try await buildApplication(fixture.server, configuration: .init(), logger: quietLogger).test(
            .router
        ) { client in
            let (codes, key) = try await Self.place(fixture, client, batches: ["size": 10], voters: 2, into: 1)
            let ballot = try await Self.ballot(client, key: key, code: codes[0], candidate: 2)
            let (status, _) = try await Self.post(client, "/api/v1/places/1/ballots", ballot)
            #expect(status == .accepted)
            let text = try #require(ballot["credential"] as? String)
            return try #require(Base64URL.decode(text))
        }
        let head = try fixture.head()
        try await fixture.close()
        #expect(try fixture.head() != head, "the held ballot was not written when the server stopped")
        let last = try #require(try fixture.source.block(at: try fixture.source.lastBlock().height))
        #expect(
            last.block.events.contains {
                if case .anonymousVoteCast(1, 2, let credential, _) = try? ElectionEvent($0) {
                    credential == held
                } else {
                    false
                }
            })
    }
}
