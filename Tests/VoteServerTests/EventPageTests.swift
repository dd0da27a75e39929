import FileStore
import Foundation
import Hummingbird
import HummingbirdTesting
import Ledger
import Testing
import VoteLedger
import VoteServer

/// `GET /api/v1/events` a page at a time: following the `Link: rel="next"` cursor from the first page gives
/// every event exactly once; a full page (which never changes) carries an ETag and immutable caching and is
/// answered 304 to a client that has it; a page reaching the head is not cached; `limit` is bounded.
@Suite struct EventPageTests {
    @Test func pagesCoverEveryEventOnceAndFullPagesAreCached() async throws {
        let fixture = try ServedLedger("Pages")
        try await fixture.testRoutes { client in
            _ = try await fixture.register(
                .router(client), candidates: ["Ada", "Grace"], voters: (1...1200).map { "member-\($0)" })
            let treeSize = Int(try fixture.source.lastBlock().treeSize)
            #expect(treeSize > 1200)

            /// The `index` of each line of a page.
            func indexes(_ body: ByteBuffer) -> [Int] {
                String(buffer: body).split(separator: "\n").map {
                    (try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])?["index"] as? Int ?? -1
                }
            }
            let linkName = HTTPFields.Element.Name("Link")!

            // The default page: 1,000 events from 0, full, so cached, with the next page's address.
            let first = try await client.execute(uri: "/api/v1/events", method: .get)
            #expect(first.status == .ok)
            #expect(indexes(first.body) == Array(0..<1000))
            #expect(first.headers[.cacheControl] == "public, max-age=31536000, immutable")
            #expect(first.headers[linkName] == "</api/v1/events?from=1000&limit=1000>; rel=\"next\"")
            let etag = try #require(first.headers[.eTag])

            // Seven at a time by the cursor: every event once, in order.
            var seen: [Int] = []
            var next: String? = "/api/v1/events?limit=7"
            while let uri = next {
                let page = try await client.execute(uri: uri, method: .get)
                #expect(page.status == .ok)
                let lines = indexes(page.body)
                seen += lines
                if let link = page.headers[linkName] {
                    #expect(lines.count == 7)
                    #expect(page.headers[.eTag] != nil)
                    #expect(page.headers[.cacheControl]?.contains("immutable") == true)
                    next = String(link.drop { $0 != "<" }.dropFirst().prefix { $0 != ">" })
                } else {
                    #expect(lines.count < 7)
                    #expect(page.headers[.eTag] == nil)
                    #expect(page.headers[.cacheControl] == "no-store")
                    next = nil
                }
            }
            #expect(seen == Array(0..<treeSize))

            // A client holding a full page is told it has not changed; another ETag is answered in full.
            let cached = try await client.execute(uri: "/api/v1/events", method: .get, headers: [.ifNoneMatch: etag])
            #expect(cached.status == .notModified)
            #expect(cached.body.readableBytes == 0)
            #expect(cached.headers[.eTag] == etag)
            let other = try await client.execute(
                uri: "/api/v1/events?from=1", method: .get, headers: [.ifNoneMatch: etag])
            #expect(other.status == .ok)
            #expect(indexes(other.body) == Array(1..<1001))
            #expect(other.headers[.eTag] != etag)

            // Bounds: limit 1 to 10,000; a cursor at or past the head is an empty page.
            for bad in ["limit=0", "limit=10001", "limit=x", "from=-1", "from=99999999999999999999"] {
                let refused = try await client.execute(uri: "/api/v1/events?\(bad)", method: .get)
                #expect(refused.status == .badRequest, "\(bad)")
                #expect(errorCode(refused.body) == "bad_request", "\(bad)")
            }
            let most = try await client.execute(uri: "/api/v1/events?limit=10000", method: .get)
            #expect(indexes(most.body) == Array(0..<treeSize))
            #expect(most.headers[.eTag] == nil)
            let tail = try await client.execute(uri: "/api/v1/events?from=\(treeSize)", method: .get)
            #expect(tail.status == .ok)
            #expect(tail.body.readableBytes == 0)
            #expect(tail.headers[linkName] == nil)
        }
    }
}
