public import Ledger
public import LedgerCrypto

#if canImport(Glibc)
    import Glibc
#endif

/// The writer of a ledger directory, the file store's `BlockAppender`: holds the writer lock and a `BlockBuilder`
/// (the authority key and the tree frontier), and appends signed blocks durably. Open one per process; a
/// second writer waits, then fails as busy. `FileBlockSource` is the file store's `BlockSource`.
public final class FileBlockStore: BlockAppender {
    /// Segment files rotate once they pass this size (a single larger block still fits in a fresh one).
    public static let defaultSegmentLimit: UInt64 = 64 << 20

    public let directory: LedgerDirectory
    /// The ledger's identity, from its genesis block.
    public var genesis: Genesis { writer.genesis }
    /// Header of the last block.
    public var head: BlockHeader { writer.head }
    /// Hash of the last block's header.
    public var headHash: Digest { writer.headHash }
    /// The tree frontier after the last block.
    public var frontier: MerkleFrontier { writer.frontier }

    private var writer: BlockBuilder
    private let lock: File
    private let io: any FileIO
    private let segmentLimit: UInt64
    private let log: @Sendable (String) -> Void
    private var segment: Int
    private var segmentFile: File
    private var segmentSize: UInt64
    private var blockIndex: File
    private var leafIndex: File
    private var nodeIndex: File
    private var indexUsable = true
    /// Set when a write or sync failed, until a block is written again; each append meanwhile first recovers
    /// (`recoverFromFailure`).
    private var failure: LedgerError?
    /// Blocks written but not yet durable, oldest first, with what the indexes need once they are.
    private var unsynced: [Unsynced] = []
    /// Where the log ends after the last durable block: what a failed write or sync goes back to.
    private var durable: Position
    /// Counts the times the written blocks were dropped, so that a sync begun before is known to be stale.
    private var drops = 0

    /// Where the writer is: its chain state and the end of the log.
    private struct Position {
        var writer: BlockBuilder
        var segment: Int
        var segmentFile: File
        var segmentSize: UInt64
    }

    /// A block written, not yet durable.
    private struct Unsynced {
        var location: BlockLocation
        var header: BlockHeader
        var leaves: [Digest]
        var groups: [Digest]
        var previousTreeSize: UInt64
        /// The position after it.
        var after: Position
    }

    // MARK: Creating and opening

    /// Creates a new ledger at `path` (which must not exist, or be an empty directory): `authority.pub`, the
    /// genesis block and its segment, and, if `firstEvents` is not empty, block 1 holding them at the genesis
    /// time. The authority key and any application `secrets` go into the key directory `keys` (default:
    /// `KeyDirectory(defaultFor:)`), created 0700 if missing, written 0600 before the ledger directory
    /// appears, unless `writingKeys` is false (a copy of a ledger whose keys are kept already). The ledger
    /// directory appears complete or not at all; on failure the keys written are removed.
    public static func create(
        at path: String, keys: String? = nil, writingKeys: Bool = true, name: String, authority: Ed25519PrivateKey,
        passphrase: [UInt8]? = nil, secrets: [(name: String, contents: [UInt8])] = [], firstEvents: [LedgerEvent] = [],
        ledgerID: LedgerID, timestamp: Int64, segmentLimit: UInt64 = defaultSegmentLimit,
        io: any FileIO = PosixIO.shared, log: @escaping @Sendable (String) -> Void = standardErrorLog
    ) throws(LedgerError) -> FileBlockStore {
        var path = path
        while path.count > 1, path.hasSuffix("/") { path.removeLast() }
        let trimmed = name.utf8.count
        guard trimmed >= 1, trimmed <= Genesis.maxNameBytes else {
            throw LedgerError.invalidRequest("ledger name must be 1-\(Genesis.maxNameBytes) bytes of UTF-8")
        }
        guard timestamp >= 0 else { throw LedgerError.invalidRequest("creation time is before 1970") }
        try requireFreeTarget(path, what: "already exists")
        let directory = LedgerDirectory(path)
        let keys = KeyDirectory(keys ?? KeyDirectory(defaultFor: path).path)
        let publicPEM: String
        do { publicPEM = try authority.publicKey.pem } catch {
            throw LedgerError.key("cannot encode the authority key: \(error.message)")
        }
        let newKeys =
            writingKeys
            ? try keys.storeNewKeys(authority: authority, passphrase: passphrase, secrets: secrets, io: io) : nil
        let staging = LedgerDirectory(path + ".creating-\(getpid())")
        do throws(LedgerError) {
            try FileSystem.makeDirectory(staging.path, mode: 0o700)
        } catch {
            newKeys?.remove()
            throw error
        }
        do throws(LedgerError) {
            try FileSystem.createFile(staging.publicKeyPath, contents: Array(publicPEM.utf8), mode: 0o644, io: io)
            try FileSystem.createFile(staging.lockPath, contents: [], mode: 0o600, io: io)

            let genesis = Genesis(
                ledgerID: ledgerID, createdAt: timestamp, authorityKey: authority.publicKey.rawRepresentation,
                name: name)
            let (block, writer) = try BlockBuilder.start(genesis, key: authority)
            var contents = SegmentHeader(number: 0, firstHeight: 0).encoded + Frame.encode(block.encoded)
            if !firstEvents.isEmpty {
                for event in firstEvents {
                    guard event.type >= LedgerFormat.firstApplicationEventType,
                        event.payload.count + 2 <= LedgerFormat.maxEventSize
                    else {
                        throw LedgerError.invalidRequest("the first block's events must be small application events")
                    }
                }
                contents += Frame.encode(
                    try writer.next(firstEvents.map(HashedEvent.init), timestamp: timestamp).block.encoded)
            }
            try FileSystem.createFile(staging.segmentPath(0), contents: contents, mode: 0o600, io: io)
            try io.syncDirectory(staging.path)
            do { try io.rename(staging.path, path) } catch {
                // Someone else (most likely a second create at the same time) made PATH meanwhile.
                try requireFreeTarget(path, what: "appeared while this ledger was being created (another init?)")
                throw error
            }
            try io.syncDirectory(parentDirectory(of: path))
        } catch {
            removeStaging(staging)
            newKeys?.remove()
            throw error
        }
        return try open(
            at: directory.path, keys: keys.path, signer: authority, segmentLimit: segmentLimit, io: io, log: log)
    }

