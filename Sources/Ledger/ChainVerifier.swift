public import LedgerCrypto

#if canImport(Glibc)
    import Glibc
#endif

/// What a successful verification covered.
public struct VerificationReport: Sendable, Equatable {
    /// Blocks verified, genesis included.
    public var blocks: UInt64 = 0
    /// Events verified (the tree size).
    public var events: UInt64 = 0
    /// Bytes the store read and checked (the file store: every segment header plus every complete frame, the
    /// torn tail excluded).
    public var bytes: UInt64 = 0
    /// Header hash of the last block.
    public var headHash: Digest = .zero
    /// Height of the last block.
    public var height: UInt64 = 0
    /// Tree head after the last block.
    public var treeRoot: Digest = .zero
    /// Time of the last block, ms since the Unix epoch.
    public var timestamp: Int64 = 0
    /// Wall time the verification took, in seconds.
    public var seconds: Double = 0
    /// Incomplete bytes after the last block (a writer is appending, or crashed and has not reopened).
    public var tornTail: TornTail?
}

/// Verifies a whole chain from any store, streaming block by block with memory that does not grow with the
/// ledger: the store checks how it keeps the blocks (`BlockSource.scanBlocks`: the file store's frames, CRCs
/// and segments), this checks what they say: encoding, heights, hash links, timestamps, tree sizes and roots,
/// the genesis block, and every signature under the genesis authority key. The first failure throws
/// `LedgerError.damaged` naming the block and where the store keeps it.
///
/// An observer of the verified blocks (the application replaying its rules) runs on the calling thread
/// while the blocks after the one it is given are read and checked on a second thread, a batch ahead. The
/// blocks' signatures, most of the work of a ledger of small blocks, are checked on both threads: the
/// calling thread checks every other block's before it hands the block to the observer.
public enum ChainVerifier {
    /// Verifies the chain of `source`. `onBlock` sees each verified block in order (for replaying the
    /// application's rules on top); an error it throws stops the verification and is rethrown.
    public static func verify(
        _ source: some BlockSource, onBlock: ((Block) throws -> Void)? = nil
    ) throws
        -> VerificationReport
    {
        let started = ContinuousClock.now
        let pass = ChainPass(source: source)
        var report: VerificationReport
        if let onBlock {
            report = try pass.run(prepare: \.block, observe: onBlock)
        } else {
            report = try pass.run { _ in true }
        }
        report.seconds = seconds(since: started)
        return report
    }

    /// Verifies the chain of `source`, handing each verified block to `eachBlock` in order as it is stored,
    /// its events read in place rather than copied (the fast way to replay a ledger). An error `eachBlock`
    /// throws stops the verification and is rethrown.
    public static func verify(
        _ source: some BlockSource, eachBlock: (EncodedBlock) throws -> Void
    ) throws
        -> VerificationReport
    {
        try verify(source, prepare: { $0 }, observe: eachBlock)
    }

    /// Verifies the chain of `source`; `prepare` turns each verified block into an `Item` on the checking
    /// thread (a batch of blocks ahead: work moved there runs beside `observe`), and `observe` sees the items in
    /// order on this thread. An error `observe` throws stops the verification and is rethrown.
    public static func verify<Item: Sendable>(
        _ source: some BlockSource, prepare: @escaping @Sendable (EncodedBlock) -> Item,
        observe: (Item) throws -> Void
    ) throws -> VerificationReport {
        let started = ContinuousClock.now
        var report = try ChainPass(source: source).run(prepare: prepare, observe: observe)
        report.seconds = seconds(since: started)
        return report
    }

    /// The most blocks, and events, the checking thread hands the observing thread at once.
    static let batchBlocks = 64
    static let batchEvents = 8192

    private static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
    }
}

/// One verification pass over a chain (FORMAT.md §7): every block checked against the genesis and the blocks
/// before it.
struct ChainPass<Source: BlockSource>: Sendable {
    let source: Source
    /// The genesis authority; nil if its key does not import, which fails the genesis block.
    let authority: ChainAuthority?

