public import Election
import Foundation
public import Ledger
public import LedgerCrypto

/// Where a recorded event sits in the ledger: enough to find it and prove it later.
public struct EventReceipt: Equatable, Sendable {
    /// Height of the block holding the event.
    public var height: UInt64
    /// Index of the event in the whole ledger (its leaf index in the Merkle tree).
    public var index: UInt64
    /// The event's leaf hash: SHA-256(0x00 || event bytes).
    public var eventHash: Digest
    /// The event itself.
    public var event: ElectionEvent
}

/// What happened to each command of a batch, in order.
public struct BatchOutcome: Sendable {
    /// Per command: the receipt of the one event it recorded, or the rule it broke. (A receipt, not an
    /// array of one: a bulk batch makes ten thousand of these, and each array was an allocation.)
    public var results: [Result<EventReceipt, Violation>]
    /// The block the accepted events went into; `nil` if every command was rejected (nothing written).
    public var header: BlockHeader?
    /// When asked for: the block's head signed by the authority and the inclusion proof of each of the
    /// block's events under it, in order; or why the head could not be signed.
    var blockProofs: Result<(checkpoint: SignedNote, paths: [[Digest]]), any Error>?

    /// The receipt of command `index`'s event; the rule it broke is thrown as a `VoteError`.
    public func receipt(of index: Int) throws -> EventReceipt {
        switch results[index] {
        case .success(let receipt): return receipt
        case .failure(let violation): throw VoteError(violation)
        }
    }

    /// The receipt (C2SP tlog-proof) of `receipt`, an event of this block, under the block's signed head.
    /// Throws why the head could not be signed (the block is recorded all the same), or a refusal if the
    /// proofs were not asked for.
    public func tlogProof(for receipt: EventReceipt) throws -> TlogProof {
        guard let header, let blockProofs else {
            throw VoteError(.refused, "the receipts of this block were not asked for when it was written")
        }
        let (checkpoint, paths) = try blockProofs.get()
        let offset = Int(receipt.index - (header.treeSize - UInt64(header.eventCount)))
        return TlogProof(
            extra: receipt.event.ledgerEvent.encoded, index: receipt.index, proof: paths[offset], checkpoint: checkpoint
        )
    }

    public var accepted: Int { results.reduce(0) { if case .success = $1 { $0 + 1 } else { $0 } } }
}

/// A batch decided and its block written, not yet durable (`ElectionLedger.write`): what `commit` makes the
/// ledger's state once the block is durable, or `abandon` undoes if it is not.
struct WrittenBlock {
    /// What happened to each command; `header` is nil if nothing was written (every command was rejected).
    var outcome: BatchOutcome
    /// The election state after the block.
    fileprivate let state: ElectionState
    /// What the block's decisions wrote through to the voter table, to undo.
    fileprivate let sets: [VoterTable.Replaced]
    /// The leaf hashes of its events, and the tree frontier before it, for receipts from memory.
    fileprivate let leaves: [Digest]
    fileprivate let frontier: MerkleFrontier
    fileprivate let proofs: Bool
}

/// The application service over one ledger, for writing: holds the store's writer (and so the writer lock),
/// the voter secret and the election state at the head. Only a `LedgerWriter` changes it (its `submit` is
/// internal): opened or created through a store's driver (`VoteLedgerService`), a ledger is handed to the writer,
/// the one public way to write. Commands go through the contract at the block's time, accepted events into one durable block, and only then into the state. Any `BlockAppender` will do;
/// what the service derives from the chain to open faster (the voter index, snapshots) is kept in the
/// `DerivedStore` it is given: by default the ledger directory for the file store, else memory.
public final class ElectionLedger {
    /// Write a new snapshot once this many blocks have been appended since the last one (and on close).
    static let snapshotInterval: UInt64 = 64

