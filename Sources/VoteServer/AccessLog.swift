import Dispatch
import Foundation
import Hummingbird
import VoteLedger

/// The server's access log: one line per request, in the shape swift-log's `StreamLogHandler` gave it
/// (`2026-11-25T16:53:35.123Z info vote.serve: hb.request.id=… method=POST ms=0.53 path=/api/v1/… status=201
/// [VoteServer] request`, the time in UTC). Lines are formatted as bytes and written in batches: a line
/// waits in memory until the write before it is done, so a busy server makes one write for many requests
/// instead of one each (with a Foundation-formatted line, a time-zone lookup and a stderr flush per request,
/// the access log cost as much CPU as the rest of a vote's handling). `flush()` writes what waits; a line
/// can be lost only if the process dies within moments of its request.
public final class AccessLog: @unchecked Sendable {
    private let descriptor: Int32
    /// Lines not yet handed to `write`, and whether a flush is on its way for them.
    private let lock = NSLock()
    private var pending: [UInt8] = []
    private var flushQueued = false
    /// The start of the line for the second `second` ("YYYY-MM-DDTHH:MM:SS"), reused within that second.
    private var second: Int64 = -1
    private var secondText: [UInt8] = []
    /// Held while a batch is written, so batches reach the file in order.
    private let writing = NSLock()
    private let flusher = DispatchQueue(label: "voteledger.access-log")
    /// Beyond this many waiting bytes (the file is not keeping up) a request writes them itself, waiting as
    /// it did before batching, so memory stays bounded.
    private static let maxPending = 1 << 20

    /// A log writing to `descriptor` (which stays open; the caller owns it).
    public init(descriptor: Int32) { self.descriptor = descriptor }

    /// The log on standard error, where `vote serve` writes it.
    public static func standardError() -> AccessLog { AccessLog(descriptor: 2) }

    /// Records a request: its method, its path (never the query), the status answered, how long it took
    /// and Hummingbird's request id (`hb.request.id`, also on any error line about the request).
    func record(method: String, path: String, status: Int, elapsed: Duration, requestID: String) {
        if AccessLog.isAnonymousCast(path) { return recordAnonymousCast(method: method, path: path, status: status) }
        let now = Clock.now()
        let (seconds, millis) = (now / 1000, now % 1000)  // the clock is after 1970
        let centis =
            (elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000
                + 5_000) / 10_000
        var line = AccessLogLine()
        line.digits(millis, width: 3)
        line.raw("Z info vote.serve: hb.request.id=")
        line.text(requestID)
        line.raw(" method=")
        line.text(method)
        line.raw(" ms=")
        line.digits(centis / 100, width: 1)
        line.raw(".")
        line.digits(centis % 100, width: 2)
        line.raw(" path=")
        line.text(path)
        line.raw(" status=")
        line.digits(Int64(status), width: 1)
        line.raw(" [VoteServer] request\n")
        enqueue(line) {
            if seconds != second {
                second = seconds
                secondText = Array(Timestamp.format(seconds * 1000).utf8.prefix(19)) + [UInt8(ascii: ".")]
            }
            return secondText
        }
    }

    /// Whether `path` is an anonymous place's casting route (`/api/v1/places/{place}/ballots`) or its receipt route
    /// (`…/ballots/receipt`, which carries the credential too), whose line must not help tie a ballot to the
    /// issuance request that got its credential.
    static func isAnonymousCast(_ path: String) -> Bool {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        return (parts.count == 6 || (parts.count == 7 && parts[6] == "receipt")) && parts[0].isEmpty
            && parts[1] == "api" && parts[2] == "v1" && parts[3] == "places" && parts[5] == "ballots"
    }

    /// A casting request's line: the time to the minute only, and no request id or duration, either of which
    /// could match it with the line of the issuance request it follows.
    private func recordAnonymousCast(method: String, path: String, status: Int) {
        var line = AccessLogLine()
        line.raw("Z info vote.serve: method=")
        line.text(method)
        line.raw(" path=")
        line.text(path)
        line.raw(" status=")
        line.digits(Int64(status), width: 1)
        line.raw(" [VoteServer] request\n")
        let minute = Array(Timestamp.format(Clock.now() / 60_000 * 60_000).utf8.prefix(16))
        enqueue(line) { minute }
    }

    /// Queues `line` after the time stamp `stamp` gives (called with the lock held), and has it written.
    private func enqueue(_ line: AccessLogLine, stamp: () -> [UInt8]) {
        let (queue, full) = lock.withLock {
            pending += stamp()
            pending += line.bytes
            let first = !flushQueued
            flushQueued = true
            return (first, pending.count > AccessLog.maxPending)
        }
        if full {
            flush()
        } else if queue {
            flusher.async { self.flush() }
        }
    }

    /// Writes every line recorded so far (at shutdown, after the last request).
    public func flush() {
        writing.withLock {
            let batch = lock.withLock {
                flushQueued = false
                defer { pending.removeAll(keepingCapacity: true) }
                return pending
            }
            batch.withUnsafeBytes { raw in
                var offset = 0
                while offset < raw.count {
                    let written = write(descriptor, raw.baseAddress! + offset, raw.count - offset)
                    if written < 0 && errno == EINTR { continue }
                    // A log that cannot be written (closed stderr, full disk) must not stop the server.
                    guard written > 0 else { return }
                    offset += written
                }
            }
        }
    }
}

/// One access log line after its time stamp, as bytes.
private struct AccessLogLine {
    var bytes: [UInt8] = []

    init() { bytes.reserveCapacity(160) }

    /// Appends the line's own words and punctuation.
    mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// Appends `text`, with control characters (which a path might smuggle in to forge a line) as `\xHH`.
    mutating func text(_ text: String) {
        var text = text
        text.withUTF8 { utf8 in
            guard utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else { return bytes.append(contentsOf: utf8) }
            for byte in utf8 {
                if byte < 0x20 || byte == 0x7F {
                    let hex = Array("0123456789abcdef".utf8)
                    bytes += [UInt8(ascii: "\\"), UInt8(ascii: "x"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
                } else {
                    bytes.append(byte)
                }
            }
        }
    }

    /// Appends a non-negative number in decimal, zero-padded to at least `width` digits.
    mutating func digits(_ value: Int64, width: Int) {
        var divisor: Int64 = 1
        var count = 1
        while value / divisor >= 10 || count < width {
            divisor *= 10
            count += 1
        }
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
            divisor /= 10
        }
    }
}

/// Writes each request's line to the access log (method, path without the query, status and duration).
/// Tokens travel only in POST bodies and the admin token in a header, neither of which is logged, so no
/// secret reaches a log line.
struct AccessLogMiddleware<Context: RequestContext>: RouterMiddleware {
    let log: AccessLog

    func handle(
        _ request: Request, context: Context, next: (Request, Context) async throws -> Response
    ) async throws -> Response {
        let start = ContinuousClock.now
        let response: Response
        do {
            response = try await next(request, context)
        } catch {
            // Errors are turned into responses by ErrorMiddleware, inside this one; anything else is logged as 500.
            record(request, context: context, status: 500, since: start)
            throw error
        }
        record(request, context: context, status: response.status.code, since: start)
        return response
    }

    private func record(_ request: Request, context: Context, status: Int, since start: ContinuousClock.Instant) {
        log.record(
            method: request.method.rawValue, path: request.uri.path, status: status,
            elapsed: ContinuousClock.now - start, requestID: context.id)
    }
}
