import CoreMetrics
import Foundation
import Hummingbird
public import Ledger
import Logging
public import TlogWitness
import VoteLedger

/// Gathers witnesses' cosignatures (c2sp.org/tlog-witness) on the ledger's signed heads while `vote serve`
/// runs (`--witness NAME=URL=VKEY`), so that receipts and the head route carry them.
///
/// It works in rounds, at most one every `interval` (`--witness-interval`), so a witness is asked at a rate it can
/// plan for however fast blocks come. A round signs the head of the last durable block and asks, in parallel, every witness
/// that is up and has not cosigned that head, each bounded by the timeout, with `old` the size that witness
/// last cosigned (learned from its 409 the first time) and a consistency proof from there. A vote's answer
/// waits for the first round that covers its block (`head(covering:)`) and carries that head's cosignatures:
/// at most the rest of the interval, a round in progress and its own, each round bounded by the timeout. A
/// witness that fails is reported (a log line, the `vote_witness_up` gauge) and leaves the rounds: no vote waits
/// for it again; its later refusals are logged too, at most one line a `refusalLogInterval` with a count of the
/// rest, each with the witness's answer (the evidence of what it refused and why). Every
/// `retryAfter` it is asked, outside the rounds, for the head of the moment (also while no block comes: a
/// witness back after the last vote still cosigns the final head), and it rejoins them once it answers.
public final class Cosigning: Sendable {
    public let witnesses: [WitnessEndpoint]
    let timeout: Duration
    /// How long a witness that failed is left alone before it is asked again.
    let retryAfter: Duration
    /// The least time from the start of one round to the start of the next.
    let interval: Duration
    /// The least time between two lines about the refusals of a witness that is down.
    let refusalLogInterval: Duration

    /// What the server knows of one witness.
    struct Known: Sendable {
        /// The size it last cosigned; nil until it answers once.
        var size: UInt64?
        var up = true
        /// When a witness that is down is next asked.
        var retryAt: ContinuousClock.Instant?
        /// Whether a request to it is under way (one at a time: each extends the last it cosigned).
        var asking = false
        /// While it is down: when one of its refusals was last logged, and how many were not logged since.
        var refusalLogged: ContinuousClock.Instant?
        var refusalsNotLogged = 0

        /// Whether a refusal at `now` by this witness, which is down, is logged: the first at once, then at most
        /// one every `interval`. The number of refusals not logged before it if so (this one is then the latest
        /// logged), nil if this one is only counted.
        mutating func logsRefusal(at now: ContinuousClock.Instant, every interval: Duration) -> Int? {
            if let refusalLogged, now < refusalLogged + interval {
                refusalsNotLogged += 1
                return nil
            }
            defer { (refusalLogged, refusalsNotLogged) = (now, 0) }
            return refusalsNotLogged
        }
    }

    private let known: Locked<[Known]>
    /// Recent signed heads (freshest last) with every cosignature line gathered on each.
    private let recent: Locked<[SignedNote]>
    /// How many recent heads are kept: enough for slower witnesses to catch up on one of them.
    static let kept = 16

    /// Answers waiting for a round to cover a tree of `size` events; `open` is false once gathering has
    /// stopped (a wait then ends at once, with no head).
    private struct Waiting: Sendable {
        var open = true
        var waiters: [(size: UInt64, reply: CheckedContinuation<SignedNote?, Never>)] = []
    }
    private let waiting = Locked(Waiting())
    /// Wakes the rounds: a new durable block, or the retry clock.
    private let wakes: AsyncStream<Void>
    private let wake: AsyncStream<Void>.Continuation

    /// Asks `witnesses`, each answer bounded by `timeout`, in rounds that start at most once every `interval`
    /// (zero: a round for each new durable block).
    public init(
        witnesses: [WitnessEndpoint], timeout: Duration, interval: Duration = .seconds(1),
        retryAfter: Duration = .seconds(5), refusalLogInterval: Duration = .seconds(60)
    ) {
        self.witnesses = witnesses
        self.timeout = timeout
        self.interval = interval
        self.retryAfter = retryAfter
        self.refusalLogInterval = refusalLogInterval
        known = Locked(witnesses.map { _ in Known() })
        recent = Locked([])
        (wakes, wake) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
    }