    let store: any BlockAppender
    /// Where the snapshot and the voter index are kept.
    let derived: any DerivedStore
    private let secret: any VoterSecretKey
    /// The voter secret, for callers that tag identities (the writer actor hands it out).
    public var voterSecret: any VoterSecretKey { secret }
    /// The private halves of the anonymous places' ballot keys.
    public let ballotKeys: BallotKeys
    /// The writer's voter roll: mapped from the derived store's file (`voters.idx`), else in memory.
    private let voters: VoterIndex
    /// The election state after the last block. Its `roll` holds no entries between batches: the
    /// committed roll is `voters`' table, which decisions read beside it.
    public private(set) var state: ElectionState
    /// The election at the last durable block, for readers on other threads (a server's routes).
    public let published: PublishedView
    /// The state after the last block written, when that block is not durable yet (pipelined commits): what
    /// the next block's commands are decided against. nil when it is `state`.
    private var decided: ElectionState?
    /// Height of the block the saved snapshot holds.
    private var snapshotHeight: UInt64
    /// What seals the snapshot and the voter index, so that no one without the key directory can make them.
    private let derivedKey: DerivedStateKey
    private var closed = false
    /// The voter keys of the next commands `decide` prefetches (kept to reuse its storage).
    private var prefetchKeys: [VoterTable.Key] = []

    /// Where what a person should know goes (the store's recovery notes, a voter index not saved).
    let log: @Sendable (String) -> Void

    private init(
        store: any BlockAppender, derived: any DerivedStore, secret: any VoterSecretKey, ballotKeys: BallotKeys,
        voters: VoterIndex, state: ElectionState, snapshotHeight: UInt64, log: @escaping @Sendable (String) -> Void
    ) {
        self.log = log
        self.derived = derived
        self.ballotKeys = ballotKeys
        self.store = store
        self.secret = secret
        self.voters = voters
        self.state = state
        self.snapshotHeight = snapshotHeight
        derivedKey = secret.derivedStateKey(ledgerID: store.genesis.ledgerID)
        published = PublishedView(
            ElectionView(genesis: store.genesis, state: state, head: store.head, snapshotHeight: snapshotHeight),
            authority: store.authority)
    }

    deinit { close() }

    /// The writer's voter roll at the head: what voter commands are decided against.
    var voterRoll: VoterTable { voters.table }

    /// The last block's header.
    public var head: BlockHeader { store.head }
    /// The ledger's identity.
    public var genesis: Genesis { store.genesis }

    /// A reader of this ledger that sees every block written so far, also once the service is closed (a
    /// ledger in memory can be read back no other way).
    public func source() throws -> any BlockSource {
        try store.source()
    }

    // MARK: Opening

    /// The service over the writer a driver opened (`StoreDriver`): the voter secret checked against the
    /// ledger, the state replayed (from the snapshot in `opened.derived`, if any) and the voter roll brought up
    /// to the head. `log` takes what a person should know (a secret unchecked, an index rebuilt).
    convenience init(_ opened: OpenedStore, log: @escaping @Sendable (String) -> Void) throws {
        let store = opened.appender
        let source = try store.source()
        try ElectionLedger.checkCommitment(
            of: opened.secret, in: source, location: opened.secretLocation, log: log)
        let key = opened.secret.derivedStateKey(ledgerID: source.genesis.ledgerID)
        let replay = try ElectionView.replay(
            source, snapshot: ElectionView.savedSnapshot(in: opened.derived, key: key))
        guard replay.withheld.isEmpty else {
            throw VoteError(
                .refused,
                "this is a public copy with withheld events (FORMAT.md §3.8): it can be read and verified, not written")
        }
        guard replay.head == store.head else {
            throw VoteError(
                .integrity(block: nil, offset: nil),
                "integrity failure: replay ended at block \(replay.head.height), the store at \(store.head.height)")
        }
        let voters = try VoterIndex.open(
            file: opened.derived.voterIndexPath, source: source, head: store.head, key: key, log: log)
        var state = replay.state
        state.roll = VoterRoll()
        self.init(
            store: store, derived: opened.derived, secret: opened.secret,
            ballotKeys: BallotKeys(keys: opened.keys), voters: voters, state: state,
            snapshotHeight: replay.snapshotHeight, log: log)
    }

