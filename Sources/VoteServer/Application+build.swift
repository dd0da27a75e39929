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
    let connections = ConnectionCounter(
        cap: limits.maxConnectionsPerAddress, clients: ClientResolver(trustedProxies: limits.trustedProxies))
    let http1 = HTTP1Channel.Configuration(
        additionalChannelHandlers: [
            RequestDeadlineHandler(headTimeout: limits.headTimeout, bodyTimeout: limits.bodyTimeout)
        ],
        idleTimeout: limits.idleTimeout)
    return Application(
        router: buildRouter(server, limits: limits, accessLog: accessLog, hsts: certificate != nil),
        server: .serving(http1, certificate: certificate, limits: limits, connections: connections),
        configuration: configuration, onServerRunning: onServerRunning, logger: logger)
}

extension HTTPServerBuilder {
    /// Plain HTTP/1.1 with `http1`, or with `certificate` TLS offering HTTP/2 and HTTP/1.1 (ALPN), `http1`
    /// then configuring each HTTP/1.1 connection and each HTTP/2 stream: `vote serve`'s and the witness's.
    /// Every connection is admitted (`AdmissionHandler`) before anything is read from it, TLS included: with
    /// `connections` an address over its cap is closed at once, and over TLS a connection whose handshake has
    /// not completed `limits.handshakeTimeout` after it was accepted is closed.
    static func serving(
        _ http1: HTTP1Channel.Configuration, certificate: ServerCertificate?, limits: ServerLimits,
        connections: ConnectionCounter?
    ) -> HTTPServerBuilder {
        guard let certificate else {
            return HTTPServerBuilder { responder in
                AdmittedChannel(
                    inner: HTTP1Channel(responder: responder, configuration: http1), connections: connections,
                    handshakeTimeout: nil)
            }
        }
        // The TLS context is built when the server starts (ServerCertificate has built one from the same
        // files already, so a bad pair has been refused before).
        return HTTPServerBuilder { responder in
            AdmittedChannel(
                inner: try HTTP2UpgradeChannel(
                    tlsConfiguration: certificate.tlsConfiguration,
                    configuration: .init(
                        idleTimeout: .nanoseconds(limits.idleTimeout.nanoseconds), streamConfiguration: http1),
                    responder: responder),
                connections: connections, handshakeTimeout: limits.handshakeTimeout)
        }
    }
}

/// The router alone (the in-process tests drive it without a socket).
/// With `hsts` (the server speaks only TLS) every answer carries `Strict-Transport-Security`.
public func buildRouter(
    _ server: LedgerServer, limits: ServerLimits = ServerLimits(), accessLog: AccessLog? = nil, hsts: Bool = false
) -> Router<ServerContext> {
    let router = Router(context: ServerContext.self)
    if let accessLog { router.add(middleware: AccessLogMiddleware(log: accessLog)) }
    router.add(middleware: SecurityHeadersMiddleware(hsts: hsts))
    router.add(middleware: ErrorMiddleware())
    let failures = FailureLimiter(limits: limits, clock: server.clock)
    let events = EventPages(server: server, concurrentReaders: limits.concurrentEventReaders)
    let api = router.group("api/v1")
    PublicRoutes(server: server, events: events).add(to: api)
    // Votes and ballots share one store of answers kept for retries; the admin routes keep their own.
    let retries = IdempotencyStore()
    VoterRoutes(server: server, failures: failures, idempotency: retries).add(to: api)
    BallotRoutes(server: server, failures: failures, idempotency: retries).add(to: api)
    AdminRoutes(server: server, failures: failures).add(to: api)
    OpenAPIRoute.add(to: api)
    BVCRoutes(server: server, failures: failures).add(to: router)
    ServerMetrics.add(to: router, server: server, failures: failures)
    WebRoutes(server: server, files: .bundled).add(to: router)
    return router
}

/// What a hostile or broken client may cost the server. The defaults suit a public server; tests set
/// them small so a timeout or a limit is reached by what the client does, never by how long a test waits.
public struct ServerLimits: Sendable {
    /// A connection that completes no request part for this long is closed.
    public var idleTimeout: TimeAmount
    /// A request's head (request line and headers) must have arrived in full this long after the connection
    /// opened or its previous answer was sent, else the connection is closed: the idle timeout counts only
    /// whole request parts, so a client trickling header bytes is cut off by this.
    public var headTimeout: TimeAmount
    /// A request's body must have arrived in full this long after its headers, else the connection is
    /// closed: the idle timeout restarts with every body chunk, so it alone lets a client trickle a body.
    public var bodyTimeout: TimeAmount
    /// Over TLS, a connection's handshake must have completed this long after the connection was accepted,
    /// else the connection is closed: before the handshake no HTTP timeout runs, so without it a client that
    /// connects and sends nothing would hold its connection for ever.
    public var handshakeTimeout: TimeAmount
    /// Connections served at once; beyond it new connections wait in the listen backlog.
    public var maxConnections: Int
    /// Connections one client address may hold open at once; beyond it a new connection is closed at once,
    /// so one address cannot take every connection (`maxConnections`) and leave the others waiting.
    /// Trusted proxies are not capped.
    public var maxConnectionsPerAddress: Int
    /// Failed token attempts (malformed, unknown or wrong admin tokens) one client address may make in a
    /// burst before its failed attempts are answered 429; one more is allowed every `failureRefillMs`.
    /// A request whose token is good is never refused.
    public var failureBurst: Int
    /// Milliseconds (of the server's clock) for one more failed attempt to be allowed.
    public var failureRefillMs: Int64
    /// Proxies whose `X-Forwarded-For` is believed (`--trusted-proxy`); none by default, when the client is
    /// the connection's peer.
    public var trustedProxies: [AddressRange]
    /// Event pages (`GET /api/v1/events`) read at once; more readers wait their turn, so readers of the
    /// event stream cannot take the machine from the writer.
    public var concurrentEventReaders: Int

