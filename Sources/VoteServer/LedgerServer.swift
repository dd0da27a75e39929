import Election
public import FileStore
import Foundation
import Ledger
public import VoteLedger

/// What the routes share: the ledger's one writer (every write goes through its group commit, and it holds
/// the authority key that signs receipts' heads), the voter secret's tagger, and cached reads. The server is
/// the ledger's one writer while it runs; readers (CLI read commands) keep working beside it.
public final class LedgerServer: Sendable {
    /// The ledger directory.
    public let path: String
    /// The ledger's key directory (where the admin token's hash is kept).
    public let keys: KeyDirectory
    /// The ledger's identity (its id and authority key), from the opened ledger's genesis block.
    let genesis: Genesis
    let writer: LedgerWriter
    let tagger: any VoterSecretKey
    /// Now, in ms since the epoch: the writer's block clock and the clock reads judge statuses by.
    let clock: @Sendable () -> Int64
    /// How many writes may wait for a block; bulk requests submit at most half of it at a time.
    let capacity: Int
    private let views = ViewCache()

    /// Opens the ledger at `path` for writing (the writer lock is held until `close`), its secrets in the key
    /// directory `keys` (nil: the default); `passphrase` unlocks an encrypted authority key. `clock` is the
    /// block clock (tests step it; the server uses the real one); at most `capacity` writes wait for a block,
    /// beyond which clients are told 503 and to retry; `hold` is how long a block is held open for more writes.
    public static func open(
        path: String, keys: String? = nil, passphrase: [UInt8]?, capacity: Int = 100_000,
        clock: @escaping @Sendable () -> Int64 = { Clock.now() }, hold: LedgerWriter.BlockHold = .standard
    ) throws -> LedgerServer {
        // The server does not wait for another writer: it is started on a ledger no one else is writing.
        let configuration = LedgerConfiguration(
            .file(path: path, keys: keys), passphrase: passphrase.map { .given($0) } ?? .none, lockTimeout: 0)
        let ledger = try VoteLedgerService.openLedger(configuration)
        let (genesis, tagger) = (ledger.genesis, ledger.voterSecret)
        return LedgerServer(
            path: path, keys: LedgerKeys.directory(ledger: path, keys: keys), genesis: genesis,
            writer: LedgerWriter(ledger, capacity: capacity, clock: clock, hold: hold),
            tagger: tagger, clock: clock, capacity: capacity)
    }

    private init(
        path: String, keys: KeyDirectory, genesis: Genesis, writer: LedgerWriter, tagger: any VoterSecretKey,
        clock: @escaping @Sendable () -> Int64, capacity: Int
    ) {
        self.capacity = capacity
        self.path = path
        self.keys = keys
        self.genesis = genesis
        self.writer = writer
        self.tagger = tagger
        self.clock = clock
    }

    /// Writes what is queued as the last block and closes the ledger (saving its indexes and releasing the
    /// writer lock). Later writes are refused.
    public func close() async { await writer.close() }

    // MARK: Reads

    /// The election state at the current head: replayed once per head (cached until the next block).
    func view() throws -> ElectionView {
        let head = try ElectionLedger.wrap { try LedgerReader(path: path).lastBlock() }
        if let cached = views.get(), cached.head == head { return cached }
        let view = try ElectionView.replay(try ElectionLedger.wrap { try LedgerReader(path: path) })
        views.set(view)
        return view
    }
}

// MARK: - Caches

/// The last replayed view; replaced when the head moves.
private final class ViewCache: @unchecked Sendable {
    private let lock = NSLock()
    private var view: ElectionView?
    func get() -> ElectionView? { lock.withLock { view } }
    func set(_ view: ElectionView) { lock.withLock { self.view = view } }
}