    init(source: Source) {
        self.source = source
        authority = ChainAuthority(source.genesis)
    }

    /// Checks every block in order and hands each verified one, made into an `Item` by `prepare`, to
    /// `observe`. The checks and `prepare` run on a second thread, a batch of blocks ahead of `observe` on this one,
    /// except that this thread checks the signature of every odd block itself before observing it: the two
    /// threads share the signature checks, and a bad signature is still reported before anything later.
    /// Returns what the pass covered (all but the time it took).
    func run<Item: Sendable>(
        prepare: @escaping @Sendable (EncodedBlock) -> Item, observe: (Item) throws -> Void
    ) throws -> VerificationReport {
        // Blocks go across in batches: one block at a time, a ledger of small blocks spent its time waking the
        // threads by turns rather than checking on both at once.
        let handoff = Handoff<[(item: Item, signature: DeferredSignature?)]>()
        guard
            let checker = Worker.start({ () -> Result<VerificationReport, any Error> in
                defer { handoff.close() }
                var batch: [(item: Item, signature: DeferredSignature?)] = []
                var events = 0
                return Result {
                    do {
                        let report = try run(deferSignatures: true) { block, signature in
                            batch.append((prepare(block), signature))
                            events += block.bounds.count
                            guard batch.count >= ChainVerifier.batchBlocks || events >= ChainVerifier.batchEvents
                            else { return true }
                            defer { (batch, events) = ([], 0) }
                            return handoff.put(batch)
                        }
                        if !batch.isEmpty { _ = handoff.put(batch) }
                        return report
                    } catch {
                        // The blocks checked before the failure are observed first (one may fail earlier).
                        if !batch.isEmpty { _ = handoff.put(batch) }
                        throw error
                    }
                }
            })
        else {
            // No second thread to be had: check and observe by turns on this one.
            return try run { block in
                try observe(prepare(block))
                return true
            }
        }
        do {
            while let batch = handoff.take() {
                for (item, signature) in batch {
                    try signature.map(check)
                    try observe(item)
                }
            }
        } catch {
            handoff.close()
            _ = checker.join()
            throw error
        }
        return try checker.join().get()
    }

    /// Checks every block in order, handing each verified one to `deliver`, which returns false to end the
    /// pass early. Returns what the pass covered (all but the time it took).
    func run(_ deliver: (EncodedBlock) throws -> Bool) throws -> VerificationReport {
        try run(deferSignatures: false) { block, _ in try deliver(block) }
    }

    /// Checks every block in order, handing each verified one to `deliver`. With `deferSignatures`, the
    /// signature of every odd block is not checked here but handed to `deliver` with it, to be checked
    /// (`check(_:)`) before the block is used.
    private func run(
        deferSignatures: Bool, _ deliver: (EncodedBlock, DeferredSignature?) throws -> Bool
    ) throws -> VerificationReport {
        var report = VerificationReport()
        var frontier = MerkleFrontier()
        let scan = try source.scanBlocks(from: 0) { bytes, place in
            let deferred = deferSignatures && report.blocks % 2 == 1
            let (block, hash) = try check(
                bytes, at: place, after: report, frontier: &frontier, signature: !deferred)
            report.blocks += 1
            report.events = block.header.treeSize
            report.headHash = hash
            report.height = block.header.height
            report.treeRoot = block.header.treeRoot
            report.timestamp = block.header.timestamp
            let signature = deferred ? DeferredSignature(block: block, hash: hash, place: place) : nil
            return try deliver(block, signature)
        }
        report.bytes = scan.bytes
        report.tornTail = scan.tornTail
        return report
    }

    /// A block's signature left for the observing thread to check.
    struct DeferredSignature: Sendable {
        let signature: [UInt8]
        let hash: Digest
        let height: UInt64
        let place: BlockPlace

