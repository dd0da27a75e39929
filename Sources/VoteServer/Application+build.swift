public import Hummingbird
import HummingbirdCore
import HummingbirdHTTP2
public import Logging
public import NIOCore
import VoteLedger

/// The server's application: every route of `/api/v1`, the BVC client's routes and the web app at `/` over
/// `server`, behind the access log (if `accessLog`), the security headers and the error mapping, with
/// `limits` against hostile clients; plain HTTP/1.1, or with `certificate` TLS offering HTTP/2 and HTTP/1.1
/// (ALPN). `vote serve` and the tests both call this (Hummingbird's `buildApplication` pattern).
public func buildApplication(
    _ server: LedgerServer, configuration: ApplicationConfiguration, limits: ServerLimits = ServerLimits(),
    certificate: ServerCertificate? = nil, logger: Logger, accessLog: AccessLog? = nil,
    onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
) -> some ApplicationProtocol {
    var configuration = configuration
    configuration.availableConnectionsDelegate = MaximumAvailableConnections(limits.maxConnections)
    let http1 = HTTP1Channel.Configuration(
        additionalChannelHandlers: [BodyDeadlineHandler(timeout: limits.bodyTimeout)],
        idleTimeout: limits.idleTimeout)
    let builder: HTTPServerBuilder
    if let certificate {
        // The TLS context is built when the server starts (ServerCertificate has built one from the same
        // files already, so a bad pair has been refused before).
        builder = HTTPServerBuilder { responder in
            try HTTP2UpgradeChannel(
                tlsConfiguration: certificate.tlsConfiguration,
                configuration: .init(
                    idleTimeout: .nanoseconds(limits.idleTimeout.nanoseconds), streamConfiguration: http1),
                responder: responder)
        }
    } else {
        builder = .http1(configuration: http1)
    }
    return Application(
        router: buildRouter(server, limits: limits, accessLog: accessLog), server: builder,
        configuration: configuration, onServerRunning: onServerRunning, logger: logger)
}

/// The router alone (the in-process tests drive it without a socket).
public func buildRouter(
    _ server: LedgerServer, limits: ServerLimits = ServerLimits(), accessLog: AccessLog? = nil
) -> Router<ServerContext> {
    let router = Router(context: ServerContext.self)
    if let accessLog { router.add(middleware: AccessLogMiddleware(log: accessLog)) }
    router.add(middleware: SecurityHeadersMiddleware())
    router.add(middleware: ErrorMiddleware())
    let failures = FailureLimiter(limits: limits, clock: server.clock)
    let api = router.group("api/v1")
    PublicRoutes(server: server).add(to: api)
    VoterRoutes(server: server, failures: failures).add(to: api)
    AdminRoutes(server: server, failures: failures).add(to: api)
    OpenAPIRoute.add(to: api)
    BVCRoutes(server: server, failures: failures).add(to: router)
    WebRoutes(server: server, files: .bundled).add(to: router)
    return router
}

/// What a hostile or broken client may cost the server. The defaults suit a public server; tests set
/// them small so a timeout or a limit is reached by what the client does, never by how long a test waits.
public struct ServerLimits: Sendable {
    /// A connection that completes no request part for this long is closed. Request headers are one part,
    /// so a client trickling header bytes (slowloris) is cut off this long after it connected.
    public var idleTimeout: TimeAmount
    /// A request's body must have arrived in full this long after its headers, else the connection is
    /// closed: the idle timeout restarts with every body chunk, so it alone lets a client trickle a body.
    public var bodyTimeout: TimeAmount
    /// Connections served at once; beyond it new connections wait in the listen backlog.
    public var maxConnections: Int
    /// Failed token attempts (malformed, unknown or wrong admin tokens) one client address may make in a
    /// burst before it is answered 429; one more is allowed every `failureRefillMs`.
    public var failureBurst: Int
    /// Milliseconds (of the server's clock) for one more failed attempt to be allowed.
    public var failureRefillMs: Int64

    public init(
        idleTimeout: TimeAmount = .seconds(30), bodyTimeout: TimeAmount = .seconds(60), maxConnections: Int = 1024,
        failureBurst: Int = 20, failureRefillMs: Int64 = 3000
    ) {
        self.idleTimeout = idleTimeout
        self.bodyTimeout = bodyTimeout
        self.maxConnections = maxConnections
        self.failureBurst = failureBurst
        self.failureRefillMs = failureRefillMs
    }
}

/// Each request's context: Hummingbird's core storage and the client's address (what failed token
/// attempts are counted against).
public struct ServerContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The peer's address; nil when the router is driven without a socket (in-process tests).
    public let remoteAddress: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
    }

    /// The key failed attempts are counted under: the IP address (an IPv6 client by its /64, which one
    /// host can fill with addresses).
    var clientKey: String {
        guard let address = remoteAddress, let ip = address.ipAddress else { return "local" }
        if case .v6(let v6) = address {
            // The first 8 bytes of the address (its /64), whatever the text form's compression; an IPv4
            // client of a dual-stack socket (::ffff:a.b.c.d) by its IPv4 address.
            var raw = v6.address.sin6_addr
            let bytes = withUnsafeBytes(of: &raw) { Array($0) }
            if bytes[0..<10].allSatisfy({ $0 == 0 }), bytes[10] == 0xFF, bytes[11] == 0xFF {
                return bytes[12...].map { String($0) }.joined(separator: ".")
            }
            return bytes.prefix(8).map { String($0, radix: 16) }.joined(separator: ":") + "/64"
        }
        return ip
    }
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

/// Closes a connection whose request body has not arrived in full `timeout` after its headers (a client
/// trickling a body, byte by byte, would otherwise hold its connection as long as it likes). One timer per
/// connection at a time, not one per request: when it fires it closes the connection if the body under way
/// is past its deadline, else waits for that body's deadline, or stops if no body is under way (scheduling
/// and cancelling a timer for every request cost more than the rest of this handler).
final class BodyDeadlineHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPConnectionStateHandler.InboundIn
    typealias InboundOut = HTTPConnectionStateHandler.InboundIn
    private let timeout: TimeAmount
    /// When the body under way must have arrived in full; nil between requests.
    private var deadline: NIODeadline?
    private var timer: Scheduled<Void>?

    init(timeout: TimeAmount) { self.timeout = timeout }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            let deadline = NIODeadline.now() + timeout
            self.deadline = deadline
            if timer == nil { wake(context: context, at: deadline) }
        case .end: deadline = nil
        case .body: break
        }
        context.fireChannelRead(data)
    }

    private func wake(context: ChannelHandlerContext, at time: NIODeadline) {
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: time) { [self] in
            timer = nil
            guard let deadline else { return }
            if deadline <= NIODeadline.now() {
                context.close(promise: nil)
            } else {
                wake(context: context, at: deadline)
            }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) { timer?.cancel() }
}
