import BlindRSA
import Foundation
import Hummingbird
import HummingbirdTesting
import JSONViews
import Ledger
import LedgerCrypto
import Testing
import VoteLedger
import VoteServer

/// A place created with `"results": "after-close"` shows no counts on the public routes until voting ends, then
/// shows them; until then the event feed withholds the contents of its votes (FORMAT.md §11.20).
@Suite struct EmbargoRouteTests {
    @Test func countsHiddenUntilVotingEnds() async throws {
        let fixture = try ServedLedger("Embargo Test")
        let (start, clock, auth) = (fixture.start, fixture.clock, fixture.auth)
        try await fixture.testRoutes { client in
            // A results choice that is neither live nor after-close is refused, and writes nothing.
            let before = try fixture.head()
            var bad = placeBody(from: start)
            bad["results"] = "sometimes"
            try await client.execute(uri: "/api/v1/places", method: .post, headers: auth, body: body(bad)) {
                #expect($0.status == .badRequest)
                #expect(String(buffer: $0.body).contains("results must be live or after-close"))
            }
            #expect(try fixture.head() == before)

            var embargoed = placeBody(from: start)
            embargoed["results"] = "after-close"
            try await client.execute(uri: "/api/v1/places", method: .post, headers: auth, body: body(embargoed)) {
                #expect($0.status == .created)
            }
            try await client.execute(
                uri: "/api/v1/places", method: .post, headers: auth, body: body(placeBody("Open", from: start))
            ) {
                #expect($0.status == .created)
            }
            var tokens: [Int: String] = [:]
            for place in [1, 2] {
                for name in ["Ada", "Grace"] {
                    try await client.execute(
                        uri: "/api/v1/places/\(place)/candidates", method: .post, headers: auth,
                        body: body(["name": name])
                    ) { #expect($0.status == .created) }
                }
                tokens[place] = try await client.execute(
                    uri: "/api/v1/places/\(place)/voters", method: .post, headers: auth,
                    body: body(["voter": "member-\(place)"])
                ) { object($0.body)["token"] as? String ?? "" }
            }
            SecretsLog.record(Array(tokens.values))
            clock.set(start + hour + 1)
            for place in [1, 2] {
                try await client.execute(
                    uri: "/api/v1/places/\(place)/votes", method: .post, headers: jsonHeaders,
                    body: body(["candidate": 2, "token": tokens[place]!])
                ) { #expect($0.status == .created) }
            }

            // Voting: the embargoed place's tally has no rows and says why; the other place counts live.
            try await client.execute(uri: "/api/v1/places/1/tally", method: .get) {
                let tally = object($0.body)
                #expect(tally["embargoed"] as? Bool == true)
                #expect((tally["tally"] as? [Any])?.isEmpty == true)
                #expect(!String(buffer: $0.body).contains("\"votes\""))
            }
            try await client.execute(uri: "/api/v1/places/2/tally", method: .get) {
                let tally = object($0.body)
                #expect(tally["embargoed"] as? Bool == false)
                #expect((tally["tally"] as? [[String: Any]])?.map { $0["votes"] as? Int } == [0, 1])
            }
            try await client.execute(uri: "/api/v1/places/1", method: .get) {
                #expect(object($0.body)["results_after_close"] as? Bool == true)
                #expect(object($0.body)["results"] == nil)
            }
            try await client.execute(uri: "/getCounting?placeid=1", method: .get) {
                #expect((object($0.body)["data"] as? [Any])?.isEmpty == true)
            }
            try await client.execute(uri: "/getCounting?placeid=2", method: .get) {
                #expect((object($0.body)["data"] as? [Any])?.count == 2)
            }

            // After the close the counts are shown.
            clock.set(start + 2 * hour)
            try await client.execute(uri: "/api/v1/places/1/tally", method: .get) {
                let tally = object($0.body)
                #expect(tally["embargoed"] as? Bool == false)
                #expect((tally["tally"] as? [[String: Any]])?.map { $0["votes"] as? Int } == [0, 1])
            }
            try await client.execute(uri: "/getCounting?placeid=1", method: .get) {
                #expect((object($0.body)["data"] as? [Any])?.count == 2)
            }
        }
    }

    /// During voting, the public event feed shows an embargoed place's votes and authorisations only as withheld
    /// events (type, place, leaf hash): no line names the vote's candidate or its token hash, yet the leaf hashes
    /// rebuild the signed head, the voter's receipt is the feed's leaf at its index, and a consistency proof
    /// checks between heads rebuilt from the feed. Such a page is not cacheable. A place without the embargo is
    /// shown whole, and once voting ends so is the embargoed place, with a cacheable page.
    @Test func eventFeedWithholdsVotesUntilVotingEnds() async throws {
        let fixture = try ServedLedger("Embargo Feed Test")
        let (start, clock, auth) = (fixture.start, fixture.clock, fixture.auth)
        try await fixture.testRoutes { client in
            var embargoed = placeBody(from: start)
            embargoed["results"] = "after-close"
            for place in [embargoed, placeBody("Open", from: start)] {
                try await client.execute(uri: "/api/v1/places", method: .post, headers: auth, body: body(place)) {
                    #expect($0.status == .created)
                }
            }
            var tokens: [Int: String] = [:]
            for place in [1, 2] {
                for name in ["Ada", "Grace"] {
                    try await client.execute(
                        uri: "/api/v1/places/\(place)/candidates", method: .post, headers: auth,
                        body: body(["name": name])
                    ) { #expect($0.status == .created) }
                }
                tokens[place] = try await client.execute(
                    uri: "/api/v1/places/\(place)/voters", method: .post, headers: auth,
                    body: body(["voter": "member-\(place)"])
                ) { object($0.body)["token"] as? String ?? "" }
            }
            SecretsLog.record(Array(tokens.values))
            let beforeVotes = try fixture.source.lastBlock().treeSize
            clock.set(start + hour + 1)
            // Each vote's receipt: the event bytes it carries (`extra`) and its index.
            var receipts: [Int: (event: [UInt8], index: Int)] = [:]
            for place in [1, 2] {
                receipts[place] = try await client.execute(
                    uri: "/api/v1/places/\(place)/votes", method: .post, headers: jsonHeaders,
                    body: body(["candidate": 2, "token": tokens[place]!])
                ) { response in
                    #expect(response.status == .created)
                    let answer = object(response.body)
                    let extra = (answer["receipt"] as? String ?? "").split(separator: "\n")
                        .first { $0.hasPrefix("extra ") }?.dropFirst(6)
                    let event = Data(base64Encoded: String(extra ?? "")).map { [UInt8]($0) } ?? []
                    return (event, answer["index"] as? Int ?? -1)
                }
            }
            let vote = try #require(receipts[1])
            #expect(vote.event.count == 42)  // type 2, place 4, candidate 4, token hash 32
            let tokenHash = Hex.encode(Array(vote.event.suffix(32)))
            let size = try fixture.source.lastBlock().treeSize

            // Voting: the embargoed place's authorisation and vote are withheld lines; nothing names its candidate
            // or its token hash; the open place's vote is shown whole.
            let feed = try await client.execute(uri: "/api/v1/events?from=0&limit=\(size)", method: .get) { response in
                #expect(response.status == .ok)
                #expect(response.headers[.eTag] == nil)
                #expect(response.headers[.cacheControl] == "no-store")
                return String(buffer: response.body)
            }
            let lines = feed.split(separator: "\n").map { object(ByteBuffer(string: String($0))) }
            #expect(lines.count == Int(size))
            #expect(!feed.contains(tokenHash))
            let place1 = lines.filter { ($0["event"] as? [String: String])?["place"] == "1" }
            let withheld = place1.filter { ($0["event"] as? [String: String])?["kind"] == "withheld" }
            #expect(
                withheld.map { ($0["event"] as? [String: String])?["withheld_kind"] } == [
                    "voter_authorized", "vote_cast",
                ])
            #expect(withheld.allSatisfy { $0["type"] as? Int == 2 && ($0["event"] as? [String: String])?.count == 3 })
            #expect(!place1.contains { ($0["event"] as? [String: String])?["kind"] == "vote_cast" })
            let place2Vote = lines.first {
                ($0["event"] as? [String: String])?["kind"] == "vote_cast"
                    && ($0["event"] as? [String: String])?["place"] == "2"
            }
            #expect((place2Vote?["event"] as? [String: String])?["candidate"] == "2")

            // The feed's leaf hashes are the ledger's: they rebuild the head, the receipt's event is the leaf at its
            // index, and a consistency proof checks between two heads rebuilt from them.
            let leaves = lines.map { Digest(hex: $0["hash"] as? String ?? "") ?? .zero }
            let root = Merkle.root(0..<size) { leaves[Int($0)] }
            #expect(root == (try fixture.source.lastBlock().treeRoot))
            #expect(leaves[vote.index] == Merkle.leafHash(vote.event))
            let proof = try await client.execute(
                uri: "/api/v1/proofs/consistency?from=\(beforeVotes)&to=\(size)", method: .get
            ) { (object($0.body)["proof"] as? [String] ?? []).compactMap { Digest(hex: $0) } }
            #expect(
                Merkle.verifyConsistency(
                    oldSize: beforeVotes, newSize: size, proof: proof,
                    oldRoot: Merkle.root(0..<beforeVotes) { leaves[Int($0)] }, newRoot: root))
            let inclusion = try await client.execute(
                uri: "/api/v1/proofs/inclusion?index=\(vote.index)&tree_size=\(size)", method: .get
            ) { (object($0.body)["proof"] as? [String] ?? []).compactMap { Digest(hex: $0) } }
            #expect(
                Merkle.verifyInclusion(
                    leafHash: leaves[vote.index], index: UInt64(vote.index), size: size, proof: inclusion, root: root))
            // A page of events before the embargoed place's is final, as before.
            try await client.execute(uri: "/api/v1/events?from=0&limit=2", method: .get) {
                #expect($0.headers[.eTag] != nil)
                #expect($0.headers[.cacheControl]?.contains("immutable") == true)
            }

            // After the close every event is shown whole, and the page is final again.
            clock.set(start + 2 * hour)
            let after = try await client.execute(uri: "/api/v1/events?from=0&limit=\(size)", method: .get) {
                response in
                #expect(response.headers[.eTag] != nil)
                return String(buffer: response.body)
            }
            #expect(after.contains(tokenHash))
            #expect(!after.contains("withheld"))
            let shown = after.split(separator: "\n").map { object(ByteBuffer(string: String($0))) }
            #expect(shown.map { $0["hash"] as? String } == lines.map { $0["hash"] as? String })
            #expect((shown[vote.index]["event"] as? [String: String])?["candidate"] == "2")
        }
    }

