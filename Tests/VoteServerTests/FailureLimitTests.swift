import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import VoteLedger
import VoteServer

/// Sends a vote with a malformed token (from the client `forwardedFor`, if given) and expects `status`: 400
/// (malformed), or 429 once the client has no failed attempts left.
private func badVote(
    _ port: Int, forwardedFor: String? = nil, answered status: HTTPResponse.Status,
    sourceLocation: SourceLocation = #_sourceLocation
) async throws {
    var headers = jsonHeaders
    if let forwardedFor { headers[HTTPFields.Element.Name("X-Forwarded-For")!] = forwardedFor }
    let response = try await fetch(
        port, "/api/v1/places/1/votes", .post, headers: headers,
        body: body(["candidate": 1, "token": "AAAA-AAAA-AAAA-AAAA-AAAA-AAAA-AAAA-0000"]))
    #expect(response.status == status, "from \(forwardedFor ?? "the peer")", sourceLocation: sourceLocation)
}

/// Failed token attempts are counted per client, but a request whose token is good is always served (a
/// voting hall behind one NAT is one address), and `X-Forwarded-For` names the client only for a connection
/// from a trusted proxy. The buckets never refill in these tests (an hour per attempt on a stepped clock).
@Suite struct FailureLimitTests {
    @Test func goodTokensAreServedFromAnAddressThatFailedTooOften() async throws {
        let fixture = try ServedLedger("NAT hall")
        let limits = ServerLimits(
            idleTimeout: .seconds(3600), headTimeout: .seconds(3600), bodyTimeout: .seconds(3600), failureBurst: 5,
            failureRefillMs: 3_600_000)
        let (admin, start) = (fixture.admin, fixture.start)
        try await fixture.serveLive(limits: limits) { port, tokens in
            for attempt in 0..<10 { try await badVote(port, answered: attempt < 5 ? .badRequest : .tooManyRequests) }
            // A good voting token, on both voter routes, and the good admin token are served.
            let vote = try await fetch(
                port, "/api/v1/places/1/votes", .post, headers: jsonHeaders,
                body: body(["candidate": 1, "token": tokens[0]]))
            #expect(vote.status == .created)
            let status = try await fetch(
                port, "/api/v1/places/1/status", .post, headers: jsonHeaders, body: body(["token": tokens[1]]))
            #expect(status.status == .ok)
            let place = try await fetch(
                port, "/api/v1/places", .post, headers: adminHeaders(admin),
                body: body(placeBody("Later", from: start + 3 * hour)))
            #expect(place.status == .created)
            // Bad ones from the address are still refused with 429, the wrong admin token too.
            try await badVote(port, answered: .tooManyRequests)
            let wrongAdmin = try await fetch(
                port, "/api/v1/places", .post, headers: adminHeaders("wrong"),
                body: body(placeBody("Wrong", from: start + 3 * hour)))
            #expect(wrongAdmin.status == .tooManyRequests)
        }
    }

    @Test func forwardedForIsBelievedOnlyFromTrustedProxies() async throws {
        // No trusted proxy: X-Forwarded-For is ignored, every attempt counts against 127.0.0.1.
        let direct = try ServedLedger("Direct")
        let noProxy = ServerLimits(
            idleTimeout: .seconds(3600), headTimeout: .seconds(3600), bodyTimeout: .seconds(3600), failureBurst: 3,
            failureRefillMs: 3_600_000)
        try await direct.serveLive(limits: noProxy) { port, _ in
            for client in ["198.51.100.1", "198.51.100.2", "198.51.100.3"] {
                try await badVote(port, forwardedFor: client, answered: .badRequest)
            }
            try await badVote(port, forwardedFor: "198.51.100.4", answered: .tooManyRequests)
        }
        // 127.0.0.1 and 10.0.0.0/8 are trusted proxies: the client is the right-most untrusted address.
        let proxied = try ServedLedger("Proxied")
        var trusted = noProxy
        trusted.trustedProxies = [try #require(AddressRange("127.0.0.1")), try #require(AddressRange("10.0.0.0/8"))]
        try await proxied.serveLive(limits: trusted) { port, _ in
            for _ in 0..<3 { try await badVote(port, forwardedFor: "198.51.100.7", answered: .badRequest) }
            try await badVote(port, forwardedFor: "198.51.100.7", answered: .tooManyRequests)
            // Another client behind the proxy has its own count.
            try await badVote(port, forwardedFor: "198.51.100.8", answered: .badRequest)
            // A client cannot name itself another by prepending to the header: the proxy appended its address.
            try await badVote(port, forwardedFor: "203.0.113.9, 198.51.100.7", answered: .tooManyRequests)
            // Through a second trusted proxy, the same client.
            try await badVote(port, forwardedFor: "198.51.100.7, 10.1.2.3", answered: .tooManyRequests)
            // IPv6 clients by their /64.
            for address in ["2001:db8:1:2::1", "2001:db8:1:2::2", "2001:db8:1:2:ffff::3"] {
                try await badVote(port, forwardedFor: address, answered: .badRequest)
            }
            try await badVote(port, forwardedFor: "2001:db8:1:2::4", answered: .tooManyRequests)
            try await badVote(port, forwardedFor: "2001:db8:1:3::4", answered: .badRequest)
        }
    }

    /// `vote serve --trusted-proxy`: refused unless an address or CIDR block, and given one, believed. The bucket
    /// refills once an hour (`--token-failure-refill 3600`), so however slow the machine the second failure from
    /// one client finds it empty: with the default 3 s a loaded machine answered 400 where 429 is right.
    @Test func trustedProxyOption() async throws {
        let election = try ProcessLedger("Proxy")
        for wrong in ["10.0.0.0/33", "proxy.example", "10.0.0.0/8/8", ""] {
            let refused = try VoteBinary.run(["serve", "--ledger", election.ledger, "--trusted-proxy", wrong])
            #expect(refused.status != 0, "\(wrong)")
            #expect(refused.err.contains("--trusted-proxy must be an IP address or CIDR block"), "\(wrong)")
        }
        _ = try await election.register(candidates: ["Ada"], voters: ["member-1"])
        let server = try ServeProcess(
            ledger: election.ledger, clockOffset: hour + 1000, adminTokenFile: election.tokenFile,
            arguments: [
                "--trusted-proxy", "127.0.0.0/8", "--token-failure-burst", "1", "--token-failure-refill", "3600",
            ])
        try await badVote(server.port, forwardedFor: "198.51.100.7", answered: .badRequest)
        try await badVote(server.port, forwardedFor: "198.51.100.7", answered: .tooManyRequests)
        try await badVote(server.port, forwardedFor: "198.51.100.8", answered: .badRequest)
        #expect(server.stop().status == 0)
        for wrong in ["0", "-1", "86401", "soon"] {
            let refused = try VoteBinary.run(["serve", "--ledger", election.ledger, "--token-failure-refill", wrong])
            #expect(refused.status != 0, "\(wrong)")
        }
    }
}
