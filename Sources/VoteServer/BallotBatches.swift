import Election
import Foundation
import Ledger
import Logging
import VoteLedger

/// The anonymous ballots of places that write them in batches (FORMAT.md §11.31), held in this process's memory
/// until their batch is due, then written together in one block in an order no one can predict (the system's
/// random generator shuffles them), so that neither the ledger's order nor its times tie a ballot to the issuance
/// just before it. A ballot is held only once the rules would record it now (`LedgerWriter.check`); a batch is
/// due at the end of an interval of the place's rule (counted from the start of voting), once the place's size
/// is held, or, whatever is held, when voting is about to close (`closing` before its end), after which ballots
/// are written as they arrive. Held ballots are not durable: a server that stops writes what it holds (`close`),
/// and one that crashes loses it, so a voter's client asks for its receipt once the batch is due and casts the
/// same credential again if the ballot is not on the ledger (`POST …/ballots/receipt` answers 404).
final class BallotBatches: Sendable {
    /// How long before voting ends the last batch is written, whatever it holds; ballots that arrive later are
    /// written at once. The block must be made before the end for its ballots to count: this is the room a slow
    /// machine has.
    static let closing: Int64 = 10_000
    /// How often the place's batches are looked at for one that is due.
    static let tick: Duration = .milliseconds(200)

    /// A ballot held for its place's next batch.
    private struct Held {
        var command: Command
        var arrived: Int64
    }

    /// A held ballot's batch: the place's rule, and when the batch is due at the earliest, if the rule says (an
    /// interval); `nil` for a rule of size alone.
    struct Due: Sendable {
        var batching: BallotBatching
        var time: Int64?
    }

    private let writer: LedgerWriter
    private let logger: Logger
    /// Each place's held ballots in arrival order, by credential.
    private let held = Locked([UInt32: [[UInt8]: Held]]())
    /// The places whose batch is being written, so that the loop and a full batch do not write one twice.
    private let writing = Locked(Set<UInt32>())
    private let loop = Locked<Task<Void, Never>?>(nil)