        init(block: EncodedBlock, hash: Digest, place: BlockPlace) {
            signature = Array(block.signature)
            self.hash = hash
            height = block.header.height
            self.place = place
        }
    }

    /// Checks a signature the checking thread left to this one.
    private func check(_ deferred: DeferredSignature) throws(LedgerError) {
        guard let authority, authority.key.isValidSignature(deferred.signature, for: deferred.hash.bytes) else {
            throw deferred.place.damage(height: deferred.height, "signature invalid")
        }
    }

    /// Checks the block stored at `place`, the next after the chain `report` covers, in the order of
    /// FORMAT.md §7, and adds its events to `frontier`. Returns the block and its header hash.
    private func check(
        _ bytes: [UInt8], at place: BlockPlace, after report: VerificationReport, frontier: inout MerkleFrontier,
        signature: Bool
    ) throws(LedgerError) -> (EncodedBlock, Digest) {
        let height = report.blocks
        func fail(_ reason: String) -> LedgerError { place.damage(height: height, reason) }
        guard let authority else { throw fail("genesis authority key is invalid") }
        let genesis = source.genesis
        let block: EncodedBlock
        do { block = try EncodedBlock(decoding: bytes) } catch { throw fail(error.message) }
        let header = block.header
        guard header.height == height else { throw fail("height is \(header.height), expected \(height)") }
        guard header.ledgerID == genesis.ledgerID else {
            throw fail("belongs to another ledger (id \(header.ledgerID))")
        }
        // One pass over the events hashes them into the tree and finds the first reserved type; the failures
        // it finds are reported below in the order of §7.
        let size = frontier.size
        var reserved: UInt16?
        bytes.withUnsafeBytes { raw in
            for index in 0..<block.bounds.count {
                let event = UnsafeRawBufferPointer(rebasing: raw[block.bounds[index]])
                let type = UInt16(event[0]) << 8 | UInt16(event[1])
                // A withheld event (§3.8) is the one reserved type a block past genesis may hold, when well formed.
                if type < LedgerFormat.firstApplicationEventType, reserved == nil,
                    type != WithheldEvent.eventType || WithheldEvent(encoded: event) == nil
                {
                    reserved = type
                }
                frontier.append(WithheldEvent.leaf(ofStored: event))
            }
        }
        if height == 0 {
            guard block.events.count == 1, block.events[0].type == Genesis.eventType,
                header.timestamp == genesis.createdAt, header.previousHash == .zero,
                (try? Genesis(decoding: block.events[0].ledgerEvent)) == genesis
            else { throw fail("malformed genesis block") }
        } else {
            guard header.previousHash == report.headHash else { throw fail("previous header hash mismatch") }
            guard header.timestamp >= report.timestamp else {
                throw fail("timestamp \(header.timestamp) is before the previous block's \(report.timestamp)")
            }
            if let reserved { throw fail("event type \(reserved) is reserved for the ledger") }
        }
        guard header.treeSize == size + UInt64(header.eventCount) else {
            throw fail("tree size is \(header.treeSize), expected \(size + UInt64(header.eventCount))")
        }
        guard frontier.root == header.treeRoot else { throw fail("tree root mismatch") }
        let hash = header.hash
        if signature {
            guard authority.key.isValidSignature(block.signature, for: hash.bytes) else {
                throw fail("signature invalid")
            }
        }
        return (block, hash)
    }
}

// MARK: Second thread

