import CoreMetrics
import Hummingbird
import Prometheus
import VoteLedger

/// What an operator of several servers watches: `GET /metrics`, in Prometheus' text format (0.0.4). The ledger's
/// writer records through swift-metrics' API (`LedgerMetrics`); the vote routes count their answers here; and
/// `vote serve` bootstraps swift-prometheus as the backend, once, before it opens the ledger. The names are
/// the README's ("Metrics") and the OpenAPI document's.
public enum ServerMetrics {
    /// Votes recorded by the vote routes (`POST /api/v1/places/{place}/votes`, an anonymous place's
    /// `POST /api/v1/places/{place}/ballots`, BVC's `/setVote`).
    static let acceptedLabel = "vote_votes_accepted_total"
    /// Votes the vote routes refused, by `reason`: the API's error code (`already_voted`, `token_not_authorized`,
    /// `voting_closed`, `overloaded`, `rate_limited`, `malformed_token`, …).
    static let refusedLabel = "vote_votes_refused_total"
    /// Commands waiting for the writer's next block, when scraped.
    static let queuedLabel = "vote_writer_queued"

    /// What `/metrics` answers: every metric recorded through swift-metrics once `bootstrap()` has run.
    static let registry = PrometheusCollectorRegistry()

    /// Makes swift-metrics record into the registry `/metrics` answers from. Runs once per process (later calls
    /// do nothing: swift-metrics takes one bootstrap); `vote serve` calls it first thing.
    public static func bootstrap() { _ = bootstrapped }

    private static let bootstrapped: Void = {
        var factory = PrometheusMetricsFactory(registry: registry)
        // A block is durable after one fsync (a millisecond or two on an SSD), or a database round trip; a
        // second is a server in trouble.
        factory.durationHistogramBuckets[LedgerMetrics.blockCommitLabel] = [
            .milliseconds(1), .microseconds(2500), .milliseconds(5), .milliseconds(10), .milliseconds(25),
            .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1),
        ]
        // From a lone vote to `LedgerWriter.maxCommandsPerBlock`.
        factory.valueHistogramBuckets[LedgerMetrics.blockEventsLabel] = [
            1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000,
        ]
        MetricsSystem.bootstrap(factory)
        // Shown from the start, at zero, so that a dashboard's rates have a beginning.
        accepted.increment(by: 0)
        Counter(label: LedgerMetrics.blocksTakenInLabel).increment(by: 0)
    }()

    /// Made on first use, after `bootstrap()` in `vote serve` (a vote is counted without looking the counter up).
    private static let accepted = Counter(label: acceptedLabel)

    /// Counts a vote route's answer: a vote recorded, or one refused with the error code its answer carries
    /// (`APIError(_:)`, the one mapping the answer is made by), so that accepted and refused add up to every
    /// answer the vote routes gave.
    static func countVote(refusedWith error: (any Error)?) {
        guard let error else {
            accepted.increment()
            return
        }
        Counter(label: refusedLabel, dimensions: [("reason", APIError(error).code)]).increment()
    }

    /// `body`, a vote route's work, counted by `countVote`.
    static func countingVote(_ body: () async throws -> Response) async throws -> Response {
        do {
            let response = try await body()
            countVote(refusedWith: nil)
            return response
        } catch {
            countVote(refusedWith: error)
            throw error
        }
    }

    /// Values read when scraped rather than recorded as they change: the writer's queue. (The database store
    /// records its connections itself, as they change: `vote_database_connections`.)
    static func sample(_ server: LedgerServer) async {
        Gauge(label: queuedLabel).record(await server.writer.queued)
    }

    /// The answer of `/metrics`: the sampled values, then every metric in the registry.
    static func response(_ server: LedgerServer) async -> Response {
        await sample(server)
        return Response(
            status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(bytes: registry.emitToBuffer())))
    }

    /// `GET /metrics` behind the admin token (as the admin routes), on the server's router.
    static func add(to router: Router<ServerContext>, server: LedgerServer, failures: FailureLimiter) {
        router.group("metrics").add(middleware: AdminAuthMiddleware(adminToken: server.adminToken, failures: failures))
            .get { _, _ in await response(server) }
    }

    /// The router of `--metrics-listen`: `GET /metrics` alone, without the token, for a scraper on the host.
    static func router(_ server: LedgerServer) -> Router<ServerContext> {
        let router = Router(context: ServerContext.self)
        router.add(middleware: ErrorMiddleware())
        router.get("metrics") { _, _ in await response(server) }
        return router
    }
}
