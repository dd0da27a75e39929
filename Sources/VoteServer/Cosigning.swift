import CoreMetrics
import Hummingbird
public import Ledger
import Logging
import VoteLedger

/// Gathers witnesses' cosignatures (c2sp.org/tlog-witness) on the ledger's signed heads, in the background
/// while `vote serve` runs (`--witness NAME=URL=VKEY`). No answer waits for a witness: a vote's receipt is
/// handed out as soon as its block is durable, under the authority's signature alone, and the head route
/// serves the freshest head that witnesses cosigned, which an auditor checks the receipt against
/// (`vote audit RECEIPT --head HEAD --witness … --quorum K`). Holding every vote until K witnesses answered
/// would put the slowest of them in every voter's wait, and a witness that hangs would stall the election.
///
/// After each new durable block it signs the head and asks every witness that is up, in parallel, each
/// bounded by the timeout, with `old` the size that witness last cosigned (learned from its 409 the first
/// time) and a consistency proof from there. A witness that fails is reported (a log line, the
/// `vote_witness_up` gauge) and skipped until `retryAfter` has passed, then asked again.
public final class Cosigning: Sendable {
    public let witnesses: [WitnessEndpoint]
    let timeout: Duration
    /// How long a witness that failed is left alone before it is asked again.
    let retryAfter: Duration

    /// What the server knows of one witness.
    struct Known: Sendable {
        /// The size it last cosigned; nil until it answers once.
        var size: UInt64?
        var up = true
        /// When a witness that is down is next asked.
        var retryAt: ContinuousClock.Instant?
    }

    private let known: Locked<[Known]>
    /// Recent signed heads (freshest last) with every cosignature line gathered on each.
    private let recent: Locked<[SignedNote]>
    /// How many recent heads are kept: enough for slower witnesses to catch up on one of them.
    static let kept = 16

    public init(witnesses: [WitnessEndpoint], timeout: Duration, retryAfter: Duration = .seconds(5)) {
        self.witnesses = witnesses
        self.timeout = timeout
        self.retryAfter = retryAfter
        known = Locked(witnesses.map { _ in Known() })
        recent = Locked([])
    }

    /// The head to hand out and the names of the witnesses whose cosignature it carries; nil before any
    /// witness cosigned. It is the freshest recent head cosigned by as many witnesses as are up (all of them, or
    /// all those still answering while some are down); failing that, the one cosigned by the most (the freshest
    /// of those), so a head cosigned by few never hides one that more have cosigned.
    public func cosignedHead() -> (note: SignedNote, cosignedBy: [String])? {
        let notes = recent.withLock { $0 }
        let up = max(1, known.withLock { $0.filter(\.up).count })
        let cosigned = notes.map { note in
            (note: note, cosignedBy: witnesses.filter { $0.cosigner.timestamp(of: note) != nil }.map(\.cosigner.name))
        }
        return cosigned.last { $0.cosignedBy.count >= up }
            ?? cosigned.filter { !$0.cosignedBy.isEmpty }.max { $0.cosignedBy.count <= $1.cosignedBy.count }
    }

    /// Whether each witness answered the last time it was asked, by name.
    public var status: [(name: String, up: Bool)] {
        let known = known.withLock { $0 }
        return zip(witnesses, known).map { ($0.cosigner.name, $1.up) }
    }

    /// Runs until the task is cancelled: after each new durable block of `server`, gathers cosignatures.
    func run(_ server: LedgerServer, logger: Logger) async {
        var signed: UInt64?
        let gauges = witnesses.map { Gauge(label: "vote_witness_up", dimensions: [("witness", $0.cosigner.name)]) }
        for gauge in gauges { gauge.record(1) }
        while !Task.isCancelled {
            if server.view().head.treeSize != signed, let note = try? await server.writer.signedHead(),
                let checkpoint = Checkpoint(text: note.text)
            {
                signed = checkpoint.treeSize
                recent.withLock { recent in
                    recent.append(note)
                    if recent.count > Self.kept { recent.removeFirst() }
                }
                let now = ContinuousClock.now
                let due = known.withLock { known in
                    known.indices.filter { known[$0].up || known[$0].retryAt.map { $0 <= now } ?? true }
                }
                await withTaskGroup(of: Void.self) { group in
                    for index in due {
                        group.addTask {
                            await self.ask(
                                index, note: note, checkpoint: checkpoint, server: server, logger: logger,
                                gauge: gauges[index])
                        }
                    }
                }
            }
            try? await Task.sleep(for: .milliseconds(50))
        }
    }

    /// Asks witness `index` to cosign `note`, and records what came of it.
    private func ask(
        _ index: Int, note: SignedNote, checkpoint: Checkpoint, server: LedgerServer, logger: Logger, gauge: Gauge
    ) async {
        let witness = witnesses[index]
        var old = known.withLock { $0[index].size } ?? 0
        var failure = "no answer"
        for _ in 0..<2 {
            guard old <= checkpoint.treeSize else {
                failure =
                    "it cosigned \(old) events, more than this ledger's \(checkpoint.treeSize): it saw another history"
                break
            }
            do {
                let proof =
                    old == 0 || old == checkpoint.treeSize
                    ? []
                    : try server.source.consistencyProof(
                        oldSize: old, newSize: checkpoint.treeSize, root: checkpoint.root)
                let body =
                    "old \(old)\n" + proof.map { Base64.encode($0.bytes) + "\n" }.joined() + "\n" + note.serialized
                let reply = try await WitnessHTTP.post(
                    host: witness.host, port: witness.port, path: witness.path + "/add-checkpoint",
                    body: Array(body.utf8), timeout: timeout)
                let text = String(decoding: reply.body, as: UTF8.self)
                if reply.status == 409, let size = UInt64(text.dropLast()), text.hasSuffix("\n") {
                    old = size
                    failure = "it answered 409 twice"
                    continue
                }
                guard reply.status == 200, let cosigned = SignedNote(parsing: note.serialized + text),
                    witness.cosigner.timestamp(of: cosigned) != nil
                else {
                    failure = "it answered \(reply.status): \(text.prefix { $0 != "\n" }.prefix(200))"
                    break
                }
                let lines = cosigned.signatures.filter {
                    $0.name == witness.cosigner.name && Array($0.payload.prefix(4)) == witness.cosigner.keyID
                }
                recent.withLock { recent in
                    guard let at = recent.lastIndex(where: { $0.text == note.text }) else { return }
                    recent[at].signatures.removeAll { line in lines.contains { $0.name == line.name } }
                    recent[at].signatures += lines
                }
                let wasDown = known.withLock { known in
                    defer { known[index] = Known(size: checkpoint.treeSize, up: true, retryAt: nil) }
                    return !known[index].up
                }
                if wasDown { logger.notice("witness \(witness.cosigner.name) is up again") }
                gauge.record(1)
                return
            } catch {
                failure = "\(error)"
                break
            }
        }
        let wasUp = known.withLock { known in
            defer {
                known[index].up = false
                known[index].retryAt = ContinuousClock.now + retryAfter
            }
            return known[index].up
        }
        if wasUp {
            logger.error(
                "witness \(witness.cosigner.name) did not cosign the head of \(checkpoint.treeSize) events: \(failure)")
        }
        gauge.record(0)
    }
}

extension HTTPFields.Element.Name {
    /// The head route's header naming the witnesses whose cosignature the head carries, comma-separated.
    static let cosignedBy = Self("VoteLedger-Cosigned-By")!
}