    /// `head` (the current signed head) with the cosignatures gathered on it so far, and the names of the
    /// witnesses they are from (none yet if the witnesses have not answered for this head). The current head,
    /// never an older one cosigned by more: a receipt checked against an older head would look rolled back.
    public func cosigned(_ head: SignedNote) -> (note: SignedNote, cosignedBy: [String]) {
        guard let note = recent.withLock({ $0.last { $0.text == head.text } }) else { return (head, []) }
        return (note, cosignedBy(note))
    }

    /// The witnesses whose valid cosignature `note` carries, in the order they were configured.
    func cosignedBy(_ note: SignedNote) -> [String] {
        witnesses.filter { $0.cosigner.timestamp(of: note) != nil }.map(\.cosigner.name)
    }

    /// The signed head of the first round that covers a tree of `size` events (a durable block's), with the
    /// cosignatures the witnesses that were up gave it; nil once the server is stopping.
    func head(covering size: UInt64) async -> SignedNote? {
        await withCheckedContinuation { reply in
            let open = waiting.withLock { waiting in
                if waiting.open { waiting.waiters.append((size, reply)) }
                return waiting.open
            }
            if open { wake.yield() } else { reply.resume(returning: nil) }
        }
    }

    /// Runs until the task is cancelled: a round after each new durable block of `server`, at most one every
    /// `interval`.
    func run(_ server: LedgerServer, logger: Logger) async {
        let gauges = witnesses.map { Gauge(label: "vote_witness_up", dimensions: [("witness", $0.cosigner.name)]) }
        for gauge in gauges { gauge.record(1) }
        // The retry clock; a vote's block wakes the rounds through `head(covering:)`.
        let clock = Task { [wake] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(250))
                wake.yield()
            }
        }
        defer {
            clock.cancel()
            for waiter in waiting.withLock({ waiting in
                waiting.open = false
                defer { waiting.waiters = [] }
                return waiting.waiters
            }) { waiter.reply.resume(returning: nil) }
        }
        // Retries run beside the rounds, in this group: cancelling `run` cancels them too.
        await withDiscardingTaskGroup { retrying in
            var latest: (note: SignedNote, checkpoint: Checkpoint)?
            var lastRound: ContinuousClock.Instant?
            for await _ in wakes {
                if Task.isCancelled { break }
                if server.view().head.treeSize != latest?.checkpoint.treeSize {
                    // A new head's round starts no sooner than `interval` after the last one did; the votes that
                    // wait meanwhile are covered by the head signed once it starts.
                    if let lastRound, ContinuousClock.now < lastRound + interval {
                        do { try await Task.sleep(until: lastRound + interval, clock: .continuous) } catch { break }
                    }
                }
                if server.view().head.treeSize != latest?.checkpoint.treeSize,
                    let note = try? server.writer.published.signedHead(), let checkpoint = Checkpoint(text: note.text)
                {
                    lastRound = ContinuousClock.now
                    latest = (note, checkpoint)
                    recent.withLock { recent in
                        recent.append(note)
                        if recent.count > Self.kept { recent.removeFirst() }
                    }
                }
                guard let (note, checkpoint) = latest else { continue }
                let now = ContinuousClock.now
                let (round, retries) = known.withLock { known in
                    let due = known.indices.filter { !known[$0].asking && known[$0].size != checkpoint.treeSize }
                    let round = due.filter { known[$0].up }
                    let retries = due.filter { !known[$0].up && known[$0].retryAt.map { $0 <= now } ?? true }
                    for index in round + retries { known[index].asking = true }
                    return (round, retries)
                }
                let ask = { @Sendable (index: Int) in
                    await self.ask(
                        index, note: note, checkpoint: checkpoint, server: server, logger: logger, gauge: gauges[index])
                }
                for index in retries { retrying.addTask { await ask(index) } }
                await withTaskGroup(of: Void.self) { group in
                    for index in round { group.addTask { await ask(index) } }
                }
                // The round covers every answer waiting for this head or an older one.
                let cosigned = recent.withLock { $0.last { $0.text == note.text } } ?? note
                let covered = waiting.withLock { waiting in
                    defer { waiting.waiters.removeAll { $0.size <= checkpoint.treeSize } }
                    return waiting.waiters.filter { $0.size <= checkpoint.treeSize }
                }
                for waiter in covered { waiter.reply.resume(returning: cosigned) }
            }
        }
    }

    /// Asks witness `index` to cosign `note`, and records what came of it.
    private func ask(
        _ index: Int, note: SignedNote, checkpoint: Checkpoint, server: LedgerServer, logger: Logger, gauge: Gauge
    ) async {
        let witness = witnesses[index]
        let old = known.withLock { $0[index].size }
        let failure: String
        switch await witness.cosign(note, checkpoint: checkpoint, source: server.source, from: old, timeout: timeout) {
        case .success(let lines):
            recent.withLock { recent in
                guard let at = recent.lastIndex(where: { $0.text == note.text }) else { return }
                recent[at].signatures.removeAll { line in lines.contains { $0.name == line.name } }
                recent[at].signatures += lines
                // The authority's line first, then the witnesses' in the order they were configured.
                let rank = { (name: String) in self.witnesses.firstIndex { $0.cosigner.name == name } ?? -1 }
                recent[at].signatures.sort { rank($0.name) < rank($1.name) }
            }
            let wasDown = known.withLock { known in
                defer { known[index] = Known(size: checkpoint.treeSize, up: true, retryAt: nil, asking: false) }
                return !known[index].up
            }
            if wasDown { logger.notice("witness \(witness.cosigner.name) is up again") }
            gauge.record(1)
            return
        case .failure(let refused): failure = refused.reason
        }
        let now = ContinuousClock.now
        let (wasUp, notLogged) = known.withLock { known in
            defer {
                known[index].up = false
                known[index].retryAt = now + retryAfter
                known[index].asking = false
            }
            guard known[index].up else { return (false, known[index].logsRefusal(at: now, every: refusalLogInterval)) }
            known[index].refusalLogged = nil
            known[index].refusalsNotLogged = 0
            return (true, nil)
        }
        if wasUp {
            logger.error(
                "witness \(witness.cosigner.name) did not cosign the head of \(checkpoint.treeSize) events: \(failure)")
        } else if let notLogged {
            // A witness that stays down may be refusing for a reason that matters (a fork it saw): its answer
            // is kept in the log, though not every time it is asked.
            let more = notLogged > 0 ? " (and \(notLogged) more refusals by it since the last line, not logged)" : ""
            let line =
                "witness \(witness.cosigner.name), down, still did not cosign the head of \(checkpoint.treeSize) "
                + "events: \(failure)\(more)"
            logger.error("\(line)")
        }
        gauge.record(0)
    }
}