    /// Opens an existing ledger for writing: checks the authority key, takes the writer lock (waiting up
    /// to `lockTimeout` seconds), cuts off a torn tail left by a crash (logging how many bytes), and
    /// refuses damage anywhere else with the block height and byte offset. Blocks are signed by `signer`
    /// if one is given, else by the key file in the key directory `keys` (default: `KeyDirectory(defaultFor:)`),
    /// decrypted with `passphrase`.
    public static func open(
        at path: String, keys: String? = nil, passphrase: [UInt8]? = nil, signer: (any AuthoritySigner)? = nil,
        lockTimeout: Double = 10,
        segmentLimit: UInt64 = defaultSegmentLimit, io: any FileIO = PosixIO.shared,
        log: @escaping @Sendable (String) -> Void = standardErrorLog
    ) throws(LedgerError) -> FileBlockStore {
        let directory = LedgerDirectory(path)
        let reader = try FileBlockSource(path: path)
        try FileSystem.requireProtectedDirectory(path)
        let key: any AuthoritySigner
        if let signer {
            key = signer
        } else {
            key = try loadAuthorityKey(
                from: KeyDirectory(keys ?? KeyDirectory(defaultFor: path).path), passphrase: passphrase,
                genesis: reader.genesis)
        }
        let lock = try acquireLock(directory, timeout: lockTimeout)
        let state = try recover(reader, io: io, log: log)
        let writer = try BlockBuilder(genesis: reader.genesis, head: state.head, frontier: state.frontier, key: key)
        return FileBlockStore(
            directory: directory, writer: writer, lock: lock, state: state, segmentLimit: segmentLimit, io: io,
            log: log)
    }

    /// The log's last block and the indexes brought up to date with it, a torn tail cut off: what a writer
    /// starts from, on opening and after a failed write.
    private static func recover(
        _ reader: FileBlockSource, io: any FileIO, log: (String) -> Void
    ) throws(LedgerError) -> RecoveredState {
        let state = try RecoveredState(reader, io: io, log: log)
        guard state.head.treeRoot != state.frontier.root || !state.nodeIndexAgrees else { return state }
        // The leaf index (or the node index hashed from it) disagrees with the log: rebuild from the log alone.
        let rebuilt = try RecoveredState(reader, io: io, log: log, rebuild: true)
        guard rebuilt.head.treeRoot == rebuilt.frontier.root else {
            throw LedgerError.damaged(
                height: rebuilt.head.height, file: LedgerDirectory.segmentName(rebuilt.headLocation.segment),
                offset: rebuilt.headLocation.offset, reason: "tree root mismatch")
        }
        return rebuilt
    }

