import Foundation
import Hummingbird
import HummingbirdTesting
import Testing
import VoteLedger
import VoteServer

/// The admin routes, as the OpenAPI document names them: every operation under the document's bearer scheme
/// refuses a request without the admin token (401) and with a wrong one (403), recording nothing, and every
/// route of `/api/v1` the router has is in the document (and the other way round), so a route added later
/// is tested here as soon as it is documented, and cannot go undocumented.
@Suite struct AdminRouteTests {
    @Test func everyDocumentedAdminRouteRefusesAMissingOrWrongToken() async throws {
        let fixture = try ServedLedger("Admin routes")
        let admin = fixture.admin
        let routes = buildRouter(fixture.server).routes.map { (path: $0.path.description, method: $0.method) }
        // Wrong tokens from one client count against it: a limit no number of routes reaches.
        let app = buildApplication(
            fixture.server, configuration: .init(), limits: ServerLimits(failureBurst: 100_000), logger: quietLogger)
        try await app.test(.router) { client in
            // Something for each route to act on (place 1 with a candidate), so a route that forgot its check
            // would answer 2xx or 409, not 404.
            _ = try await fixture.register(.router(client), candidates: ["Ada"], voters: ["member-1"])

            let response = try await client.execute(uri: "/api/v1/openapi.json", method: .get)
            let document = object(response.body)
            let paths = try #require(document["paths"] as? [String: [String: Any]])
            let schemes = (document["components"] as? [String: Any])?["securitySchemes"] as? [String: [String: Any]]
            let bearer = Set((schemes ?? [:]).filter { $0.value["scheme"] as? String == "bearer" }.keys)
            #expect(bearer == ["admin"])

            // Every operation of the document, and whether it needs the admin token.
            let methods = ["get", "put", "post", "delete", "patch", "head", "options"]
            var documented: Set<String> = []
            var guarded: [(path: String, method: String)] = []
            for (path, item) in paths {
                for method in methods {
                    guard let operation = item[method] as? [String: Any] else { continue }
                    documented.insert("\(method.uppercased()) \(path)")
                    let security = operation["security"] as? [[String: Any]] ?? document["security"] as? [[String: Any]]
                    if (security ?? []).contains(where: { !bearer.isDisjoint(with: $0.keys) }) {
                        guarded.append((path, method.uppercased()))
                    }
                }
            }
            // The router's /api/v1 routes (and /metrics) and the document's operations are the same.
            let served = Set(
                routes.filter { $0.path.hasPrefix("/api/v1/") || $0.path == "/metrics" }.map {
                    "\($0.method) \($0.path)"
                })
            #expect(
                served.subtracting(documented).isEmpty, "not in the OpenAPI document: \(served.subtracting(documented))"
            )
            #expect(
                documented.subtracting(served).isEmpty, "documented but not served: \(documented.subtracting(served))")
            // Not vacuous: the admin operations of today are among them.
            let names = Set(guarded.map { "\($0.method) \($0.path)" })
            for known in [
                "POST /api/v1/places", "POST /api/v1/places/{place}/candidates",
                "POST /api/v1/places/{place}/candidates/{candidate}/withdraw", "POST /api/v1/places/{place}/voters",
                "POST /api/v1/places/{place}/certify",
            ] { #expect(names.contains(known), "\(known) is not under the admin scheme") }

            for (path, method) in guarded {
                // Each path parameter is 1 (place 1, candidate 1, …): a route that forgot the token would act.
                let uri = path.split(separator: "/").map { $0.hasPrefix("{") ? "1" : String($0) }.joined(separator: "/")
                let what = "\(method) \(path)"
                let before = try fixture.head()
                let body = ByteBuffer(string: #"{"name":"Late","voter":"member-9"}"#)
                let missing = try await client.execute(
                    uri: "/" + uri, method: HTTPRequest.Method(method)!, headers: jsonHeaders, body: body)
                #expect(missing.status == .unauthorized, "\(what) without a token")
                #expect(errorCode(missing.body) == "unauthorized", "\(what) without a token")
                #expect(missing.headers[.wwwAuthenticate] == "Bearer", "\(what) without a token")
                // A wrong token is 403; a header that carries no bearer token is as good as none (401).
                let wrongs: [(header: String, status: HTTPResponse.Status)] = [
                    ("Bearer wrong", .forbidden), ("Bearer " + String(admin.reversed()), .forbidden),
                    ("Basic \(admin)", .unauthorized), ("Bearer", .unauthorized),
                ]
                for (header, status) in wrongs {
                    let refused = try await client.execute(
                        uri: "/" + uri, method: HTTPRequest.Method(method)!,
                        headers: [.contentType: "application/json", .authorization: header], body: body)
                    #expect(refused.status == status, "\(what) with a wrong token")
                }
                #expect(try fixture.head() == before, "\(what): the ledger changed")
            }
        }
        try await fixture.close()
    }
}
