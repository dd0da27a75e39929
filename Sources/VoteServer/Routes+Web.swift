import Foundation
import Hummingbird
import Ledger
import LedgerCrypto
import VoteLedger

/// The web app (issue 14) at `/`, and the one API route only it needs: the authority's verifier key, which
/// the audit page checks a receipt's signed head against in the browser.
struct WebRoutes {
    let server: LedgerServer
    let files: WebFiles

    func add<Context: RequestContext>(to router: Router<Context>) {
        // HEAD as GET without the body (a client checking a file's ETag).
        for method in [HTTPRequest.Method.get, .head] {
            router.on("/", method: method) { request, _ in try files.response(for: "index.html", request: request) }
            router.on(":file", method: method) { request, context in
                try files.response(for: context.parameters.get("file") ?? "", request: request)
            }
        }
        router.get("api/v1/key") { _, _ in JSONBody.text(try verifierKey() + "\n", type: "text/plain; charset=utf-8") }
    }

    /// The authority's C2SP verifier key line under the name its signed heads carry (as `vote head` prints it).
    func verifierKey() throws -> String {
        let genesis = server.genesis
        // A valid key: opening the ledger checked it against the authority's signing key.
        let key = try Ed25519PublicKey(rawRepresentation: genesis.authorityKey)
        return SignedNote.verifierKey(name: SignedHead.origin(genesis.ledgerID), key: key)
    }
}

/// The files of `Web/`, read from the target's resource bundle once at start and kept in memory (a few
/// hundred KB at most), each with its content type and a strong ETag.
struct WebFiles: Sendable {
    struct File: Sendable {
        let bytes: ByteBuffer
        let type: String
        let eTag: String
    }

    /// Every file, by name (the app is flat: no subdirectories).
    let files: [String: File]

    static let types = [
        "html": "text/html; charset=utf-8", "js": "text/javascript; charset=utf-8", "css": "text/css; charset=utf-8",
        "svg": "image/svg+xml", "png": "image/png", "ico": "image/x-icon", "json": "application/json",
    ]

    /// The app as shipped with the binary: `Web/` in VoteServer's resource bundle, which SwiftPM copies beside
    /// the executable (`VoteLedger_VoteServer.resources`) for `swift run`, debug and release builds alike.
    static let bundled: WebFiles = {
        guard let directory = Bundle.module.url(forResource: "Web", withExtension: nil) else {
            fatalError("the web app is missing from VoteServer's resource bundle")
        }
        return WebFiles(directory: directory)
    }()

    /// Every regular file directly in `directory`.
    init(directory: URL) {
        var files: [String: File] = [:]
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        for name in names where !name.hasPrefix(".") {
            guard let data = FileManager.default.contents(atPath: directory.appendingPathComponent(name).path) else {
                continue
            }
            let bytes = [UInt8](data)
            let suffix = name.split(separator: ".").last.map { String($0).lowercased() } ?? ""
            files[name] = File(
                bytes: ByteBuffer(bytes: bytes), type: Self.types[suffix] ?? "application/octet-stream",
                eTag: "\"\(SHA256.hash(bytes).hex)\"")
        }
        self.files = files
    }

    /// The file `name` (404 if the app has none), or 304 if the request's `If-None-Match` names its ETag.
    func response(for name: String, request: Request) throws -> Response {
        guard let file = files[name] else { throw APIError(.notFound, "not_found", "no such page: /\(name)") }
        // The files change only with the binary: a browser may keep them but must revalidate (a 304 costs a
        // round trip, not the bytes). The security headers are SecurityHeadersMiddleware's, on every response;
        // it leaves this Cache-Control alone. ES modules are refused under its `nosniff` unless served as
        // JavaScript, hence the explicit types.
        var headers: HTTPFields = [.eTag: file.eTag, .cacheControl: "no-cache"]
        if Self.matches(request.headers[values: .ifNoneMatch].joined(separator: ","), file.eTag) {
            return Response(status: .notModified, headers: headers)
        }
        headers[.contentType] = file.type
        if request.method == .head {
            headers[.contentLength] = String(file.bytes.readableBytes)
            return Response(status: .ok, headers: headers)
        }
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: file.bytes))
    }

    /// Whether an `If-None-Match` list names `eTag` (RFC 9110 §13.1.2: `*`, or a weak comparison).
    static func matches(_ list: String, _ eTag: String) -> Bool {
        list.split(separator: ",").contains { item in
            var tag = item.trimmingCharacters(in: .whitespaces)
            if tag == "*" { return true }
            if tag.hasPrefix("W/") { tag.removeFirst(2) }
            return tag == eTag
        }
    }
}
