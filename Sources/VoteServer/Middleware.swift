import Foundation
import Hummingbird
import Logging

/// Every failure as `{"error": {"code", "message"}}` with its status (`APIError.init(_:)` decides which),
/// including Hummingbird's own (no such route, body too large).
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            let answer = APIError(error)
            if answer.status == .internalServerError {
                context.logger.error(
                    "request failed", metadata: ["path": .string(request.uri.path), "error": .string(answer.message)])
            }
            return try answer.response(from: request, context: context)
        }
    }
}

/// The headers every response carries: a Content-Security-Policy that lets a page load only this origin's
/// own scripts, styles and data (the web app has no inline script), no MIME sniffing, no Referer leaving
/// the site, and — unless a route set its own caching (static files) — `Cache-Control: no-store`, so no
/// proxy or browser keeps an answer about who voted or a freshly issued token. With `hsts` (the server speaks
/// only TLS) also `Strict-Transport-Security`, so a browser that has been here once never tries plain HTTP
/// again, where a network attacker could answer for the server.
struct SecurityHeadersMiddleware<Context: RequestContext>: RouterMiddleware {
    var hsts = false

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var response = try await next(request, context)
        for field in securityFields {
            // A field the route did not set goes at the end, as the setter would put it, without its search.
            if response.headers.contains(field.name) {
                response.headers[field.name] = field.value
            } else {
                response.headers.append(field)
            }
        }
        if !response.headers.contains(.cacheControl) { response.headers.append(noStore) }
        if hsts { response.headers[strictTransportSecurity.name] = strictTransportSecurity.value }
        return response
    }
}

/// The fields, made once: a generic type cannot store them, and made for every response they cost an
/// allocation and a check of each value.
private let securityFields = [
    HTTPFields.Element(
        name: .contentSecurityPolicy,
        value: "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
            + "frame-ancestors 'none'; base-uri 'none'; form-action 'self'"),
    HTTPFields.Element(name: .xContentTypeOptions, value: "nosniff"),
    HTTPFields.Element(name: .referrerPolicy, value: "no-referrer"),
]
private let noStore = HTTPFields.Element(name: .cacheControl, value: "no-store")
/// Two years, subdomains excluded: the server does not know what else runs under its name.
private let strictTransportSecurity = HTTPFields.Element(name: .strictTransportSecurity, value: "max-age=63072000")

extension HTTPFields.Element.Name {
    static let referrerPolicy = HTTPFields.Element.Name("Referrer-Policy")!
}
