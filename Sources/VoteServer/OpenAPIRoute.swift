import Foundation
import Hummingbird

/// The OpenAPI 3.1 document of every route, served at `/api/v1/openapi.json`: `openapi.json` beside this file,
/// the one copy, shipped in VoteServer's resource bundle, read once at start. The route tests check that it names
/// every route, and schemathesis reads the file itself. A shape used more than once (a window, a tally row, the
/// voting token, the place parameter, the error response) is written once under `components` and referred to
/// by `$ref`.
enum OpenAPIRoute {
    static func add(to api: RouterGroup<ServerContext>) {
        api.get("openapi.json") { _, _ in JSONBody.text(document, type: "application/json") }
    }

    static let document: String = {
        guard let url = Bundle.module.url(forResource: "openapi", withExtension: "json"),
            let data = FileManager.default.contents(atPath: url.path)
        else { fatalError("the OpenAPI document is missing from VoteServer's resource bundle") }
        return String(decoding: data, as: UTF8.self)
    }()
}
