public import Election

/// One line of a bulk file turned into a command, with what the caller keeps about it (the issued token).
public struct BulkEntry<Item: Sendable>: Sendable {
    /// 1-based line number in the file.
    public let line: Int
    public let item: Item
    public let command: Command

    @usableFromInline init(line: Int, item: Item, command: Command) {
        self.line = line
        self.item = item
        self.command = command
    }
}

/// A line a bulk run refused, and why.
public struct BulkRejection: Sendable {
    /// 1-based line number in the file.
    public let line: Int
    /// The rule the line broke, if a rule refused it (else it was unreadable or malformed).
    public let violation: Violation?
    /// Why, in one line.
    public let reason: String

    @usableFromInline init(line: Int, violation: Violation? = nil, reason: String) {
        self.line = line
        self.violation = violation
        self.reason = reason
    }
}

/// What a bulk run has done so far.
public struct BulkTotals: Sendable {
    /// Commands recorded on the ledger.
    public var accepted = 0
    /// Lines refused: unreadable, malformed, or refused by a rule.
    public var rejected = 0

    @usableFromInline init() {}
}

/// Why a bulk run stopped before the end of its file, and what it had recorded by then, so the caller can
/// say exactly which lines were recorded and which were not.
public struct BulkStop: Error {
    /// The failure.
    public let error: VoteError
    /// The first and last line of the batch that failed.
    public let first: Int, last: Int
    /// Commands recorded in all (with the failed batch's when `batchRecorded`).
    public let accepted: Int
    /// Whether the failed batch was recorded: the failure came after its block was durable (`afterWriting`).
    public let batchRecorded: Bool

    @usableFromInline init(error: VoteError, first: Int, last: Int, accepted: Int, batchRecorded: Bool) {
        self.error = error
        self.first = first
        self.last = last
        self.accepted = accepted
        self.batchRecorded = batchRecorded
    }
}

/// The bulk jobs' batching, written once for every bulk command (authorising voters, casting votes): reads
/// a file line by line in constant memory, turns each line into a command, sends the commands in batches
/// through the ledger's writer actor (each batch one block, acknowledged after one fsync), and reports
/// every refused line with its number. A failing batch stops the run with a `BulkStop`; nothing of it is
/// recorded unless its failure came after the block was durable.
public struct BulkRun<Item: Sendable> {
    /// What a line becomes.
    public enum Parsed {
        case entry(Item, Command)
        /// Refused before the ledger sees it; the reason is one line ("expected \"token,candidate\" …").
        case reject(String)
        /// Refused by a rule before the ledger sees it (an identity that is not one).
        case violates(Violation)
        /// Neither an entry nor refused (a header line); the parser has said so.
        case skip
        /// Nothing to do, as a blank line (a table's row whose every field is empty).
        case blank
    }

    /// Runs before a batch's block is written, with every decision (claim output files, save tokens); if it
    /// throws, nothing of the batch is recorded.
    public typealias BeforeWriting = @Sendable ([BulkEntry<Item>], [Result<EventReceipt, Violation>]) throws -> Void

    public let writer: LedgerWriter
    /// Commands per batch (per block).
    public let batchSize: Int
    /// Whether each batch's outcome holds its events' receipts (`BatchOutcome.tlogProof(for:)`), proven
    /// from the writer's memory as the block is written.
    public let proofs: Bool

    public init(writer: LedgerWriter, batchSize: Int, proofs: Bool = false) {
        self.writer = writer
        self.batchSize = batchSize
        self.proofs = proofs
    }

