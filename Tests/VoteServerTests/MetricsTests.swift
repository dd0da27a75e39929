import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import VoteLedger

/// `GET /metrics` of a real `vote serve`: scraped while votes arrive at once on both vote routes (valid tokens,
/// tokens sent several times, unknown and malformed ones), its counts add up to what the clients were answered.
@Suite(.serialized) struct MetricsTests {
    /// Where a vote is sent: the JSON API or BVC's `/setVote`.
    private enum Route { case api, bvc }

    @Test func countsAddUpToWhatTheClientsWereAnswered() async throws {
        let election = try ProcessLedger("Metrics Union")
        let (admin, tokens) = try await election.register(
            candidates: ["Ada", "Grace"], voters: (1...48).map { "member-\($0)" })
        let server = try ServeProcess(
            ledger: election.ledger, clockOffset: hour + 1000, adminTokenFile: election.tokenFile,
            arguments: ["--metrics-listen", "127.0.0.1:0", "--token-failure-burst", "1000000"])
        let output = server.waitForOutput(containing: "metrics on ")
        let metricsPort = try #require(
            output.split(separator: "\n").first { $0.hasPrefix("metrics on http://127.0.0.1:") }
                .flatMap { Int($0.dropFirst("metrics on http://127.0.0.1:".count).prefix { $0.isNumber }) },
            "\(output)")
        let auth: HTTPFields = [.authorization: "Bearer \(admin)"]
        let startHeight = try await height(server.port)

        // The load: 32 distinct tokens by the JSON API and 8 by BVC's /setVote; 4 tokens sent 6 times each at
        // once (one vote counts); 8 unknown tokens and 4 malformed ones; a scraper all along.
        var votes: [(Route, String)] = tokens[0..<32].map { (.api, $0) } + tokens[32..<40].map { (.bvc, $0) }
        for token in tokens[40..<44] { votes += [(.api, token), (.bvc, token), (.api, token), (.api, token)] }
        for token in tokens[40..<44] { votes += [(.bvc, token), (.api, token)] }
        for _ in 0..<8 { votes.append((.api, try VotingToken.generate().display)) }
        for index in 0..<4 { votes.append((.api, "NOT-A-TOKEN-\(index)")) }
        votes.shuffle()
        let port = server.port
        async let scrapes = MetricsTests.scrapeAccepted(port, headers: auth, times: 8)
        let answers = try await withThrowingTaskGroup(of: String?.self) { group in
            for (route, token) in votes {
                group.addTask { try await MetricsTests.cast(port, route, token) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let during = try await scrapes
        #expect(during == during.sorted(), "a counter went down: \(during)")

        // What the clients were answered.
        let recorded = answers.filter { $0 == nil }.count
        var refusals: [String: Int] = [:]
        for case let code? in answers { refusals[code, default: 0] += 1 }
        #expect(recorded == 44)
        #expect(refusals == ["already_voted": 20, "token_not_authorized": 8, "malformed_token": 4])

        // What the metrics say, on the admin route and on the token-free listener alike.
        let scraped = try await fetch(server.port, "/metrics", headers: auth)
        #expect(scraped.status == .ok)
        #expect(scraped.headers[.contentType] == "text/plain; version=0.0.4; charset=utf-8")
        let metrics = MetricsTests.parse(scraped.body)
        #expect(metrics["vote_votes_accepted_total"] == Double(recorded))
        var refusedTotal = 0.0
        for (code, count) in refusals {
            #expect(metrics["vote_votes_refused_total{reason=\"\(code)\"}"] == Double(count), "\(code)")
        }
        for (name, value) in metrics where name.hasPrefix("vote_votes_refused_total{") { refusedTotal += value }
        #expect(refusedTotal == Double(answers.count - recorded))
        // Every block the writer wrote is in the latency histogram once, and its events in the other.
        let blocks = try await height(server.port) - startHeight
        #expect(blocks > 0)
        #expect(metrics["vote_block_commit_seconds_count"] == Double(blocks))
        #expect(metrics["vote_block_commit_seconds_bucket{le=\"+Inf\"}"] == Double(blocks))
        #expect(metrics["vote_block_events_count"] == Double(blocks))
        #expect(metrics["vote_block_events_sum"] == Double(recorded))
        #expect(metrics["vote_writer_queued"] == 0)

        let scraper = try await fetch(metricsPort, "/metrics")
        #expect(scraper.status == .ok)
        #expect(MetricsTests.parse(scraper.body)["vote_votes_accepted_total"] == Double(recorded))
        #expect(try await fetch(metricsPort, "/api/v1/head").status == .notFound)
        #expect(server.stop().status == 0)
    }

    /// Without the admin token `/metrics` is refused (401), with a wrong one too (403); the scraper's listener
    /// exists only when asked for.
    @Test func metricsNeedTheAdminToken() async throws {
        let election = try ProcessLedger("Metrics Token")
        let server = try election.serve(offset: 0)
        let missing = try await fetch(server.port, "/metrics")
        #expect(missing.status == .unauthorized)
        #expect(errorCode(missing.body) == "unauthorized")
        let wrong = try await fetch(server.port, "/metrics", headers: [.authorization: "Bearer 00"])
        #expect(wrong.status == .forbidden)
        let stopped = server.stop()
        #expect(stopped.status == 0)
        #expect(!server.waitForOutput(containing: "").contains("metrics on"))
        let bad = try VoteBinary.run(["serve", "--ledger", election.ledger, "--metrics-listen", "9464"])
        #expect(bad.status != 0)
        #expect(bad.err.contains("--metrics-listen must be HOST:PORT"), "\(bad.err)")
    }

    /// Casts `token` for candidate 1 of place 1 on `route`: nil if the vote was recorded, else the error code
    /// (BVC's envelope says only "already voted" apart; any other BVC failure is `bvc_<code>`).
    private static func cast(_ port: Int, _ route: Route, _ token: String) async throws -> String? {
        switch route {
        case .api:
            let response = try await fetch(
                port, "/api/v1/places/1/votes", .post, headers: jsonHeaders,
                body: body(["candidate": 1, "token": token]))
            return response.status == .created ? nil : errorCode(response.body) ?? "status_\(response.status.code)"
        case .bvc:
            let response = try await fetch(
                port, "/setVote?" + form(["placeid": "1", "candidateid": "1", "token": token]))
            switch object(response.body)["code"] as? Int {
            case 200: return nil
            case 401: return "already_voted"
            case let code: return "bvc_\(code ?? 0)"
            }
        }
    }

    /// Scrapes `/metrics` `times` in a row; the accepted votes each time.
    private static func scrapeAccepted(_ port: Int, headers: HTTPFields, times: Int) async throws -> [Double] {
        var accepted: [Double] = []
        for _ in 0..<times {
            let scraped = try await fetch(port, "/metrics", headers: headers)
            #expect(scraped.status == .ok)
            accepted.append(parse(scraped.body)["vote_votes_accepted_total"] ?? 0)
        }
        return accepted
    }

    /// The head's height, from place 1's tally.
    private func height(_ port: Int) async throws -> Int {
        let tally = object(try await fetch(port, "/api/v1/places/1/tally").body)
        return try #require(tally["height"] as? Int)
    }

    /// Prometheus' text format as `name{labels}` → value (comments skipped).
    static func parse(_ buffer: ByteBuffer?) -> [String: Double] {
        var values: [String: Double] = [:]
        for line in String(buffer: buffer ?? ByteBuffer()).split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else {
                continue
            }
            values[String(line[..<space])] = value
        }
        return values
    }
}