    private init(
        directory: LedgerDirectory, writer: BlockBuilder, lock: File, state: RecoveredState, segmentLimit: UInt64,
        io: any FileIO, log: @escaping @Sendable (String) -> Void
    ) {
        self.io = io
        self.directory = directory
        self.writer = writer
        self.lock = lock
        self.segmentLimit = segmentLimit
        self.log = log
        self.segment = state.segment
        self.segmentFile = state.segmentFile
        self.segmentSize = state.segmentSize
        self.blockIndex = state.blockIndex
        self.leafIndex = state.leafIndex
        self.nodeIndex = state.nodeIndex
        durable = Position(
            writer: writer, segment: state.segment, segmentFile: state.segmentFile, segmentSize: state.segmentSize)
        try? writeFrontier()
    }

    private var position: Position {
        Position(writer: writer, segment: segment, segmentFile: segmentFile, segmentSize: segmentSize)
    }

    // MARK: Appending

    /// Appends one block holding `events` (group commit: the caller decides the batch) and returns its
    /// header once the block is on disk (written and fsync'ed). The block time is `timestamp`, raised to
    /// the previous block's time if the clock went backwards.
    @discardableResult
    public func append(_ events: [HashedEvent], timestamp: Int64) throws(LedgerError) -> BlockHeader {
        let header = try write(events, timestamp: timestamp)
        if let sync = pendingSync() {
            finishSync(sync, Result { () throws(LedgerError) in try sync.run() })
            if let failure { throw failure }
        }
        return header
    }

    /// Writes one block holding `events` after the last one written (into the page cache, not yet durable)
    /// and returns its header; `pendingSync` makes it durable. A failed write drops every block written since
    /// the last durable one, as a failed sync does.
    public func write(_ events: [HashedEvent], timestamp: Int64) throws(LedgerError) -> BlockHeader {
        if failure != nil {
            try recoverFromFailure()
        } else if !indexUsable, unsynced.isEmpty {
            // Only derived data failed: brought up to date once there is room again, and never a reason to fail.
            try? recoverFromFailure()
        }
        // The heads of the 1024-leaf groups this block completes, for nodes.idx.
        var groups: [Digest] = []
        let next = try writer.next(events, timestamp: timestamp) { leaf, before in
            if let group = GroupedTree.group(completedBy: leaf, after: before) { groups.append(group) }
        }
        let header = next.block.header
        let frame = Frame.encode(next.block.encoded)

        do {
            if segmentSize > UInt64(SegmentHeader.size), segmentSize + UInt64(frame.count) > segmentLimit {
                // The blocks before go to disk with the segment they are in, before the next one begins.
                if let sync = pendingSync() {
                    try sync.run()
                    finishSync(sync, .success(()))
                }
                try startSegment(firstHeight: header.height)
            }
            try segmentFile.write(frame, at: segmentSize)
        } catch {
            drop(error)
            throw error
        }
        let location = BlockLocation(segment: segment, offset: segmentSize, length: UInt64(frame.count))
        segmentSize += UInt64(frame.count)
        let previousTreeSize = frontier.size
        writer.advance(to: next)
        unsynced.append(
            Unsynced(
                location: location, header: header, leaves: next.leaves, groups: groups,
                previousTreeSize: previousTreeSize, after: position))
        return header
    }

    /// What makes every block written so far durable (one fdatasync of the segment they are in), to run on
    /// any thread while this one writes on; nil if they all are. Hand it back to `finishSync`.
    public func pendingSync() -> PendingSync? {
        guard let last = unsynced.last else { return nil }
        let file = segmentFile
        return PendingSync(through: last.header.height, generation: drops) { () throws(LedgerError) in try file.sync() }
    }

    /// After `sync` ran: on success its blocks are durable and go into the indexes; on failure every block
    /// written since the last durable one is dropped (the log is cut back there, and the writer with it).
    /// A sync begun before blocks were dropped, or whose blocks are durable already, changes nothing.
    public func finishSync(_ sync: PendingSync, _ outcome: Result<Void, LedgerError>) {
        guard sync.generation == drops else { return }
        switch outcome {
        case .success:
            let done = unsynced.prefix { $0.header.height <= sync.through }
            guard let last = done.last else { return }
            if failure != nil {
                failure = nil
                log("block \(last.header.height) is written: the writer is back after the failed write")
            }
            for block in done {
                durable = block.after
                updateIndexes(
                    block.location, header: block.header, leaves: block.leaves, groups: block.groups,
                    previousTreeSize: block.previousTreeSize)
            }
            unsynced.removeFirst(done.count)
        case .failure(let error):
            drop(error)
        }
    }

