import Election
import Foundation
import Ledger
import LedgerCrypto
public import VoteLedger

/// What the routes share: the ledger's one writer (every write goes through its group commit), the
/// authority key for signing receipts' heads, the voter secret's tagger, and cached reads. The server is
/// the ledger's one writer while it runs; readers (CLI read commands) keep working beside it.
public final class LedgerServer: Sendable {
    /// The ledger directory.
    public let path: String
    let writer: LedgerWriter
    let tagger: any VoterSecretKey
    let signer: Signer
    /// Now, in ms since the epoch: the writer's block clock and the clock reads judge statuses by.
    let clock: @Sendable () -> Int64
    /// How many writes may wait for a block; bulk requests submit at most half of it at a time.
    let capacity: Int
    private let views = ViewCache()
    private let notes = NoteCache()

    /// Opens the ledger at `path` for writing (the writer lock is held until `close`); `passphrase` unlocks
    /// an encrypted authority key. `clock` is the block clock (tests step it; the server uses the real one);
    /// at most `capacity` writes wait for a block, beyond which clients are told 503 and to retry.
    public static func open(
        path: String, passphrase: [UInt8]?, capacity: Int = 100_000,
        clock: @escaping @Sendable () -> Int64 = { Clock.now() }
    ) throws -> LedgerServer {
        // The server does not wait for another writer: it is started on a ledger no one else is writing.
        let configuration = LedgerConfiguration(
            .file(path: path), passphrase: passphrase.map { .given($0) } ?? .none, lockTimeout: 0)
        let ledger = try VoteLedgerService.openLedger(configuration)
        let tagger = ledger.voterSecret
        let signer = try ElectionLedger.wrapLedger {
            let reader = try LedgerReader(path: path)
            return try HeadSigner(reader, key: try reader.authorityKey(passphrase: passphrase))
        }
        return LedgerServer(
            path: path, writer: LedgerWriter(ledger, capacity: capacity, clock: clock), tagger: tagger,
            signer: Signer(signer),
            clock: clock, capacity: capacity)
    }

    private init(
        path: String, writer: LedgerWriter, tagger: any VoterSecretKey, signer: Signer,
        clock: @escaping @Sendable () -> Int64,
        capacity: Int
    ) {
        self.capacity = capacity
        self.path = path
        self.writer = writer
        self.tagger = tagger
        self.signer = signer
        self.clock = clock
    }

    /// Writes what is queued as the last block and closes the ledger (saving its indexes and releasing the
    /// writer lock). Later writes are refused.
    public func close() async { await writer.close() }

    // MARK: Reads

    /// The election state at the current head: replayed once per head (cached until the next block).
    func view() throws -> ElectionView {
        let head = try ElectionLedger.wrapLedger { try LedgerReader(path: path).lastBlock() }
        if let cached = views.get(), cached.head == head { return cached }
        let view = try ElectionView.replay(try ElectionLedger.wrapLedger { try LedgerReader(path: path) })
        views.set(view)
        return view
    }

    /// The C2SP tlog-proof of an event just recorded in block `receipt.height`, under that block's head
    /// signed by the authority (one signature per block, shared by every receipt in it).
    func tlogProof(for receipt: EventReceipt) throws -> TlogProof {
        try ElectionLedger.wrapLedger {
            let reader = try LedgerReader(path: path)
            guard let header = try reader.header(at: receipt.height) else {
                throw VoteError(
                    .integrity(block: receipt.height, offset: nil),
                    "integrity failure: block \(receipt.height) is not in the ledger")
            }
            let note = try notes.note(for: header) {
                try signer.key.signNote(SignedHead.checkpoint(header).text, name: SignedHead.origin(header.ledgerID))
            }
            let proof = try reader.inclusionProof(
                index: receipt.index, treeSize: header.treeSize, root: header.treeRoot)
            return TlogProof(
                extra: receipt.event.ledgerEvent.encoded, index: receipt.index, proof: proof, checkpoint: note)
        }
    }

    /// The current head signed by the authority (`vote head`).
    func signedHead() throws -> SignedNote {
        try ElectionLedger.wrapLedger {
            let header = try LedgerReader(path: path).lastBlock()
            return try notes.note(for: header) {
                try signer.key.signNote(SignedHead.checkpoint(header).text, name: SignedHead.origin(header.ledgerID))
            }
        }
    }
}

// MARK: - Caches

/// The authority key (a `HeadSigner` holds it, checked against the ledger's genesis when loaded).
struct Signer: @unchecked Sendable {
    let key: HeadSigner
    init(_ key: HeadSigner) { self.key = key }
}

/// The last replayed view; replaced when the head moves.
private final class ViewCache: @unchecked Sendable {
    private let lock = NSLock()
    private var view: ElectionView?
    func get() -> ElectionView? { lock.withLock { view } }
    func set(_ view: ElectionView) { lock.withLock { self.view = view } }
}

/// The signed head of the last block asked about: a burst of receipts from one block shares one signature.
private final class NoteCache: @unchecked Sendable {
    private let lock = NSLock()
    private var last: (header: BlockHeader, note: SignedNote)?

    func note(for header: BlockHeader, sign: () throws -> SignedNote) throws -> SignedNote {
        if let last = lock.withLock({ last }), last.header == header { return last.note }
        let note = try sign()
        lock.withLock { last = (header, note) }
        return note
    }
}

extension ElectionLedger {
    /// `body` with a store error as a `VoteError` (`wrap` is the module's own).
    static func wrapLedger<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as LedgerError { throw VoteError(ledger: error) }
    }
}