    public init(
        idleTimeout: TimeAmount = .seconds(30), headTimeout: TimeAmount = .seconds(10),
        bodyTimeout: TimeAmount = .seconds(60), handshakeTimeout: TimeAmount = .seconds(10),
        maxConnections: Int = 1024, maxConnectionsPerAddress: Int = 128, failureBurst: Int = 20,
        failureRefillMs: Int64 = 3000, trustedProxies: [AddressRange] = [], concurrentEventReaders: Int = 2
    ) {
        self.idleTimeout = idleTimeout
        self.headTimeout = headTimeout
        self.bodyTimeout = bodyTimeout
        self.handshakeTimeout = handshakeTimeout
        self.maxConnections = maxConnections
        self.maxConnectionsPerAddress = maxConnectionsPerAddress
        self.failureBurst = failureBurst
        self.failureRefillMs = failureRefillMs
        self.trustedProxies = trustedProxies
        self.concurrentEventReaders = concurrentEventReaders
    }
}

/// Each request's context: Hummingbird's core storage and the connection's peer address (from which, with
/// the trusted proxies, `ClientResolver` works out the client that failed token attempts are counted against).
public struct ServerContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// The peer's address; nil when the router is driven without a socket (in-process tests).
    public let remoteAddress: SocketAddress?

    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress
        // A request id of 128 random bits, not Hummingbird's (a process-wide counter): in a sequence, the id
        // missing from the access log would mark an anonymous ballot's line between its neighbours.
        logger[metadataKey: "hb.request.id"] = .string(Self.randomID())
    }

    /// 32 hex digits from the system's random source.
    static func randomID() -> String {
        var generator = SystemRandomNumberGenerator()
        return [generator.next(), generator.next()].map { (word: UInt64) in
            let digits = String(word, radix: 16)
            return String(repeating: "0", count: 16 - digits.count) + digits
        }.joined()
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

/// Closes a connection whose request head has not arrived in full `headTimeout` after the connection opened
/// or its last answer was sent (a client trickling header lines, or holding a connection without sending), or
/// whose request body has not arrived in full `bodyTimeout` after its head (a client trickling a body, byte by
/// byte). One timer per connection at a time, not one per request: when it fires it closes the connection if
/// the deadline under way has passed, else waits for that deadline, or stops if there is none (a request is
/// being answered); scheduling and cancelling a timer for every request cost more than the rest of this handler.
final class RequestDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPConnectionStateHandler.InboundIn
    typealias InboundOut = HTTPConnectionStateHandler.InboundIn
    typealias OutboundIn = HTTPConnectionStateHandler.OutboundIn
    typealias OutboundOut = HTTPConnectionStateHandler.OutboundIn
    private let headTimeout: TimeAmount
    private let bodyTimeout: TimeAmount
    /// When the head or body under way must have arrived in full; nil while requests are being answered.
    private var deadline: NIODeadline?
    private var timer: Scheduled<Void>?
    /// Requests whose head has arrived and whose answer has not been sent in full.
    private var unanswered = 0
    private var started = false

    init(headTimeout: TimeAmount, bodyTimeout: TimeAmount) {
        self.headTimeout = headTimeout
        self.bodyTimeout = bodyTimeout
    }

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context: context)
        context.fireChannelActive()
    }

    private func start(context: ChannelHandlerContext) {
        guard !started else { return }
        started = true
        expect(NIODeadline.now() + headTimeout, context: context)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head:
            unanswered += 1
            expect(NIODeadline.now() + bodyTimeout, context: context)
        case .end: deadline = nil
        case .body: break
        }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            unanswered = max(0, unanswered - 1)
            if unanswered == 0 { expect(NIODeadline.now() + headTimeout, context: context) }
        }
        context.write(data, promise: promise)
    }

    /// Sets the deadline under way, waking the timer if it is not running.
    private func expect(_ deadline: NIODeadline, context: ChannelHandlerContext) {
        self.deadline = deadline
        if timer == nil { wake(context: context, at: deadline) }
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
