import Glibc
public import Ledger
public import Mail
import NIOCore
import NIOPosix
public import VoteLedger

/// What the routes share: the ledger's one writer (every write goes through its group commit, it holds the
/// authority key that signs receipts' heads, and it publishes the election after each durable block), the
/// store's reader (events, proofs, a token's status), and where the admin token's hash is. The server opens
/// no file and replays nothing: any store whose writer and reader it is handed will do (`vote serve` hands
/// it the file store's, the route tests the memory store's).
public final class LedgerServer: Sendable {
    /// The ledger's identity (its id and authority key), from the store's genesis block.
    let genesis: Genesis
    let writer: LedgerWriter
    /// The store's reader: it sees every durable block (and perhaps one being published). Its calls may block
    /// (a file's pages, a database's answers): routes reach it through `read`, the witnesses' threads directly.
    let source: any BlockSource
    /// Where the admin routes find the admin token's hash.
    let adminToken: AdminTokenHash
    let tagger: any VoterSecretKey
    /// Now, in ms since the epoch: the writer's block clock and the clock reads judge statuses by.
    let clock: @Sendable () -> Int64
    /// How many writes may wait for a block; bulk requests submit at most half of it at a time.
    let capacity: Int
    /// The status routes' status index, built once and kept in this process's memory.
    let derived: any DerivedStore = MemoryDerivedStore()
    /// Gathers witnesses' cosignatures on the signed heads (`--witness`), if any witness is configured.
    let cosigning: Cosigning?
    /// The key store the officer's sealed contact book and mail log come from, if the server has one (a key
    /// directory; a memory ledger has none, and its desk shows no mail figures).
    let keys: (any KeyStore)?
    /// The relay the console's mail action sends through (`vote serve --smtp-host …`); nil: no mail action.
    let mail: MailSettings?
    /// The console's mailing under way or last finished in this process.
    let mailing = Locked<DeskMailing?>(nil)
    /// The anonymous ballots held for their place's next batch.
    let batches: BallotBatches

    /// The server of the ledger whose one writer is `writer` and whose store reads through `source` (the
    /// ledger's `source()`); the admin routes admit the token whose hash `adminToken` holds. With `cosigning`,
    /// `run` gathers witnesses' cosignatures, and receipts and the head route carry them. With `keys` (where the
    /// ledger's secrets are kept, and the officer's records with them) the officer's desk shows the mail
    /// figures, and with `mail` as well its mail action sends.
    public init(
        writer: LedgerWriter, source: any BlockSource, adminToken: AdminTokenHash, cosigning: Cosigning? = nil,
        keys: (any KeyStore)? = nil, mail: MailSettings? = nil
    ) {
        self.cosigning = cosigning
        self.keys = keys
        self.mail = mail
        genesis = source.genesis
        self.writer = writer
        self.source = source
        self.adminToken = adminToken
        tagger = writer.voterSecret
        clock = writer.clock
        capacity = writer.capacity
        batches = BallotBatches(writer: writer)
    }

    /// Writes what is queued as the last block and closes the ledger (saving its indexes and releasing the
    /// writer lock). Later writes are refused.
    public func close() async {
        await batches.close()
        await writer.close()
    }

    // MARK: Reads

    /// The election at the last durable block, as the writer published it.
    func view() -> ElectionView { writer.published.view }

    /// `body` with the store's reader, run on the readers' threads (`readers`): a route's task runs on one of Swift
    /// concurrency's few threads (one per core), which must not wait on disk or on PostgreSQL. The answer comes back
    /// through an event loop, not from the reader's thread: resuming the task there could have Swift's executor
    /// start a worker thread from it, and a new thread inherits its creator's nice value, so a route (a vote's too)
    /// would run at the readers' priority from then on.
    func read<T: Sendable>(_ body: @escaping @Sendable (any BlockSource) throws -> T) async throws -> T {
        let source = source
        return try await Self.readers.runIfActive(eventLoop: MultiThreadedEventLoopGroup.singleton.any()) {
            Self.yieldToVotes()
            return try body(source)
        }.get()
    }

    /// The threads reads run on, as many as the machine has cores, for the life of the process (as NIO's own pool
    /// for blocking work is).
    private static let readers: NIOThreadPool = {
        let pool = NIOThreadPool(numberOfThreads: readerThreads)
        pool.start()
        return pool
    }()

    /// Lowers the calling reader thread's scheduling priority (nice 10; on Linux the nice value is the thread's, and
    /// `who` 0 is the calling thread), so that while the cores are busy the event loops and the writer's thread run
    /// first: a flood of reads (proofs, statuses) then takes what the votes leave of the cores instead of making
    /// votes wait. Measured with `Tools/bench-http --trickle 2000 --readers 64`. A thread may always lower its own
    /// priority; a second call changes nothing (and a server already at nice 10 or more stays where it is).
    private static func yieldToVotes() {
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, readerNice)
    }

    /// How many threads read: one per core.
    static let readerThreads = System.coreCount

    /// The readers' nice value: a thread at nice 10 has about a tenth of a nice-0 thread's share of a busy core.
    static let readerNice: Int32 = 10

    /// The receipt of `recorded`, a command's event: the writer's, proven from memory (or, when it could not
    /// sign one, proven from the log under the same block's head, so it is the receipt the writer would have
    /// handed out). With witnesses, it waits for the first round of cosignatures that covers the event's
    /// block and is proven under that round's head, carrying the cosignatures the witnesses that were up gave.
    func receipt(for recorded: LedgerWriter.Recorded) async throws -> TlogProof {
        try await receipt(of: recorded.event, made: recorded.receipt)
    }

    /// The receipt of `event`, already in the ledger, as `receipt(for:)` hands it out: `made` if the writer
    /// made one, else proven from the log under the head of the event's block (the receipt the writer would
    /// have handed out), with witnesses' cosignatures as there. A voter whose answer was lost gets it here.
    func receipt(of event: EventReceipt, made: TlogProof? = nil) async throws -> TlogProof {
        var proof: TlogProof
        if let made {
            proof = made
        } else {
            proof = try await writer.tlogProofs(for: [event], underBlock: event.height)[0]
        }
        guard let cosigning, let size = Checkpoint(text: proof.checkpoint.text)?.treeSize,
            let head = await cosigning.head(covering: size), head.signatures.count > 1
        else { return proof }
        if head.text == proof.checkpoint.text {
            proof.checkpoint = head
            return proof
        }
        return try TlogProof.receipt(for: event, in: source, under: head)
    }
}
