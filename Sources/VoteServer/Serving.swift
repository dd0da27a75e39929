import Foundation
import Hummingbird
import Ledger
import Logging
import NIOCore
public import ServiceLifecycle
import UnixSignals
import VoteLedger

extension LedgerServer {
    /// Serves this ledger on `host:port` until SIGTERM or SIGINT (`vote serve`). Once the socket accepts
    /// connections it calls `announce` with its address (`port` 0 picks a free port); an announcement that
    /// fails is logged. On a signal it stops accepting, lets in-flight requests finish, writes what is queued
    /// as the last block and closes the ledger. The access log goes to standard error (`AccessLog`), other log
    /// lines through swift-log's `StreamLogHandler`. With `certificate` it serves HTTPS (HTTP/2 or HTTP/1.1)
    /// and reads the certificate's files again on SIGHUP; bad files then are logged and the old certificate
    /// stays. With `metrics` (`--metrics-listen`) it also serves `GET /metrics` alone, without the admin token,
    /// over plain HTTP on that address; `announce` is then called once both listen, with both addresses.
    /// `services` are the store's (a database's connections, `PostgresDatabase`): started first and stopped last,
    /// once the ledger is closed.
    public func run(
        host: String, port: Int, limits: ServerLimits = ServerLimits(), certificate: ServerCertificate? = nil,
        metrics: (host: String, port: Int)? = nil, services storeServices: [any Service] = [],
        announce: @escaping @Sendable (_ address: String, _ metrics: String?) throws -> Void
    ) async throws {
        LoggingSystem.bootstrap { MetadataOnLogHandler(StreamLogHandler.standardError(label: $0)) }
        var logger = Logger(label: "vote.serve")
        logger.logLevel = .info
        let accessLog = AccessLog.standardError()
        // Trapped before the address is announced, so a SIGHUP sent as soon as it is never kills the server.
        let hangups = certificate == nil ? nil : await UnixSignalsSequence(trapping: .sighup)
        let reloads = Task { [logger] in
            guard let hangups, let certificate else { return }
            for await _ in hangups {
                do {
                    try certificate.reload()
                    logger.info("SIGHUP: reloaded \(certificate.certificateFile) and \(certificate.keyFile)")
                } catch { logger.error("SIGHUP: \(error); still serving the certificate read before") }
            }
        }
        defer { reloads.cancel() }
        let scheme = certificate == nil ? "http" : "https"
        let listening = Listening(metrics: metrics != nil) { [logger] address, metricsAddress in
            do { try announce(address, metricsAddress) } catch { logger.error("cannot announce the server: \(error)") }
        }
        let app = buildApplication(
            self, configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "vote"),
            limits: limits, certificate: certificate, logger: logger, accessLog: accessLog,
            onServerRunning: { channel in
                listening.heard(address: "\(scheme)://\(host):\(channel.localAddress?.port ?? port)")
            })
        let gathering = Task { [logger] in await cosigning?.run(self, logger: logger) }
        defer { gathering.cancel() }
        // The service group stops its services in the reverse of this order, each once the one after it has
        // stopped: the listeners (in-flight requests finish), then the ledger (the witnesses no longer asked, what
        // is queued written as the last block), then the store's services. A service that fails (a listener that
        // cannot bind its port) shuts the group down the same way, in the same order, and its error is thrown.
        let closing = LedgerClosing {
            gathering.cancel()
            await gathering.value
            accessLog.flush()
            await self.close()
        }
        var services: [any Service] = storeServices + [closing, app]
        if let metrics {
            services.append(
                Application(
                    router: ServerMetrics.router(self),
                    configuration: ApplicationConfiguration(
                        address: .hostname(metrics.host, port: metrics.port), serverName: "vote"),
                    onServerRunning: { channel in
                        listening.heard(
                            metrics: "http://\(metrics.host):\(channel.localAddress?.port ?? metrics.port)")
                    }, logger: logger))
        }
        do {
            let ordered = services.map {
                ServiceGroupConfiguration.ServiceConfiguration(
                    service: $0, successTerminationBehavior: .gracefullyShutdownGroup,
                    failureTerminationBehavior: .gracefullyShutdownGroup)
            }
            let group = ServiceGroup(
                configuration: .init(services: ordered, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
            try await group.run()
        } catch { throw VoteError(.io, "the server stopped: \(error)") }
    }
}

/// Closing the ledger as a service of the server's lifecycle: on the group's graceful shutdown (or, should the
/// group be cancelled, on that) it runs `close`, in a task of its own so a cancellation does not cut it short.
private struct LedgerClosing: Service {
    let close: @Sendable () async -> Void

    func run() async {
        try? await gracefulShutdown()
        await Task { await close() }.value
    }
}

/// The server's listeners' addresses as each starts listening, announced once all of them listen.
private final class Listening: Sendable {
    private let addresses = Locked<(address: String?, metrics: String?)>((nil, nil))
    private let expectsMetrics: Bool
    private let announce: @Sendable (_ address: String, _ metrics: String?) -> Void

    init(metrics: Bool, announce: @escaping @Sendable (_ address: String, _ metrics: String?) -> Void) {
        expectsMetrics = metrics
        self.announce = announce
    }

    func heard(address: String? = nil, metrics: String? = nil) {
        let all = addresses.withLock { addresses in
            addresses.address = address ?? addresses.address
            addresses.metrics = metrics ?? addresses.metrics
            return addresses.address.map { ($0, addresses.metrics) }
        }
        guard let (address, metricsAddress) = all, expectsMetrics == (metricsAddress != nil) else { return }
        announce(address, metricsAddress)
    }
}

/// swift-log's `StreamLogHandler`, given its metadata only when it logs a line: Hummingbird sets a request id
/// on every request's logger, and StreamLogHandler formats all its metadata on every set, which cost about 1%
/// of the server's CPU for lines almost never logged (errors only; the access log is `AccessLog`).
struct MetadataOnLogHandler: LogHandler {
    private var stream: StreamLogHandler
    var metadata: Logger.Metadata = [:]

    init(_ stream: StreamLogHandler) { self.stream = stream }

    var logLevel: Logger.Level {
        get { stream.logLevel }
        set { stream.logLevel = newValue }
    }

    var metadataProvider: Logger.MetadataProvider? {
        get { stream.metadataProvider }
        set { stream.metadataProvider = newValue }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var stream = stream
        stream.metadata = metadata
        stream.log(event: event)
    }
}