    /// In an embargoed anonymous place only the ballots are withheld (a credential is random, so a ballot's leaf
    /// hash gives nothing away): its authorisations and issuances stay whole, the ballot's credential is in no
    /// line until voting ends, and then it is.
    @Test func anonymousPlaceWithholdsOnlyItsBallots() async throws {
        let fixture = try ServedLedger("Embargo Anonymous Test")
        let (start, clock, auth) = (fixture.start, fixture.clock, fixture.auth)
        try await fixture.testRoutes { client in
            var place = placeBody(from: start, ballot: "anonymous")
            place["results"] = "after-close"
            try await client.execute(uri: "/api/v1/places", method: .post, headers: auth, body: body(place)) {
                #expect($0.status == .created)
            }
            for name in ["Ada", "Grace"] {
                try await client.execute(
                    uri: "/api/v1/places/1/candidates", method: .post, headers: auth, body: body(["name": name])
                ) { #expect($0.status == .created) }
            }
            let code = try await client.execute(
                uri: "/api/v1/places/1/voters", method: .post, headers: auth, body: body(["voter": "member-1"])
            ) { object($0.body)["token"] as? String ?? "" }
            SecretsLog.record([code])
            let keyText = try await client.execute(uri: "/api/v1/places/1", method: .get) {
                object($0.body)["ballot_key"] as? String ?? ""
            }
            let key = try BlindRSAPublicKey(derRepresentation: try #require(Base64URL.decode(keyText)))
            clock.set(start + hour + 1)
            let device = try AnonymousBallotRouteTests.Device(key)
            let issued = try await client.execute(
                uri: "/api/v1/places/1/credentials", method: .post, headers: jsonHeaders,
                body: body(device.request.merging(["code": code]) { $1 })
            ) { object($0.body) }
            let signature = try device.finalize(issued)
            try await client.execute(
                uri: "/api/v1/places/1/ballots", method: .post, headers: jsonHeaders,
                body: body(device.ballot(signature, candidate: 2))
            ) { #expect($0.status == .created) }
            let credential = Hex.encode(device.blinding.preparedMessage)

            let during = try await client.execute(uri: "/api/v1/events?from=0", method: .get) {
                String(buffer: $0.body)
            }
            let kinds = during.split(separator: "\n").compactMap {
                (object(ByteBuffer(string: String($0)))["event"] as? [String: String]).map {
                    $0["kind"] == "withheld" ? "withheld " + ($0["withheld_kind"] ?? "") : $0["kind"] ?? ""
                }
            }
            #expect(kinds.suffix(3) == ["voter_authorized", "credential_issued", "withheld anonymous_vote_cast"])
            let leaksCredential = during.contains(credential)
            #expect(!leaksCredential, "the feed names the ballot's credential during voting")

            clock.set(start + 2 * hour)
            let after = try await client.execute(uri: "/api/v1/events?from=0", method: .get) { String(buffer: $0.body) }
            let showsBallot = after.contains(credential) && after.contains("\"anonymous_vote_cast\"")
            #expect(showsBallot && !after.contains("withheld"), "the feed withholds the ballot after the close")
        }
    }
}
