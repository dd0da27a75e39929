import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import VoteServer

/// The CSV body of `POST /api/v1/places/{place}/voters`: a header line is skipped (its line number in
/// `skipped_header`), never authorised; each voter is named as listed, not lower-cased.
@Suite struct VoterListRouteTests {
    @Test func headerIsSkippedAndIdentitiesAreKeptAsListed() async throws {
        let fixture = try ServedLedger("Voter List Test")
        try await fixture.testRoutes { client in
            _ = try await fixture.register(.router(client), candidates: ["Ada"], voters: ["member-0"])
            let answer = try await client.execute(
                uri: "/api/v1/places/1/voters", method: .post, headers: adminHeaders(fixture.admin, csv: true),
                body: ByteBuffer(string: "\n\"Voter ID\";name\nAB-123\nidentity\n")
            ) { response in
                #expect(response.status == .created)
                return object(response.body)
            }
            let issued = answer["tokens"] as? [[String: Any]] ?? []
            SecretsLog.record(issued.compactMap { $0["token"] as? String })
            #expect(answer["skipped_header"] as? Int == 2)
            #expect(issued.compactMap { $0["voter"] as? String } == ["AB-123", "identity"])
            #expect((answer["rejected"] as? [Any])?.isEmpty == true)
            // Member ids compare without regard to case: "ab-123" is the voter "AB-123" again, and a list that
            // authorises no one is refused, naming its first refused line.
            try await client.execute(
                uri: "/api/v1/places/1/voters", method: .post, headers: adminHeaders(fixture.admin, csv: true),
                body: ByteBuffer(string: "ab-123\n")
            ) { response in
                #expect(response.status == .unprocessableContent)
                let error = object(response.body)["error"] as? [String: Any] ?? [:]
                #expect(error["code"] as? String == "nothing_authorized")
                #expect(
                    error["message"] as? String
                        == "no voter was authorised, every line was refused: line 1: voter already authorised")
            }
        }
    }
}
