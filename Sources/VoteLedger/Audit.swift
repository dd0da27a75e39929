public import Election
import Foundation
public import Ledger
public import LedgerCrypto

/// Signed heads: a ledger's current tree head as a C2SP checkpoint, signed by the authority (FORMAT.md §12).
public enum SignedHead {
    /// The ledger's origin line and signing key name: "voteledger/<ledger id>".
    public static func origin(_ id: LedgerID) -> String { "voteledger/\(id)" }

    /// The checkpoint of the ledger after the block with `header`.
    public static func checkpoint(_ header: BlockHeader) -> Checkpoint {
        Checkpoint(
            origin: origin(header.ledgerID), treeSize: header.treeSize, root: header.treeRoot,
            extensions: ["height \(header.height)", "time \(header.timestamp)"])
    }

    /// Parses `note` as a checkpoint signed by `key` for ledger `ledgerID` (any VoteLedger origin when nil),
    /// with exactly one `height` and one `time` line, each a decimal number (FORMAT.md §12.1).
    public static func verify(_ note: SignedNote, key: Ed25519PublicKey, ledgerID: LedgerID?) throws -> Checkpoint {
        guard let checkpoint = Checkpoint(text: note.text), checkpoint.origin.hasPrefix("voteledger/") else {
            throw VoteError(.refused, "not a VoteLedger signed head")
        }
        for name in ["height", "time"] {
            let lines = checkpoint.extensions.filter { $0.hasPrefix(name + " ") }
            guard lines.count == 1, let value = UInt64(lines[0].dropFirst(name.count + 1)),
                "\(name) \(value)" == lines[0], name == "height" || value <= UInt64(Int64.max)
            else {
                throw VoteError(.refused, "not a VoteLedger signed head: it needs exactly one \(name) line, in decimal")
            }
        }
        if let ledgerID, checkpoint.origin != origin(ledgerID) {
            throw VoteError(
                .integrity(block: nil, offset: nil),
                "integrity failure: the head is for \(checkpoint.origin), not this ledger (\(origin(ledgerID)))")
        }
        guard note.isSigned(by: key, name: checkpoint.origin) else {
            throw VoteError(
                .integrity(block: nil, offset: nil),
                "integrity failure: the head's signature is not valid under the authority key")
        }
        return checkpoint
    }
}

extension SignedHead {
    /// The current head of `source`, signed with `key` (its authority), without writing anything: no
    /// lock, no recovery, no index (`vote head` is a read command). Returns the note and the head's block.
    public static func sign(
        _ source: some BlockSource, key: any AuthoritySigner
    ) throws
        -> (note: SignedNote, head: BlockHeader, genesis: Genesis)
    {
        let signer = try HeadSigner(source, key: key)
        let note = try signer.signNote(checkpoint(signer.head).text, name: origin(signer.genesis.ledgerID))
        return (note, signer.head, signer.genesis)
    }
}

extension ElectionLedger {
    /// The current head, signed with the authority key.
    public func signedHead() throws -> SignedNote { try signedHead(head) }

    /// The head of the block with `header`, signed with the authority key.
    func signedHead(_ header: BlockHeader) throws -> SignedNote {
        try store.signNote(SignedHead.checkpoint(header).text, name: SignedHead.origin(genesis.ledgerID))
    }

    /// C2SP tlog-proof receipts for `receipts` (events already in the ledger) under the signed head of block
    /// `height`, by default the current head. A receipt lost after its block was written is issued again
    /// here; with the height of its block it is the receipt the block's writer would have handed out.
    public func tlogProofs(for receipts: [EventReceipt], underBlock height: UInt64? = nil) throws -> [TlogProof] {
        guard !receipts.isEmpty else { return [] }
        let reader = try source()
        var header = head
        if let height {
            guard let found = try reader.header(at: height) else {
                throw VoteError(
                    .integrity(block: height, offset: nil), "integrity failure: block \(height) is not in the ledger")
            }
            header = found
        }
        return try TlogProof.receipts(for: receipts, in: reader, under: header, checkpoint: try signedHead(header))
    }
}