    // MARK: The voter secret

    /// Refuses a voter secret other than the one the ledger committed to in block 1 (FORMAT.md §11.16): a
    /// secret copied in from another ledger would tag the same person differently and let them be
    /// authorised twice. A ledger created before commitments existed has none; its secret is used
    /// unchecked, with a warning (SECURITY.md).
    private static func checkCommitment(
        of secret: any VoterSecretKey, in source: any BlockSource, location: String?, log: (String) -> Void
    ) throws {
        let first = try source.storedBlock(at: 1)
        guard let first, let block = try? Block(decoding: first), block.header.height == 1,
            let event = block.events.first,
            case .voterSecretCommitment(let recorded)? = try? ElectionEvent(event)
        else {
            log(
                "warning: this ledger records no voter secret commitment (it predates them), so \(FileVoterSecret.fileName) cannot be checked against it"
            )
            return
        }
        guard recorded == secret.commitment(ledgerID: source.genesis.ledgerID) else {
            let named = location ?? "the voter secret"
            throw VoteError(
                .refused,
                "\(named) does not belong to this ledger (block 1 commits to another voter secret); restore the ledger's own"
            )
        }
    }

    /// The voter tag of `identity` in this ledger (HMAC under the voter secret); the identity is checked first.
    public func voterTag(_ identity: String) throws(Violation) -> Digest {
        try secret.tag(identity)
    }

    /// Decides every command at one block time, appends the accepted events as one durable block, and
    /// returns what happened to each. Rejected commands write nothing. `beforeWriting` sees the results
    /// before the block is written (bulk authorisation saves the tokens there); if it throws, nothing is.
    /// With `proofs`, the outcome also holds each event's receipt under the block's signed head
    /// (`BatchOutcome.tlogProof(for:)`), computed from memory.
    func submit(
        _ commands: [Command], now: Int64 = Clock.now(), proofs: Bool = false,
        beforeWriting: ([Result<EventReceipt, Violation>]) throws -> Void = { _ in }
    ) throws -> BatchOutcome {
        let block = try write(commands, now: now, proofs: proofs, beforeWriting: beforeWriting)
        if let sync = pendingSync() {
            let outcome = Result { () throws(LedgerError) in try sync.run() }
            finishSync(sync, outcome)
            do { try outcome.get() } catch {
                abandon([block])
                throw VoteError(ledger: error)
            }
        }
        return commit(block)
    }

    /// Decides every command at one block time on top of the blocks written so far (durable or not), and
    /// writes the accepted events as one block, not yet durable (pipelined commits: the writer decides and
    /// writes the next block while this one syncs). `commit` makes it the ledger's state once it is durable,
    /// `abandon` undoes it if it is not. Rejected commands write nothing; if `beforeWriting` or the write
    /// throws, nothing of the batch is written (and if the write failed, the store dropped every block
    /// written since its last durable one, which the caller must `abandon`).
    func write(
        _ commands: [Command], now: Int64, proofs: Bool,
        beforeWriting: ([Result<EventReceipt, Violation>]) throws -> Void
    ) throws -> WrittenBlock {
        var block: WrittenBlock?
        var sets: [VoterTable.Replaced] = []
        do {
            let header = try store.write { missed in
                try apply(missed: missed)
                let time = max(now, store.head.timestamp)
                let keys = commands.reduce(0) { $0 + VoterRoll.keyCount(of: $1) }
                let writeThrough = makeRoom(for: keys)
                var refused: [Int: UInt32] = [:]
                var decision = decide(commands, at: time, writeThrough: writeThrough ? keys : nil, refused: refused)
                sets = decision.sets
                // A store that keeps the roll itself would refuse the whole block over one row changed outside the
                // ledger: the commands whose rows disagree are refused, and the others decided again without them.
                while !decision.roll.isEmpty, case let bad = try store.disagreeing(decision.roll), !bad.isEmpty {
                    let before = refused.count
                    for (offset, command) in commands.enumerated() where refused[offset] == nil {
                        if let change = bad.first(where: { Self.command(command, changes: $0) }) {
                            refused[offset] = change.place
                        }
                    }
                    guard refused.count > before else {
                        throw LedgerError.rollDisagrees(key: bad[0], "the voter roll disagrees with the chain")
                    }
                    voters.table.undo(sets)
                    decision = decide(commands, at: time, writeThrough: writeThrough ? keys : nil, refused: refused)
                    sets = decision.sets
                }
                try recount(decision.results)
                block = WrittenBlock(
                    outcome: BatchOutcome(results: decision.results, header: nil), state: decision.state,
                    sets: decision.sets, leaves: decision.events.map(\.leaf), frontier: store.frontier, proofs: proofs)
                try beforeWriting(decision.results)
                guard !decision.events.isEmpty else { return BlockDecision(events: [], timestamp: time) }
                // Room in the roll first: once the block is on disk, committing to the roll must not fail.
                try voters.markInUse()
                if !writeThrough { try voters.table.reserve(decision.state.roll?.count ?? 0) }
                return BlockDecision(events: decision.events, timestamp: time, roll: decision.roll)
            }
            guard var written = block else { preconditionFailure("the store wrote without deciding") }
            written.outcome.header = header
            if header != nil { decided = written.state }
            return written
        } catch {
            // Nothing of the batch is recorded, so nothing of it stays in the roll.
            voters.table.undo(sets)
            throw error
        }
    }

