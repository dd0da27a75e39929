import Foundation
import Hummingbird
import HummingbirdTesting
import Ledger
import Testing
import VoteServer

/// The routes the web console and booth lean on before they write anything.
@Suite struct ConsoleRouteTests {
    /// The console's sign-in checks the admin token at once (GET admin/check): 204 for the token, 401 without
    /// one, 403 for a wrong one, and the ledger is not written either way.
    @Test func adminCheckAnswersAtSignIn() async throws {
        let fixture = try ServedLedger("Console Test")
        let before = try fixture.head()
        let auth = fixture.auth
        try await fixture.testRoutes { client in
            try await client.execute(uri: "/api/v1/admin/check", method: .get, headers: auth) {
                #expect($0.status == .noContent)
            }
            try await client.execute(uri: "/api/v1/admin/check", method: .get) {
                #expect($0.status == .unauthorized)
                #expect(errorCode($0.body) == "unauthorized")
            }
            try await client.execute(
                uri: "/api/v1/admin/check", method: .get, headers: [.authorization: "Bearer wrong"]
            ) {
                #expect($0.status == .forbidden)
                #expect(errorCode($0.body) == "forbidden")
            }
        }
        #expect(try fixture.head() == before)
    }
}