extension TlogProof {
    /// The receipt of `receipt`, an event already in `source`, proven under `head`, a signed head of that ledger
    /// (with whatever cosignatures it carries) covering the event: a receipt under a later head than its
    /// block's. Throws an integrity error if `head` names no block of `source` of its tree size.
    public static func receipt(
        for receipt: EventReceipt, in source: some BlockSource, under head: SignedNote
    ) throws -> TlogProof {
        guard let checkpoint = Checkpoint(text: head.text), let value = checkpoint.extensionValue("height"),
            let height = UInt64(value), let header = try source.header(at: height),
            header.treeSize == checkpoint.treeSize, header.treeRoot == checkpoint.root,
            receipt.index < header.treeSize
        else {
            throw VoteError(
                .integrity(block: nil, offset: nil), "integrity failure: the head is not a head of this ledger's")
        }
        return try receipts(for: [receipt], in: source, under: header, checkpoint: head)[0]
    }

    /// The receipts of `receipts`, events already in `source`, proven under `head` (a block of `source`)
    /// whose signed checkpoint is `checkpoint`: what every receipt of an event recorded earlier is made by.
    /// A few receipts each cost O(log n) index reads; a large batch loads the whole tree once instead.
    static func receipts(
        for receipts: [EventReceipt], in source: some BlockSource, under head: BlockHeader, checkpoint: SignedNote
    ) throws -> [TlogProof] {
        let proof: (UInt64) throws -> [Digest]
        if receipts.count > 64 {
            let tree = MerkleTree(
                leaves: try source.leafHashes(treeSize: head.treeSize, root: head.treeRoot))
            proof = { tree.inclusionProof(index: $0, size: head.treeSize) }
        } else {
            proof = { index in
                try source.inclusionProof(index: index, treeSize: head.treeSize, root: head.treeRoot)
            }
        }
        return try receipts.map {
            TlogProof(
                extra: $0.event.ledgerEvent.encoded, index: $0.index, proof: try proof($0.index),
                checkpoint: checkpoint)
        }
    }
}

/// What a ledger looks like to an auditor: its identity, its last block, and proofs from its tree.
public struct AuditedLedger {
    public let genesis: Genesis
    public let key: Ed25519PublicKey
    public let head: BlockHeader
    let source: any BlockSource
    /// How the store hands out its authority (the file store: the key decrypted with a passphrase) to sign a
    /// head; nil for a copy that can only be read.
    let authorityKey: (([UInt8]?) throws -> any AuthoritySigner)?

    /// Loads the chain of `source` up to its last complete block (no lock; a consistent prefix).
    /// `authorityKey` loads the authority key, where the store holds one, for re-issuing receipts.
    public init(
        _ source: some BlockSource, authorityKey: (([UInt8]?) throws -> any AuthoritySigner)? = nil
    ) throws {
        self.source = source
        self.authorityKey = authorityKey
        genesis = source.genesis
        key = try Ed25519PublicKey(rawRepresentation: genesis.authorityKey)
        head = try source.lastBlock()
    }

    /// Whether the signed head `checkpoint` (its signature checked) is one of this ledger's: its tree is a
    /// prefix of this ledger (`requirePrefix`), and its `height` and `time` lines name the block whose
    /// tree size is the head's, with that block's time (FORMAT.md §12.1). Throws an integrity error saying
    /// why not.
    public func requireHead(_ checkpoint: Checkpoint, what: String) throws {
        try requirePrefix(size: checkpoint.treeSize, root: checkpoint.root, what: what)
        // `SignedHead.verify` has checked that both lines are there, once, in decimal.
        let height = UInt64(checkpoint.extensionValue("height")!)!
        let time = Int64(checkpoint.extensionValue("time")!)!
        let header = try source.header(at: height)
        guard let header, header.height <= head.height, header.treeSize == checkpoint.treeSize else {
            let found =
                header.map { "block \(height) holds a tree of \($0.treeSize) events" } ?? "there is no block \(height)"
            throw VoteError(
                .integrity(block: nil, offset: nil),
                "integrity failure: \(what) of \(checkpoint.treeSize) events names block \(height), but \(found)")
        }
        guard header.timestamp == time else {
            throw VoteError(
                .integrity(block: height, offset: nil),
                "integrity failure: \(what) gives block \(height) the time \(time), but the block's is \(header.timestamp)"
            )
        }
    }