    /// Whether deciding `command` changes the roll entry under `change`'s key.
    private static func command(_ command: Command, changes change: RollChange) -> Bool {
        var keys: [VoterRoll.Key] = []
        VoterRoll.keys(of: command, into: &keys)
        return keys.contains {
            $0.digest == change.digest && $0.place == change.place && $0.kind.rawValue == change.kind
        }
    }

    /// Refuses to certify results that a recount of the log does not give. The state this writer counts from
    /// may have started from a snapshot; what is signed as a place's results is re-derived from the chain
    /// first (every block from the genesis block, re-decided under the rules), so a changed snapshot or voter
    /// index can never be certified. Certification is rare; the recount reads the whole log once.
    private func recount(_ results: [Result<EventReceipt, Violation>]) throws {
        let certified = results.compactMap { result -> CertifiedResults? in
            guard case .success(let receipt) = result, case .resultsCertified(let results) = receipt.event else {
                return nil
            }
            return results
        }
        guard !certified.isEmpty else { return }
        let recounted = try ElectionView.replay(try store.source())
        for results in certified {
            guard let place = recounted.state.place(results.place),
                Contract.results(of: place, treeSize: results.treeSize) == results
            else {
                throw VoteError(
                    .integrity(block: nil, offset: nil),
                    "integrity failure: the counts of place \(results.place) this writer holds are not what the log gives (its derived state was changed); nothing was certified: run vote verify"
                )
            }
        }
    }

    /// Takes in `blocks`, which other writers of the store appended (a store several processes write): their
    /// events applied to the state and the voter roll as the writer's own are, and the view published. The
    /// store checked that each extends the chain under the authority's signature; the rules were applied by
    /// the writer that decided them, and `vote verify` checks them again.
    private func apply(missed blocks: [EncodedBlock]) throws {
        guard let last = blocks.last else { return }
        precondition(decided == nil, "a store with several writers has nothing written ahead")
        try voters.markInUse()
        state.roll = nil
        defer { state.roll = VoterRoll() }
        for block in blocks {
            try voters.table.reserve(block.events.count * VoterRoll.maxKeysPerEvent)
            for stored in block.events {
                let event: ElectionEvent
                do { event = try ElectionEvent(type: stored.type, payload: stored.payload) } catch {
                    throw VoteError(
                        .integrity(block: block.header.height, offset: nil),
                        "integrity failure: block \(block.header.height), written by another server, holds an event that does not decode: \(error)"
                    )
                }
                state.apply(event)
                VoterRoll.forEachChange(of: event) { key, entry in voters.table.set(key, entry) }
            }
        }
        published.advance(to: last.header, state: state)
        LedgerMetrics.tookIn(blocks: blocks.count)
    }