    /// Drops every block written since the last durable one after a failed write or sync: the writer goes
    /// back to that block, and the log is cut back to it (now, or by the next write's recovery).
    private func drop(_ error: LedgerError) {
        failed(error)
        drops += 1
        unsynced.removeAll()
        writer = durable.writer
        segment = durable.segment
        segmentFile = durable.segmentFile
        segmentSize = durable.segmentSize
        try? segmentFile.truncate(to: segmentSize)
    }

    /// The authority key the blocks are signed with.
    public var authority: any AuthoritySigner { writer.authority }

    /// A reader of the ledger directory: a new `FileBlockSource` on each call, as a reader counts the segments
    /// when it is opened.
    public func source() throws(LedgerError) -> any BlockSource {
        try FileBlockSource(path: directory.path)
    }

    /// Releases the writer lock now rather than when the value goes away.
    public func close() {
        flock(lock.descriptor, LOCK_UN)
    }

    private func startSegment(firstHeight: UInt64) throws(LedgerError) {
        let number = segment + 1
        let path = directory.segmentPath(number)
        try FileSystem.createFile(
            path, contents: SegmentHeader(number: UInt32(number), firstHeight: firstHeight).encoded, mode: 0o600,
            io: io)
        try io.syncDirectory(directory.path)
        segmentFile = try File.openForWriting(path, io: io)
        segment = number
        segmentSize = UInt64(SegmentHeader.size)
    }

    // MARK: Recovering from a failed write

    /// Notes that a write or sync failed (logged once, not for each retry while the disk stays full): the file
    /// may hold part of a block, or a block no caller was told of, and after a failed sync the page cache may
    /// not match the disk, so nothing is appended until `recoverFromFailure` has put the log back to the last
    /// acknowledged block.
    private func failed(_ error: LedgerError) {
        if failure == nil {
            log("a block could not be written (\(error)); the next write retries from the last block on disk")
        }
        failure = error
    }

    /// After a failed write (a full disk, most often): cuts the log back to the last block a caller was told of
    /// (what the failed append left is removed: part of a block, an unacknowledged block whose sync failed, a
    /// segment it began), then recovers as an open does and checks that the log ends at this writer's head.
    /// Throws, and stays failed, while that cannot be done (the disk is still full); later appends try again.
    /// Also brings the indexes up to date after a failed index update (then the log itself is whole).
    private func recoverFromFailure() throws(LedgerError) {
        let next = directory.segmentPath(segment + 1)
        if FileSystem.kind(next) != .missing {
            try io.remove(next)
            try io.syncDirectory(directory.path)
        }
        try segmentFile.truncate(to: segmentSize)
        try segmentFile.sync()
        let state = try FileBlockStore.recover(try FileBlockSource(path: directory.path), io: io, log: log)
        guard state.head.hash == headHash, state.frontier.root == frontier.root else {
            throw LedgerError.io(
                "after a failed write the log ends at block \(state.head.height), not at this writer's block \(head.height); reopen the ledger"
            )
        }
        segment = state.segment
        segmentFile = state.segmentFile
        segmentSize = state.segmentSize
        durable = position
        blockIndex = state.blockIndex
        leafIndex = state.leafIndex
        nodeIndex = state.nodeIndex
        indexUsable = true
        try? writeFrontier()
    }

    // MARK: Derived indexes

    /// Records the new block in the indexes: its leaves, and the heads of the 1024-leaf `groups` it
    /// completed. They are derived data: a failure here is logged, not reported as a failed append (the
    /// block is already durable), and the next append catches them up from the log (`recoverFromFailure`).
    private func updateIndexes(
        _ location: BlockLocation, header: BlockHeader, leaves: [Digest], groups: [Digest], previousTreeSize: UInt64
    ) {
        guard indexUsable else { return }
        do {
            try blockIndex.write(BlockIndexRecord(location: location, header: header).encoded, at: header.height * 32)
            var writer = ByteWriter(capacity: leaves.count * 32)
            for leaf in leaves { writer.write(leaf) }
            try leafIndex.write(writer.bytes, at: previousTreeSize * 32)
            // Written after the leaves, so nodes.idx never covers more than leaves.idx holds.
            if !groups.isEmpty {
                var records = ByteWriter(capacity: groups.count * 32)
                for group in groups { records.write(group) }
                try nodeIndex.write(records.bytes, at: previousTreeSize / NodeIndex.groupSize * 32)
            }
            try writeFrontier()
        } catch {
            indexUsable = false
            log("index update failed (\(error)); the indexes are caught up from the log before the next block")
        }
    }