    /// Whether the tree of `size` events with head `root` is a prefix of this ledger (an RFC 9162
    /// consistency proof built from this ledger verifies); throws an integrity error saying why not.
    public func requirePrefix(size: UInt64, root: Digest, what: String) throws {
        guard size <= head.treeSize else {
            throw VoteError(
                .integrity(block: nil, offset: nil),
                "integrity failure: \(what) is not a prefix of this ledger: the ledger was truncated or rolled back (it holds \(head.treeSize) events, \(what) covers \(size))"
            )
        }
        let proof =
            size == 0
            ? []
            : try source.consistencyProof(oldSize: size, newSize: head.treeSize, root: head.treeRoot)
        guard size > 0,
            Merkle.verifyConsistency(
                oldSize: size, newSize: head.treeSize, proof: proof, oldRoot: root, newRoot: head.treeRoot)
        else {
            throw VoteError(
                .integrity(block: nil, offset: nil),
                "integrity failure: \(what) is not a prefix of this ledger: the ledger was rewritten or forked")
        }
    }
}

// MARK: - Re-issuing receipts

extension AuditedLedger {
    /// The receipt of the vote cast in `place` with the token whose hash is `tokenHash`, proven under this
    /// ledger's head and signed now with the authority key (`passphrase` unlocks it). A receipt is a
    /// function of the ledger and the token, so a lost one can always be issued again. Takes no lock and
    /// writes nothing.
    public func reissueReceipt(
        place: UInt32, tokenHash: Digest, passphrase: [UInt8]?
    ) throws -> (receipt: EventReceipt, proof: TlogProof) {
        let authorized = ElectionEvent.Tag.voterAuthorized.rawValue
        let weighted = ElectionEvent.Tag.weightedVoterAuthorized.rawValue
        let cast = ElectionEvent.Tag.voteCast.rawValue
        let ballot = ElectionEvent.Tag.ballotCast.rawValue
        let replaced = ElectionEvent.Tag.ballotReplaced.rawValue
        var isAuthorized = false
        var found: EventReceipt?
        try source.forEachBlock(from: 1) { block in
            guard block.header.height <= head.height else { return }
            let first = block.header.treeSize - UInt64(block.header.eventCount)
            for (offset, event) in block.events.enumerated()
            where event.type == authorized || event.type == weighted || event.type == cast || event.type == ballot
                || event.type == replaced
            {
                switch try? ElectionEvent(type: event.type, payload: event.payload) {
                case .voterAuthorized(place, _, tokenHash, _): isAuthorized = true
                // A re-voting place's later ballots replace the earlier: the receipt is of the last.
                case .voteCast(place, _, tokenHash), .ballotCast(place, tokenHash, _),
                    .ballotReplaced(place, tokenHash, _):
                    found = EventReceipt(
                        height: block.header.height, index: first + UInt64(offset),
                        eventHash: event.leafHash, event: try ElectionEvent(event.ledgerEvent))
                default: break
                }
            }
        }
        guard let found else {
            guard isAuthorized else { throw VoteError(.tokenNotAuthorized(place: place)) }
            throw VoteError(.notFound, "this token has not voted in place \(place): there is no receipt to issue")
        }
        guard let authorityKey else {
            throw VoteError(
                .refused, "this copy of the ledger holds no authority key: it can be read, not sign receipts")
        }
        let key = try authorityKey(passphrase)
        let note = try HeadSigner(source, key: key).signNote(
            SignedHead.checkpoint(head).text, name: SignedHead.origin(genesis.ledgerID))
        return (found, try TlogProof.receipts(for: [found], in: source, under: head, checkpoint: note)[0])
    }
}

/// Checks receipts and published heads.
public enum Auditor {
    /// The result of a successful receipt audit.
    public struct ReceiptReport: Sendable {
        /// Height of the block holding the event (with a ledger), else of the receipt's head.
        public var height: UInt64
        public var index: UInt64
        public var receiptTreeSize: UInt64
        /// The ledger's tree size the receipt was proven consistent with (nil offline).
        public var currentTreeSize: UInt64?
        public var event: ElectionEvent?
    }

