import Foundation
import Hummingbird
import Logging

/// One line per request: method, path (never the query), status and duration. Tokens travel only in POST
/// bodies and the admin token in a header, neither of which is logged, so no secret reaches a log line.
struct AccessLogMiddleware<Context: RequestContext>: RouterMiddleware {
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
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
    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            let answer = APIError(error)
            if answer.status == .internalServerError {
                context.logger.error("request failed", metadata: ["path": .string(request.uri.path), "error": .string(answer.message)])
            }
            return try answer.response(from: request, context: context)
        }
    }
}