    /// Whether other processes may append to the ledger as well (`BlockAppender.othersAppend`).
    var othersAppend: Bool { store.othersAppend }

    /// Takes in the blocks other writers appended since the last block (a store several processes write; none
    /// otherwise), so the published view shows them: what the writer's thread does between blocks.
    func catchUp() throws {
        try apply(missed: try store.catchUp())
    }

    /// What makes every written block durable, to run on any thread (`BlockAppender.pendingSync`); nil if all are.
    func pendingSync() -> PendingSync? { store.pendingSync() }

    /// Records the outcome of `sync` in the store (`BlockAppender.finishSync`).
    func finishSync(_ sync: PendingSync, _ outcome: Result<Void, LedgerError>) { store.finishSync(sync, outcome) }

    /// Whether a block may be written before the blocks written so far are durable: not after a block decided
    /// over a scratch roll (when the voter table could not grow), whose changes reach the table only when it
    /// is committed.
    var canWriteAhead: Bool { (decided?.roll?.count ?? 0) == 0 }

    /// Makes `block`, now durable (as is every block before it), the ledger's state, and returns its outcome,
    /// with its receipts when they were asked for (signed under this block's head, whatever was written since).
    func commit(_ block: WrittenBlock) -> BatchOutcome {
        guard let header = block.outcome.header else { return block.outcome }
        var outcome = block.outcome
        if block.proofs {
            // The block is durable whatever happens here: a head that cannot be signed fails the receipts (the
            // caller can have them issued again), never the commands.
            outcome.blockProofs = Result { try signedHead(header) }.map {
                ($0, block.frontier.inclusionProofs(appending: block.leaves))
            }
        }
        state = block.state
        if let changes = state.roll { voters.table.commit(changes) }
        state.roll = VoterRoll()
        published.advance(to: header, state: state)
        if header.height == store.head.height { decided = nil }
        if header.height - snapshotHeight >= ElectionLedger.snapshotInterval { saveSnapshot(at: header) }
        return outcome
    }

    /// Undoes `blocks`, written and not durable (the store dropped them), newest first: the ledger is back at
    /// its last durable block.
    func abandon(_ blocks: [WrittenBlock]) {
        for block in blocks.reversed() { voters.table.undo(block.sets) }
        decided = nil
    }

    /// Whether the voter table is marked in use and has room for the `keys` a batch's commands could set, so
    /// that their decisions can write through to it. If it cannot be made so (its file cannot grow), the
    /// batch is decided over a scratch roll instead, and the failure comes where it always has: after
    /// `beforeWriting` has seen the results, which bulk jobs count on to know what they saved.
    private func makeRoom(for keys: Int) -> Bool {
        guard keys > 0 else { return true }
        do {
            try voters.markInUse()
            try voters.table.reserve(keys)
            voters.table.expectWrites(keys)
            return true
        } catch {
            return false
        }
    }