    /// Checks a receipt: the head's signature, the event's inclusion under it, and — against `ledger` —
    /// that the ledger still extends that head; against a published `head`, that it extends the receipt's.
    /// Offline (no ledger), `key` is the authority's key.
    public static func audit(
        receipt: TlogProof, ledger: AuditedLedger?, key: Ed25519PublicKey?, head: SignedNote?
    ) throws -> ReceiptReport {
        guard let key = ledger?.key ?? key else {
            throw VoteError(.usage, "an offline audit needs the authority key (--key)")
        }
        let checkpoint = try SignedHead.verify(receipt.checkpoint, key: key, ledgerID: ledger?.genesis.ledgerID)
        guard let extra = receipt.extra else {
            throw VoteError(.refused, "the receipt carries no event (no extra line)")
        }
        guard
            Merkle.verifyInclusion(
                leafHash: Merkle.leafHash(extra), index: receipt.index, size: checkpoint.treeSize, proof: receipt.proof,
                root: checkpoint.root)
        else {
            throw VoteError(
                .integrity(block: nil, offset: nil),
                "integrity failure: the event is not included under the receipt's head: the receipt was altered")
        }
        var report = ReceiptReport(
            height: UInt64(checkpoint.extensionValue("height") ?? "") ?? 0, index: receipt.index,
            receiptTreeSize: checkpoint.treeSize,
            event: LedgerEvent(encoded: extra).flatMap { try? ElectionEvent($0) })
        if let head {
            let published = try SignedHead.verify(head, key: key, ledgerID: ledger?.genesis.ledgerID)
            try ledger?.requireHead(published, what: "the published head")
            guard published.treeSize >= checkpoint.treeSize else {
                throw VoteError(
                    .integrity(block: nil, offset: nil),
                    "integrity failure: the published head (size \(published.treeSize)) is older than the receipt's (size \(checkpoint.treeSize))"
                )
            }
            if published.treeSize == checkpoint.treeSize, published.root != checkpoint.root {
                throw VoteError(
                    .integrity(block: nil, offset: nil),
                    "integrity failure: the receipt's head and the published head differ at the same size: the ledger was forked"
                )
            }
        }
        if let ledger {
            try ledger.requireHead(checkpoint, what: "the receipt's head")
            report.currentTreeSize = ledger.head.treeSize
            if let height = try ledger.source.height(ofEvent: receipt.index) { report.height = height }
        }
        return report
    }
}

extension Auditor {
    /// Anonymous place `place` as the ledger holds it, with its ballot key, which a voter's client checks the key
    /// it was served against before it spends an issuance code and before it casts (a server that handed one voter
    /// a key of its own could recognise that voter's ballot), and its ballot, which reads the answers a voter gives. `receipt` is the receipt of the place's place-created
    /// event, audited as `vote audit --key` audits any receipt (the head's signature under the authority's `key`,
    /// the event's inclusion under it); `head` is the server's current signed head, which must be signed by the
    /// same key for the same ledger and extend the receipt's head by the proof `consistency(from, to)` gives.
    public static func anonymousPlace(
        place: UInt32, receipt: TlogProof, key: Ed25519PublicKey, head: SignedNote,
        consistency: (_ from: UInt64, _ to: UInt64) throws -> [Digest]
    ) throws -> (place: Place, ballotKey: [UInt8]) {
        let report = try audit(receipt: receipt, ledger: nil, key: key, head: head)
        let created = try SignedHead.verify(receipt.checkpoint, key: key, ledgerID: nil)
        let current = try SignedHead.verify(head, key: key, ledgerID: nil)
        guard current.origin == created.origin else {
            throw VoteError(
                .integrity(block: nil, offset: nil),
                "integrity failure: the current head is for \(current.origin), the place's creation for \(created.origin)"
            )
        }
        if current.treeSize > created.treeSize {
            let proof = try consistency(created.treeSize, current.treeSize)
            guard
                Merkle.verifyConsistency(
                    oldSize: created.treeSize, newSize: current.treeSize, proof: proof, oldRoot: created.root,
                    newRoot: current.root)
            else {
                throw VoteError(
                    .integrity(block: nil, offset: nil),
                    "integrity failure: the current head does not extend the head the place's creation is proven under: the ledger was rewritten"
                )
            }
        }
        guard case .placeCreated(let recorded)? = report.event, recorded.id == place else {
            throw VoteError(
                .integrity(block: nil, offset: nil),
                "integrity failure: the receipt given for place \(place)'s creation is of another event")
        }
        guard let ballotKey = recorded.ballotKey else {
            throw VoteError(
                .refused, "place \(place) does not use anonymous ballots (its place-created event on the ledger)")
        }
        return (recorded, ballotKey)
    }
}
