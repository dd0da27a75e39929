public import Hummingbird
import HummingbirdCore
import Ledger
public import Logging
import NIOCore
import ServiceLifecycle
public import TlogWitness
import VoteLedger

/// `vote witness serve`: a `Witness` over HTTP, per c2sp.org/tlog-witness. `POST /add-checkpoint` answers the
/// witness's decision with the protocol's status; `GET /<origin hash>/checkpoint` serves each log's latest
/// cosigned checkpoint to monitors; `GET /` says, for a person, which witness this is and which logs it
/// follows. Every answer is plain text; no route writes anything but the witness's own state.
public enum WitnessServer {
    /// The largest request body read (413 beyond): 63 proof lines of 45 bytes and a checkpoint with the 16
    /// signatures of up to about 5 kB each that signed-note verifiers are expected to accept (post-quantum
    /// signatures are that large) fit under it.
    public static let maxBody = 128 * 1024

    /// The router alone (the in-process tests drive it without a socket).
    public static func router(_ witness: Witness, logger: Logger) -> Router<BasicRequestContext> {
        let router = Router()
        let evidence = Evidence()
        router.post("add-checkpoint") { request, _ in
            let body: ByteBuffer
            do { body = try await request.body.collect(upTo: maxBody) } catch is NIOTooManyBytesError {
                return text("the request body is larger than \(maxBody) bytes\n", status: .contentTooLarge)
            }
            switch witness.addCheckpoint(Array(buffer: body)) {
            case .cosigned(let line):
                logger.info("cosigned: \(line.dropLast())")
                return text(line, status: .ok)
            case .conflict(let size):
                return Response(
                    status: .conflict, headers: [.contentType: "text/x.tlog.size"],
                    body: ResponseBody(byteBuffer: ByteBuffer(string: "\(size)\n")))
            case .refused(let status, let reason) where status >= 500:
                // The reason names the state file: logged for the operator, not told to the client.
                logger.error("could not cosign: \(reason)")
                return text(
                    "the witness could not record the checkpoint; nothing was cosigned\n", status: .init(code: status))
            case .refused(let status, let reason):
                // A validly signed checkpoint that does not extend what was cosigned (422) may be evidence of the
                // log's misbehaviour: it is logged, with the request that carried it. Other refusals need no
                // signature to provoke and are not.
                if status == 422, let line = evidence.line(Array(buffer: body), reason: reason) {
                    logger.notice("\(line)")
                }
                return text(reason + "\n", status: HTTPResponse.Status(code: status))
            }
        }
        for method: HTTPRequest.Method in [.get, .head, .put, .delete, .patch, .options] {
            router.on("add-checkpoint", method: method) { _, _ in
                var response = text("add-checkpoint takes POST\n", status: .methodNotAllowed)
                response.headers[.allow] = "POST"
                return response
            }
        }
        router.get("/") { _, _ in text(witness.summary, status: .ok) }
        router.get(":origin/checkpoint") { _, context in
            guard let note = witness.checkpoint(originHash: context.parameters.get("origin") ?? "") else {
                return text("this witness has cosigned no checkpoint of that log\n", status: .notFound)
            }
            return text(note, status: .ok)
        }
        return router
    }

    /// Serves `witness` on `host:port` until SIGTERM or SIGINT; calls `announce` with its address once it
    /// accepts connections (`port` 0 picks a free one). `limits` closes connections that stall (idle, head and
    /// body timeouts, and over TLS the handshake deadline, as `vote serve` does). With `certificate` it serves HTTPS (HTTP/2 or HTTP/1.1, as `vote
    /// serve` does).
    public static func run(
        _ witness: Witness, host: String, port: Int, limits: ServerLimits, certificate: ServerCertificate? = nil,
        announce: @escaping @Sendable (_ address: String) -> Void
    ) async throws {
        LoggingSystem.bootstrap { MetadataOnLogHandler(StreamLogHandler.standardError(label: $0)) }
        var logger = Logger(label: "vote.witness")
        logger.logLevel = .info
        let http1 = HTTP1Channel.Configuration(
            additionalChannelHandlers: [
                RequestDeadlineHandler(headTimeout: limits.headTimeout, bodyTimeout: limits.bodyTimeout)
            ],
            idleTimeout: limits.idleTimeout)
        let scheme = certificate == nil ? "http" : "https"
        let app = Application(
            router: router(witness, logger: logger),
            server: .serving(http1, certificate: certificate, limits: limits, connections: nil),
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "vote-witness"),
            onServerRunning: { channel in announce("\(scheme)://\(host):\(channel.localAddress?.port ?? port)") },
            logger: logger)
        let group = ServiceGroup(
            configuration: .init(services: [app], gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        do { try await group.run() } catch { throw VoteError(.io, "the witness stopped: \(error)") }
    }

    /// The log lines of refused, validly signed checkpoints: the log's origin, why, and the whole request in
    /// base64 (the signed checkpoint and the proof it came with, what a monitor needs to show the log forked).
    /// At most `perMinute` lines a minute for each origin; the rest are counted in the next line.
    final class Evidence: Sendable {
        static let perMinute = 10
        private let logged = Locked<[String: (minute: Int64, lines: Int, suppressed: Int)]>([:])
        private let clock: @Sendable () -> Int64

        /// Counts minutes by `clock` (ms since the epoch).
        init(clock: @escaping @Sendable () -> Int64 = { Clock.now() }) { self.clock = clock }

        func line(_ request: [UInt8], reason: String) -> String? {
            let text = String(decoding: request, as: UTF8.self)
            let note = text.range(of: "\n\n").map { text[$0.upperBound...] } ?? ""
            let origin = note.prefix { $0 != "\n" }
            let minute = clock() / 60_000
            let suppressed: Int? = logged.withLock { logged in
                var entry = logged[String(origin)] ?? (minute, 0, 0)
                if entry.minute != minute { entry = (minute, 0, entry.suppressed) }
                defer { logged[String(origin)] = entry }
                guard entry.lines < Self.perMinute else {
                    entry.suppressed += 1
                    return nil
                }
                entry.lines += 1
                defer { entry.suppressed = 0 }
                return entry.suppressed
            }
            guard let suppressed else { return nil }
            let more = suppressed > 0 ? " (and \(suppressed) more refused before it, not logged)" : ""
            return
                "refused (422): \(reason); origin=\(String(reflecting: String(origin))) evidence=\(Base64.encode(request))\(more)"
        }
    }

    private static func text(_ text: String, status: HTTPResponse.Status) -> Response {
        Response(
            status: status, headers: [.contentType: "text/plain; charset=utf-8"],
            body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }
}