    /// Decides `commands` in order: the new state, the accepted events with their leaf hashes (hashed once,
    /// for the receipts, their proofs and the block), and each command's result. With `writeThrough` (the
    /// number of keys the commands could set), each accepted command's roll changes go straight
    /// into the voter table while its slots are in the cache (a later pass over a batch's slots missed the
    /// cache again) and later decisions read them there; `submit` undoes them (`sets`) if the block is not
    /// written. Without, they go into the scratch state's roll, for `submit` to commit after the block.
    private func decide(
        _ commands: [Command], at time: Int64, writeThrough: Int?, refused: [Int: UInt32] = [:]
    ) -> (
        state: ElectionState, events: [HashedEvent], results: [Result<EventReceipt, Violation>],
        sets: [VoterTable.Replaced], roll: [RollChange]
    ) {
        var scratch = decided ?? state
        if writeThrough != nil {
            scratch.roll = nil
        } else if scratch.roll == nil {
            scratch.roll = VoterRoll()
        }
        var events: [HashedEvent] = []
        events.reserveCapacity(commands.count)
        var results: [Result<EventReceipt, Violation>] = []
        results.reserveCapacity(commands.count)
        var sets: [VoterTable.Replaced] = []
        if let writeThrough { sets.reserveCapacity(writeThrough) }
        // For a store that keeps the roll itself: each change with the entry it replaces.
        var roll: [RollChange] = []
        let keepsRoll = store.keepsRoll
        let firstIndex = store.frontier.size
        let height = store.head.height + 1
        var prefetched = 0
        for (offset, var command) in commands.enumerated() {
            if offset == prefetched {
                // The next commands' table slots are fetched together rather than one miss at a time: a bulk
                // cast's tokens fall all over a table of millions of voters, far larger than any cache.
                prefetched = min(offset + VoterTable.prefetchRun, commands.count)
                prefetchKeys.removeAll(keepingCapacity: true)
                for command in commands[offset..<prefetched] { VoterRoll.keys(of: command, into: &prefetchKeys) }
                voters.table.prefetch(prefetchKeys)
            }
            if let place = refused[offset] {
                results.append(.failure(.voterRollDisagrees(place: place)))
                continue
            }
            // A certification covers exactly the events before it: the ledger, not the caller, knows that index.
            switch command {
            case .certifyResults(let place, _):
                command = .certifyResults(place: place, treeSize: firstIndex + UInt64(events.count))
            case .certifyBallotResults(let place, _, let votedWeight, let questions):
                command = .certifyBallotResults(
                    place: place, treeSize: firstIndex + UInt64(events.count), votedWeight: votedWeight,
                    questions: questions)
            default: break
            }
            do {
                let event = try Contract.decide(command, state: scratch, committed: voters.table, at: time)
                if keepsRoll {
                    VoterRoll.forEachChange(of: event) { key, entry in
                        let previous = scratch.roll?.entry(key) ?? voters.table.entry(key)
                        roll.append(
                            RollChange(
                                digest: key.digest, place: key.place, kind: key.kind.rawValue, entry: entry.rawValue,
                                previous: previous?.rawValue ?? 0))
                    }
                }
                scratch.apply(event)
                if writeThrough != nil {
                    VoterRoll.forEachChange(of: event) { key, entry in sets.append(voters.table.set(key, entry)) }
                }
                let hashed = HashedEvent(event.ledgerEvent)
                results.append(
                    .success(
                        EventReceipt(
                            height: height, index: firstIndex + UInt64(events.count), eventHash: hashed.leaf,
                            event: event)))
                events.append(hashed)
            } catch {
                results.append(.failure(error))
            }
        }
        return (scratch, events, results, sets, roll)
    }

    /// Decides one command and records its event; throws its violation as a `VoteError`.
    func submit(_ command: Command, now: Int64 = Clock.now()) throws -> EventReceipt {
        try submit([command], now: now).receipt(of: 0)
    }

    /// Saves the state at the head in the derived store so the next open replays only what follows. Derived
    /// data: a failure only costs a longer replay next time.
    func saveSnapshot() { saveSnapshot(at: store.head) }

    /// Saves `state`, the state after the block with `header`.
    private func saveSnapshot(at header: BlockHeader) {
        let snapshot = Snapshot(height: header.height, headerHash: header.hash, state: state)
        guard (try? derived.write(.snapshot, derivedKey.sealed(snapshot.encoded))) != nil else { return }
        snapshotHeight = header.height
    }

    /// Saves the voter index and a snapshot at the head, so the next open reads them instead of the log,
    /// and releases the writer lock. Without it the next writer rebuilds the voter index from the log.
    public func close() {
        guard !closed else { return }
        closed = true
        // The roll holds exactly the durable blocks (it changes only after an append succeeds), so saving
        // it at the store's head is right even after a failed append.
        do {
            try voters.close(height: store.head.height, hash: store.headHash, key: derivedKey)
        } catch {
            log("the voter index was not saved (\(error)); the next open rebuilds it")
        }
        if snapshotHeight != store.head.height { saveSnapshot() }
        store.close()
    }
}