    private func writeFrontier() throws(LedgerError) {
        var writer = ByteWriter(capacity: 8 + 32 * frontier.subtrees.count)
        writer.write(frontier.size)
        for subtree in frontier.subtrees { writer.write(subtree) }
        let file = try File.openForWriting(directory.frontierPath, create: true, io: io)
        try file.write(writer.bytes, at: 0)
        try file.truncate(to: UInt64(writer.bytes.count))
    }

    // MARK: Helpers

    /// The file store's default `AuthoritySigner`: the authority key file in the key directory `keys`,
    /// refused unless only its owner, the user running this process, can read or replace it (FORMAT.md
    /// §5.7), and unless it is the genesis key.
    public static func loadAuthorityKey(
        from keys: KeyDirectory, passphrase: [UInt8]?, genesis: Genesis
    )
        throws(LedgerError) -> Ed25519PrivateKey
    {
        let path = keys.privateKeyPath
        guard FileSystem.kind(path) == .file else {
            throw LedgerError.key(
                "authority key \(path) is missing: this copy of the ledger can be read and verified, not written")
        }
        try FileSystem.requirePrivateDirectory(keys.path)
        let file = try FileSystem.openPrivate(path, what: "authority key")
        let pem = String(decoding: try file.read(at: 0, count: Int(try file.status().st_size)), as: UTF8.self)
        let key: Ed25519PrivateKey
        do { key = try Ed25519PrivateKey(pem: pem, passphrase: passphrase) } catch {
            if error.kind == .passphraseRequired {
                throw LedgerError.passphraseRequired("authority key \(path): \(error.message)")
            }
            throw LedgerError.key("authority key \(path): \(error.message)")
        }
        guard key.publicKey.rawRepresentation == genesis.authorityKey else {
            throw LedgerError.key("authority key \(path) is not the key this ledger was created with")
        }
        return key
    }

    private static func acquireLock(_ directory: LedgerDirectory, timeout: Double) throws(LedgerError) -> File {
        let lock = try File.openForWriting(directory.lockPath, create: true, io: PosixIO.shared)
        var waited = 0.0
        while flock(lock.descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else {
                throw LedgerError.system("locking \(directory.lockPath)")
            }
            guard waited < timeout else {
                let text = String(decoding: (try? lock.read(at: 0, count: 32)) ?? [], as: UTF8.self)
                throw LedgerError.busy(pid: Int32(text.filter { $0.isNumber }))
            }
            usleep(10_000)
            waited += 0.01
        }
        try lock.truncate(to: 0)
        try lock.write(Array("\(getpid())\n".utf8), at: 0)
        return lock
    }

    /// Refuses a target path for a new ledger that exists and is not an empty directory, saying what it is.
    static func requireFreeTarget(_ path: String, what: String) throws(LedgerError) {
        switch FileSystem.kind(path) {
        case .missing: break
        case .directory:
            guard try FileSystem.list(path).isEmpty else {
                throw LedgerError.invalidRequest("\(path) \(what) and is not empty")
            }
        case .file, .other: throw LedgerError.invalidRequest("\(path) \(what) and is not a directory")
        }
    }

    static func removeStaging(_ staging: LedgerDirectory) {
        for name in (try? FileSystem.list(staging.path)) ?? [] { unlink(staging.path + "/" + name) }
        rmdir(staging.path)
    }

    static func parentDirectory(of path: String) -> String {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        guard let slash = trimmed.lastIndex(of: "/") else { return "." }
        return slash == trimmed.startIndex ? "/" : String(trimmed[..<slash])
    }
}

/// Writes one line to standard error: the default destination of the store's log lines.
@Sendable public func standardErrorLog(_ line: String) {
    let text = line + "\n"
    _ = text.withCString { write(2, $0, strlen($0)) }
}