    init(writer: LedgerWriter, logger: Logger = Logger(label: "vote.batches")) {
        self.writer = writer
        self.logger = logger
        loop.withLock { task in
            task = Task { [weak self] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: BallotBatches.tick)
                    guard let self else { return }
                    await self.writeDue()
                }
            }
        }
    }

    deinit { loop.withLock { $0?.cancel() } }

    /// Whether a ballot of `place` arriving at `now` is held for a batch rather than written at once.
    static func holds(_ place: Place, at now: Int64) -> Bool {
        place.batching != nil && now < place.voting.end - closing
    }

    /// Holds `ballot` (an anonymous ballot of `place`, which writes its ballots in batches) once the rules would
    /// record it now; the same ballot held again answers as the first time, the same credential with another
    /// choice is refused as already used. Writes the batch at once when it is full (a rule of size alone).
    func hold(_ ballot: Command, credential: [UInt8], place: Place) async throws -> Due {
        guard let batching = place.batching else { preconditionFailure("a place that writes ballots in batches") }
        let now = writer.clock()
        let known = held.withLock { $0[place.id]?[credential] }
        if let known {
            guard known.command == ballot else { throw VoteError(Violation.credentialAlreadyVoted) }
            return due(batching, place: place, arrived: known.arrived, now: now)
        }
        try await writer.check(ballot)
        let (again, count) = held.withLock { held in
            if let again = held[place.id]?[credential] { return (Optional(again), 0) }
            held[place.id, default: [:]][credential] = Held(command: ballot, arrived: now)
            return (nil, held[place.id]?.count ?? 0)
        }
        if let again, again.command != ballot { throw VoteError(Violation.credentialAlreadyVoted) }
        if batching.interval == nil, let size = batching.size, count >= size {
            Task { await write(place: place.id, arrivedBefore: Int64.max) }
        }
        return due(batching, place: place, arrived: again?.arrived ?? now, now: now)
    }

    /// Whether a ballot with `credential` is held in `place`, and its batch's due time.
    func due(credential: [UInt8], place: Place) -> Due? {
        guard let batching = place.batching, let known = held.withLock({ $0[place.id]?[credential] }) else {
            return nil
        }
        return due(batching, place: place, arrived: known.arrived, now: writer.clock())
    }

    /// When the batch of a ballot that `arrived` in `place` is due, asked `now`: the end of the interval it arrived
    /// in. With a size as well, once an interval has ended holding fewer ballots than the size (it wrote none), the
    /// end of the current one; an interval that ended holding enough is written by the next tick, so its time
    /// stands. Never after the batch written as voting closes.
    private func due(_ batching: BallotBatching, place: Place, arrived: Int64, now: Int64) -> Due {
        let start = place.voting.start
        var time = batching.intervalEnd(after: arrived, start: start)
        if let end = time, end <= now, let size = batching.size, let interval = batching.interval {
            let boundary = start + (now - start) / interval * interval
            let ready = held.withLock { $0[place.id]?.values.filter { $0.arrived < boundary }.count ?? 0 }
            if ready < Int(size) { time = batching.intervalEnd(after: now, start: start) }
        }
        return Due(batching: batching, time: time.map { min($0, place.voting.end - Self.closing) })
    }

    /// How many ballots are held in `place`.
    func count(place: UInt32) -> Int { held.withLock { $0[place]?.count ?? 0 } }

    /// Writes every batch that is due by its place's rule, or because voting is about to close.
    func writeDue() async {
        let places = held.withLock { held in held.filter { !$0.value.isEmpty }.map(\.key) }
        guard !places.isEmpty else { return }
        let view = writer.published.view
        let now = writer.clock()
        for id in places {
            guard let place = try? view.place(id).place, let batching = place.batching else {
                await write(place: id, arrivedBefore: Int64.max)  // cannot happen: a held place exists
                continue
            }
            if now >= place.voting.end - BallotBatches.closing {
                await write(place: id, arrivedBefore: Int64.max)
                continue
            }
            guard let interval = batching.interval else {
                // A rule of size alone writes when a ballot fills the batch; this catches a batch that filled
                // while the one before was being written.
                if let size = batching.size, count(place: id) >= Int(size) {
                    await write(place: id, arrivedBefore: Int64.max)
                }
                continue
            }
            // The end of the last interval that is over: the ballots that arrived before it are due, if enough.
            let elapsed = now - place.voting.start
            guard elapsed >= interval else { continue }
            let boundary = place.voting.start + elapsed / interval * interval
            let ready = held.withLock { held in held[id]?.values.filter { $0.arrived < boundary }.count ?? 0 }
            guard ready > 0, ready >= Int(batching.size ?? 1) else { continue }
            await write(place: id, arrivedBefore: boundary)
        }
    }

    /// Writes every held ballot: a server that stops writes what it holds, so that nothing it answered is lost,
    /// even if that batch is smaller than the place's rule.
    func close() async {
        loop.withLock { $0?.cancel() }
        let places = held.withLock { Array($0.keys) }
        for place in places { await write(place: place, arrivedBefore: Int64.max) }
    }

    /// Writes `place`'s ballots that arrived before `arrivedBefore`, shuffled, in one block; they stay held until
    /// it is durable, so the receipt route says "held" until the ledger has them. A ballot the rules refuse by
    /// now (a place cancelled meanwhile, a credential another server recorded) is logged and let go; a block
    /// that could not be written leaves them held for the next try.
    private func write(place: UInt32, arrivedBefore: Int64) async {
        guard writing.withLock({ $0.insert(place).inserted }) else { return }
        defer { writing.withLock { _ = $0.remove(place) } }
        var batch = held.withLock { held in
            (held[place] ?? [:]).filter { $0.value.arrived < arrivedBefore }.map { (credential: $0.key, $0.value) }
        }
        guard !batch.isEmpty else { return }
        var random = SystemRandomNumberGenerator()
        batch.shuffle(using: &random)
        do {
            let outcome = try await writer.submit(batch: batch.map(\.1.command))
            let refused = outcome.results.compactMap { result -> Violation? in
                if case .failure(let violation) = result { return violation } else { return nil }
            }
            if !refused.isEmpty {
                logger.warning(
                    "place \(place): \(refused.count) of \(batch.count) held ballots were refused when their batch was written: \(refused[0])"
                )
            }
            held.withLock { held in
                for (credential, _) in batch { held[place]?[credential] = nil }
                if held[place]?.isEmpty == true { held[place] = nil }
            }
        } catch {
            let size = batch.count
            logger.error("place \(place): a batch of \(size) ballots could not be written (\(error)); kept for later")
        }
    }
}