    /// Reads every line of `lines` (blank lines are skipped), turns it into a command with `parse`, and
    /// submits the commands in batches. `parsePlain`, when given, reads a line of ASCII holding a printable
    /// character straight from its bytes, with no string made: it must accept only lines that `parse`
    /// accepts, and read them as `parse` does; it returns `nil` for any other line, which `parse` then reads.
    /// `rejected` hears of every refused line; `skipped` of each line the parser skipped (a header);
    /// `afterWriting` sees each recorded batch (write its receipts); `progress` the totals after each batch. Inlinable so that it is specialised
    /// for the caller's `Item`: it runs once per line of files of millions of lines.
    @inlinable
    public func run(
        _ lines: inout LineReader,
        parse: (String) throws -> Parsed,
        parsePlain: (UnsafeBufferPointer<UInt8>) -> Parsed? = { _ in nil },
        rejected: (BulkRejection) -> Void,
        skipped: (_ line: Int) -> Void = { _ in },
        beforeWriting: @escaping BeforeWriting = { _, _ in },
        afterWriting: ([BulkEntry<Item>], BatchOutcome) async throws -> Void = { _, _ in },
        progress: (BulkTotals) -> Void = { _ in }
    ) async throws -> BulkTotals {
        var totals = BulkTotals()
        var pending: [BulkEntry<Item>] = []
        pending.reserveCapacity(batchSize)
        // The next batch is read and parsed while the last one is decided and synced; its refused lines are
        // reported once the last one's are, so the report keeps the file's order.
        var inFlight: (batch: Task<BatchOutcome, any Error>, entries: [BulkEntry<Item>])?
        var refusedEarly: [BulkRejection] = []

        /// Waits for the batch in flight and reports it.
        func settle() async throws {
            guard let (batch, entries) = inFlight else { return }
            inFlight = nil
            let (first, last) = (entries[0].line, entries[entries.count - 1].line)
            let outcome: BatchOutcome
            do { outcome = try await batch.value } catch {
                throw BulkStop(
                    error: VoteError(error), first: first, last: last, accepted: totals.accepted, batchRecorded: false)
            }
            for (entry, result) in zip(entries, outcome.results) {
                if case .failure(let violation) = result {
                    totals.rejected += 1
                    rejected(BulkRejection(line: entry.line, violation: violation, reason: violation.description))
                }
            }
            totals.accepted += outcome.accepted
            do { try await afterWriting(entries, outcome) } catch {
                throw BulkStop(
                    error: VoteError(error), first: first, last: last, accepted: totals.accepted, batchRecorded: true)
            }
            progress(totals)
        }

        /// Settles the batch in flight, then sends the pending one: batches reach the writer one at a time, in
        /// order, so a failed batch stops the run before any later line is sent.
        func flush() async throws {
            try await settle()
            refusedEarly.forEach(rejected)
            refusedEarly.removeAll()
            guard !pending.isEmpty else { return }
            let entries = pending
            pending.removeAll(keepingCapacity: true)
            let (writer, proofs) = (writer, proofs)
            inFlight = (
                Task {
                    try await writer.submit(batch: entries.map { $0.command }, proofs: proofs) {
                        try beforeWriting(entries, $0)
                    }
                },
                entries
            )
            // Let the batch reach the writer now: without a suspension here the submitting task may wait
            // until this one next does, and the writer idles while the next batch is parsed.
            await Task.yield()
        }

        do {
            while let read = try lines.withNextLine({ line -> ReadLine<Item> in
                guard case .bytes(let bytes) = line else { return .parsed(.reject("line too long")) }
                if bytes.isPlain, let parsed = parsePlain(bytes) { return .parsed(parsed) }
                guard let text = String(validating: bytes, as: UTF8.self) else {
                    return .parsed(.reject("not valid UTF-8"))
                }
                return text.isBlank ? .blank : .parsed(try parse(text))
            }) {
                let number = lines.lineNumber
                guard case .parsed(let parsed) = read else { continue }
                switch parsed {
                case .entry(let item, let command):
                    pending.append(BulkEntry(line: number, item: item, command: command))
                    if pending.count >= batchSize { try await flush() }
                case .reject(let reason):
                    totals.rejected += 1
                    refusedEarly.append(BulkRejection(line: number, reason: reason))
                case .violates(let violation):
                    totals.rejected += 1
                    refusedEarly.append(
                        BulkRejection(line: number, violation: violation, reason: violation.description))
                case .skip: skipped(number)
                case .blank: break
                }
            }
            try await flush()
            try await settle()
        } catch {
            // A file that cannot be read further still has its last batch reported before the error.
            if inFlight != nil { try await settle() }
            refusedEarly.forEach(rejected)
            throw error
        }
        return totals
    }
}

/// What `BulkRun.run` made of a line.
@usableFromInline enum ReadLine<Item: Sendable> {
    case parsed(BulkRun<Item>.Parsed)
    case blank
}

extension UnsafeBufferPointer<UInt8> {
    /// Whether a line is all ASCII with at least one printable character: valid UTF-8 and not blank, so
    /// it can be read from its bytes.
    @usableFromInline var isPlain: Bool {
        var printable = false
        for byte in self {
            if byte >= 0x80 { return false }
            if byte > 0x20 && byte < 0x7F { printable = true }
        }
        return printable
    }
}

extension String {
    /// Whether a line of an input file holds only whitespace (skipped, not an error). One printable
    /// ASCII byte settles it without Unicode property lookups, which bulk files would pay per line.
    @usableFromInline var isBlank: Bool {
        if utf8.contains(where: { $0 > 0x20 && $0 < 0x7F }) { return false }
        return allSatisfy(\.isWhitespace)
    }
}