/// What tells damage from a torn tail (FORMAT.md §6): a later frame in the last segment is evidence that an
/// invalid frame is damage only if it holds a block of this ledger, signed by its authority, at a height
/// above the one expected at the invalid frame. A payload can hold bytes that form a valid frame, but not
/// such a block: the authority signs block h + 1 only once block h is durable, and a copy of an earlier
/// block has a lower height. So recovery never depends on what a payload contains.
package struct ChainAuthority: Sendable {
    let ledgerID: LedgerID
    let key: Ed25519PublicKey

    /// The authority of the ledger whose genesis is `genesis`; nil if its key does not import (§7 step 6
    /// then fails any verification).
    package init?(_ genesis: Genesis) {
        guard let key = try? Ed25519PublicKey(rawRepresentation: genesis.authorityKey) else { return nil }
        ledgerID = genesis.ledgerID
        self.key = key
    }

    /// Whether `block` decodes, belongs to this ledger, is higher than `height` and carries the authority's
    /// signature.
    package func signs(_ block: [UInt8], above height: UInt64) -> Bool {
        guard let decoded = try? EncodedBlock(decoding: block), decoded.header.ledgerID == ledgerID,
            decoded.header.height > height
        else { return false }
        return key.isValidSignature(decoded.signature, for: decoded.header.hash.bytes)
    }
}

/// A queue of at most one item from a producing thread to a consuming thread, under a pthread mutex and
/// condition variable (which ThreadSanitizer follows). Closing it, from either side, ends it: `put` refuses
/// further items, and `take` returns what is left, then nil.
final class Handoff<Item: Sendable>: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let changed = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    // Guarded by `mutex`.
    private var item: Item?
    private var closed = false

    init() {
        precondition(pthread_mutex_init(mutex, nil) == 0 && pthread_cond_init(changed, nil) == 0)
    }

    deinit {
        pthread_cond_destroy(changed)
        pthread_mutex_destroy(mutex)
        changed.deallocate()
        mutex.deallocate()
    }

    /// Producer: waits until the queue is empty, then queues `item`; false, dropping it, once it is closed.
    func put(_ item: Item) -> Bool {
        locked {
            while self.item != nil && !closed { wait() }
            guard !closed else { return false }
            self.item = item
            precondition(pthread_cond_signal(changed) == 0)
            return true
        }
    }

    /// Consumer: the next item, waiting for one; nil once the queue is closed and empty.
    func take() -> Item? {
        locked {
            while item == nil && !closed { wait() }
            defer { item = nil }
            precondition(pthread_cond_signal(changed) == 0)
            return item
        }
    }

    /// No more items will be put or taken (the last queued one still can be).
    func close() {
        locked {
            closed = true
            precondition(pthread_cond_signal(changed) == 0)
        }
    }

    private func wait() {
        precondition(pthread_cond_wait(changed, mutex) == 0)
    }

    private func locked<R>(_ body: () -> R) -> R {
        precondition(pthread_mutex_lock(mutex) == 0)
        defer { precondition(pthread_mutex_unlock(mutex) == 0) }
        return body()
    }
}

/// A thread running one closure, which never outlives the `join` that hands back what the closure returned.
final class Worker<Output: Sendable>: @unchecked Sendable {
    private let thread: pthread_t
    private let output: Box

    /// Where the thread leaves its output; read only after `pthread_join`, which orders the two.
    private final class Box: @unchecked Sendable {
        var value: Output?
    }

    private init(thread: pthread_t, output: Box) {
        self.thread = thread
        self.output = output
    }

    /// Starts `body` on a new thread; nil if the system cannot start one.
    static func start(_ body: @escaping @Sendable () -> Output) -> Worker? {
        let output = Box()
        let entry = Unmanaged.passRetained(ThreadEntry { output.value = body() }).toOpaque()
        var thread = pthread_t()
        let started = pthread_create(
            &thread, nil,
            { context in
                Unmanaged<ThreadEntry>.fromOpaque(context!).takeRetainedValue().run()
                return nil
            }, entry)
        guard started == 0 else {
            Unmanaged<ThreadEntry>.fromOpaque(entry).release()
            return nil
        }
        return Worker(thread: thread, output: output)
    }

    /// Waits for the thread to end and returns what its closure returned.
    func join() -> Output {
        precondition(pthread_join(thread, nil) == 0)
        return output.value!
    }
}

/// What a new thread runs, passed through `pthread_create`'s context pointer.
private final class ThreadEntry: Sendable {
    let run: @Sendable () -> Void

    init(_ run: @escaping @Sendable () -> Void) { self.run = run }
}
