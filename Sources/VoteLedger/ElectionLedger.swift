import Foundation
public import Election
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

/// Turns voter identities into this ledger's voter tags (HMAC under its voter secret). Holds the secret:
/// never print or log it.
public struct VoterTagger: Sendable {
    fileprivate let secret: [UInt8]

    /// The voter tag of `identity`; the identity is checked first.
    public func tag(_ identity: String) throws(Violation) -> Digest {
        try VoterIdentity.tag(identity, secret: secret)
    }
}

/// What happened to each command of a batch, in order.
public struct BatchOutcome: Sendable {
    /// Per command: the receipts of its events, or the rule it broke.
    public var results: [Result<[EventReceipt], Violation>]
    /// The block the accepted events went into; `nil` if every command was rejected (nothing written).
    public var header: BlockHeader?

    public var accepted: Int { results.filter { if case .success = $0 { true } else { false } }.count }
}

/// The application service over one ledger directory, for writing: holds the store (and so the writer
/// lock), the voter secret and the election state at the head. Commands go through the contract at the
/// block's time, accepted events into one durable block, and only then into the state.
public final class ElectionLedger {
    static let secretFile = "voter.secret"
    /// Write a new snapshot once this many blocks have been appended since the last one (and on close).
    static let snapshotInterval: UInt64 = 64

    public let path: String
    let store: FileLedger
    private let secret: [UInt8]
    /// The writer's voter roll, in `voters.idx`.
    private let voters: VoterIndex
    /// The election state after the last block; its roll is `voters`' table.
    public private(set) var state: ElectionState
    /// Height of the block the saved snapshot holds.
    private var snapshotHeight: UInt64
    private var closed = false

    private init(path: String, store: FileLedger, secret: [UInt8], voters: VoterIndex, state: ElectionState, snapshotHeight: UInt64) {
        self.path = path
        self.store = store
        self.secret = secret
        self.voters = voters
        self.state = state
        self.snapshotHeight = snapshotHeight
    }

    deinit { close() }

    /// The last block's header.
    public var head: BlockHeader { store.head }
    /// The ledger's identity.
    public var genesis: Genesis { store.genesis }

    /// Creates a ledger: a new authority key (encrypted if `passphrase`), a new voter secret, the genesis
    /// block, and block 1 holding the commitment that binds the secret to this ledger, all in one step.
    public static func create(
        at path: String, name: String, passphrase: [UInt8]?, now: Int64, io: any FileIO = PosixIO.shared
    ) throws -> ElectionLedger {
        let store = try wrap {
            let secret = try SecureRandom.bytes(32)
            let ledgerID = try LedgerID.random()
            let commitment = ElectionEvent.voterSecretCommitment(VoterSecret.commitment(secret, ledgerID: ledgerID))
            return try FileLedger.create(
                at: path, name: name, authority: Ed25519PrivateKey(), passphrase: passphrase,
                secrets: [(secretFile, secret)], firstEvents: [commitment.ledgerEvent], ledgerID: ledgerID,
                timestamp: now, io: io)
        }
        return try open(store: store)
    }

    /// Opens a ledger for writing, waiting up to `lockTimeout` seconds for another writer to finish.
    /// `io` is the store's I/O seam (tests pass a disk that fails or loses power).
    public static func open(
        at path: String, passphrase: [UInt8]?, lockTimeout: Double = 10, io: any FileIO = PosixIO.shared,
        log: @escaping @Sendable (String) -> Void = standardErrorLog
    ) throws -> ElectionLedger {
        try open(
            store: try wrap {
                try FileLedger.open(at: path, passphrase: passphrase, lockTimeout: lockTimeout, io: io, log: log)
            }, log: log)
    }

    private static func open(store: FileLedger, log: (String) -> Void = standardErrorLog) throws -> ElectionLedger {
        let path = store.directory.path
        let secret = try readSecret(path + "/" + secretFile)
        try checkCommitment(of: secret, store: store, log: log)
        let replay = try ElectionView.replay(path: path)
        guard replay.head == store.head else {
            throw VoteError(.integrity(block: nil, offset: nil), "integrity failure: replay ended at block \(replay.head.height), the store at \(store.head.height)")
        }
        let voters = try VoterIndex.open(directory: path, head: store.head, log: log)
        var state = replay.state
        state.roll = VoterRoll(table: voters.table)
        return ElectionLedger(
            path: path, store: store, secret: secret, voters: voters, state: state,
            snapshotHeight: replay.snapshotHeight)
    }

    // MARK: The voter secret

