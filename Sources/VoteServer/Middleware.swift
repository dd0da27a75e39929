import Foundation
import Hummingbird
import Logging

/// One line per request: method, path (never the query), status and duration. Tokens travel only in POST
/// bodies and the admin token in a header, neither of which is logged, so no secret reaches a log line.
struct AccessLogMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let start = ContinuousClock.now
        let response: Response
        do {
            response = try await next(request, context)
        } catch {
            // Errors are turned into responses by ErrorMiddleware, inside this one; anything else is logged as 500.
            log(request, context: context, status: 500, since: start)
            throw error
        }
        log(request, context: context, status: response.status.code, since: start)
        return response
    }

    private func log(_ request: Request, context: Context, status: Int, since start: ContinuousClock.Instant) {
        let elapsed = ContinuousClock.now - start
        let ms = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        context.logger.info(
            "request",
            metadata: [
                "method": .string(request.method.rawValue), "path": .string(request.uri.path),
                "status": .stringConvertible(status), "ms": .string(String(format: "%.2f", ms)),
            ])
    }
}

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
/// proxy or browser keeps an answer about who voted or a freshly issued token.
struct SecurityHeadersMiddleware<Context: RequestContext>: RouterMiddleware {
    static var policy: String {
        "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
            + "frame-ancestors 'none'; base-uri 'none'; form-action 'self'"
    }

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        var response = try await next(request, context)
        response.headers[.contentSecurityPolicy] = Self.policy
        response.headers[.xContentTypeOptions] = "nosniff"
        response.headers[.referrerPolicy] = "no-referrer"
        if response.headers[.cacheControl] == nil { response.headers[.cacheControl] = "no-store" }
        return response
    }
}

extension HTTPFields.Element.Name {
    static let referrerPolicy = HTTPFields.Element.Name("Referrer-Policy")!
}