extension HTTPFields.Element.Name {
    /// The head route's header naming the witnesses whose cosignature the head carries, comma-separated.
    static let cosignedBy = Self("VoteLedger-Cosigned-By")!
}

extension WitnessEndpoint {
    /// `cosign(_:checkpoint:source:from:timeout:)` on a thread of its own, so a witness's answer holds no
    /// task thread; a cancelled task stops waiting for it at once (the thread ends by the timeout).
    func cosign(
        _ note: SignedNote, checkpoint: Checkpoint, source: any BlockSource, from old: UInt64?, timeout: Duration
    ) async -> Result<Lines, Refusal> {
        let reply = Locked<CheckedContinuation<Result<Lines, Refusal>, Never>?>(nil)
        let answer = { @Sendable (result: Result<Lines, Refusal>) in
            reply.withLock { waiting in
                waiting?.resume(returning: result)
                waiting = nil
            }
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                reply.withLock { $0 = continuation }
                if Task.isCancelled { answer(.failure(Refusal(reason: "the server is stopping"))) }
                Thread.detachNewThread {
                    answer(cosign(note, checkpoint: checkpoint, source: source, from: old, timeout: timeout))
                }
            }
        } onCancel: {
            answer(.failure(Refusal(reason: "the server is stopping")))
        }
    }
}