    /// Reads the voter secret: exactly 32 bytes in a regular file, never through a symbolic link, owned by
    /// this user and readable by no one else (as ssh treats private keys).
    private static func readSecret(_ path: String) throws -> [UInt8] {
        let descriptor = Glibc.open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ELOOP { throw VoteError(.refused, "voter secret \(path) is a symbolic link; refusing to follow it") }
            throw VoteError(.io, "voter secret \(path) cannot be opened: \(String(cString: strerror(errno)))")
        }
        defer { Glibc.close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw VoteError(.refused, "voter secret \(path) is not a regular file")
        }
        guard info.st_uid == geteuid() else {
            throw VoteError(.refused, "voter secret \(path) is owned by another user (uid \(info.st_uid)); refusing to use it")
        }
        let mode = info.st_mode & 0o777
        guard mode & 0o077 == 0 else {
            throw VoteError(
                .refused, "voter secret \(path) is accessible by others (mode \(String(mode, radix: 8))); run chmod 600 on it")
        }
        var bytes = [UInt8](repeating: 0, count: 33)
        let count = Glibc.read(descriptor, &bytes, bytes.count)
        guard count == 32 else { throw VoteError(.refused, "voter secret \(path) is damaged: it must hold exactly 32 bytes") }
        return Array(bytes.prefix(32))
    }

    /// Refuses a voter secret other than the one the ledger committed to in block 1 (FORMAT.md §11.16): a
    /// secret copied in from another ledger would tag the same person differently and let them be
    /// authorised twice. A ledger created before commitments existed has none; its secret is used
    /// unchecked, with a warning (SECURITY.md).
    private static func checkCommitment(of secret: [UInt8], store: FileLedger, log: (String) -> Void) throws {
        let first = try wrap { try LedgerReader(path: store.directory.path).block(at: 1) }
        guard let first, let block = try? Block(decoding: first), let event = block.events.first,
            case .voterSecretCommitment(let recorded)? = try? ElectionEvent(event)
        else {
            log("warning: this ledger records no voter secret commitment (it predates them), so \(secretFile) cannot be checked against it")
            return
        }
        guard recorded == VoterSecret.commitment(secret, ledgerID: store.genesis.ledgerID) else {
            throw VoteError(
                .refused,
                "\(store.directory.path)/\(secretFile) does not belong to this ledger (block 1 commits to another voter secret); restore the ledger's own")
        }
    }

    /// The voter tag of `identity` in this ledger (HMAC under the voter secret); the identity is checked first.
    public func voterTag(_ identity: String) throws(Violation) -> Digest {
        try VoterIdentity.tag(identity, secret: secret)
    }

    /// The voter tags of this ledger, for a front end that hands the ledger itself to a `LedgerWriter` but
    /// must still turn identities into tags (a server authorising voters).
    public var voterTagger: VoterTagger { VoterTagger(secret: secret) }

    /// Decides every command at one block time, appends the accepted events as one durable block, and
    /// returns what happened to each. Rejected commands write nothing. `beforeWriting` sees the results
    /// before the block is written (bulk authorisation saves the tokens there); if it throws, nothing is.
    public func submit(
        _ commands: [Command], now: Int64 = Clock.now(),
        beforeWriting: ([Result<[EventReceipt], Violation>]) throws -> Void = { _ in }
    ) throws -> BatchOutcome {
        let time = max(now, store.head.timestamp)
        let (scratch, events, results) = decide(commands, at: time)
        try beforeWriting(results)
        guard !events.isEmpty else { return BatchOutcome(results: results, header: nil) }
        // Room in the roll first: once the block is on disk, committing to the roll must not fail.
        try voters.markInUse()
        try voters.table.reserve(scratch.roll?.pendingCount ?? 0)
        let header = try ElectionLedger.wrap { try store.append(events, timestamp: time) }
        state = scratch
        state.roll?.commit()
        if header.height - snapshotHeight >= ElectionLedger.snapshotInterval { saveSnapshot() }
        return BatchOutcome(results: results, header: header)
    }

    private func decide(_ commands: [Command], at time: Int64)
        -> (state: ElectionState, events: [LedgerEvent], results: [Result<[EventReceipt], Violation>])
    {
        var scratch = state
        var events: [LedgerEvent] = []
        var results: [Result<[EventReceipt], Violation>] = []
        results.reserveCapacity(commands.count)
        let firstIndex = store.frontier.size
        for var command in commands {
            // A certification covers exactly the events before it: the ledger, not the caller, knows that index.
            if case .certifyResults(let place, _) = command {
                command = .certifyResults(place: place, treeSize: firstIndex + UInt64(events.count))
            }
            do {
                let decided = try Contract.decide(command, state: scratch, at: time)
                var receipts: [EventReceipt] = []
                for event in decided {
                    scratch.apply(event)
                    let encoded = event.ledgerEvent
                    receipts.append(
                        EventReceipt(
                            height: store.head.height + 1, index: firstIndex + UInt64(events.count),
                            eventHash: encoded.leafHash, event: event))
                    events.append(encoded)
                }
                results.append(.success(receipts))
            } catch {
                results.append(.failure(error))
            }
        }
        return (scratch, events, results)
    }

    /// Decides one command; throws its violation as a `VoteError`.
    public func submit(_ command: Command, now: Int64 = Clock.now()) throws -> [EventReceipt] {
        let outcome = try submit([command], now: now)
        switch outcome.results[0] {
        case .success(let receipts): return receipts
        case .failure(let violation): throw VoteError(violation)
        }
    }

    /// Saves the state at the head so the next open replays only what follows. Derived data: a failure
    /// only costs a longer replay next time.
    public func saveSnapshot() {
        let snapshot = Snapshot(height: store.head.height, headerHash: store.headHash, state: state)
        guard (try? ProtectedFile.replace(path + "/" + ElectionView.snapshotFile, contents: snapshot.encoded)) != nil
        else { return }
        snapshotHeight = store.head.height
    }

    /// Saves the voter index and a snapshot at the head, so the next open reads them instead of the log,
    /// and releases the writer lock. Without it the next writer rebuilds the voter index from the log.
    public func close() {
        guard !closed else { return }
        closed = true
        // The roll holds exactly the durable blocks (it changes only after an append succeeds), so saving
        // it at the store's head is right even after a failed append.
        do { try voters.close(height: store.head.height, hash: store.headHash) } catch {
            standardErrorLog("the voter index was not saved (\(error)); the next open rebuilds it")
        }
        if snapshotHeight != store.head.height { saveSnapshot() }
        store.close()
    }

    @discardableResult
    static func wrap<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as LedgerError { throw VoteError(ledger: error) }
    }
}
