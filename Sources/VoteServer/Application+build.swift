public import Hummingbird
public import Logging
public import NIOCore
import VoteLedger

/// The server's application: every route of `/api/v1` over `server` and the web app at `/`, behind the error
/// mapping and the access log. `vote serve` and the tests both call this (Hummingbird's `buildApplication`
/// pattern).
public func buildApplication(
    _ server: LedgerServer, configuration: ApplicationConfiguration, logger: Logger,
    onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
) -> some ApplicationProtocol {
    Application(
        router: buildRouter(server), configuration: configuration, onServerRunning: onServerRunning, logger: logger)
}

/// The router alone (the in-process tests drive it without a socket).
public func buildRouter(_ server: LedgerServer) -> Router<BasicRequestContext> {
    let router = Router(context: BasicRequestContext.self)
    router.add(middleware: AccessLogMiddleware())
    router.add(middleware: ErrorMiddleware())
    let api = router.group("api/v1")
    PublicRoutes(server: server).add(to: api)
    VoterRoutes(server: server).add(to: api)
    AdminRoutes(server: server).add(to: api)
    OpenAPIRoute.add(to: api)
    WebRoutes(server: server, files: .bundled).add(to: router)
    return router
}

/// Path parameters as ids: a number that is not a valid id is a 404 (no such place), not a 400.
extension Parameters {
    func id(_ name: String, what: String) throws -> UInt32 {
        guard let text = self.get(name), let id = UInt32(text), id > 0 else {
            throw APIError(.notFound, "\(what)_not_found", "\(what) \(self.get(name) ?? "") does not exist")
        }
        return id
    }
}
