import Foundation
public import Ledger
public import LedgerCrypto
import NIOCore
import PostgresNIO

/// A ledger's writer in PostgreSQL, its `BlockAppender`: any number of processes may write one chain. The service
/// writes through `write(deciding:)`: one transaction locks the chain's head row (`vote_ledger`), takes in the
/// blocks the others appended, has the block decided against that head, and writes it with its tree groups
/// and voter-roll changes, committed with `synchronous_commit = on` before it returns: a block is durable, with
/// everything it changed, or not there at all. A plain `append` (no roll changes) instead loses the race to a
/// writer that moved the head first (`LedgerError.headMoved`, nothing written).
public final class PostgresBlockStore: BlockAppender {
    private let connections: PostgresConnections
    private var writer: BlockBuilder
    private var closed = false
    /// The session of the decision in progress (`write(deciding:)`), which holds the chain's head row locked:
    /// where `disagreeing` reads the roll.
    private var deciding: Session?
    /// How many times a transaction the database aborted as a serialization failure or deadlock is retried.
    private static let retries = 3

    private init(connections: PostgresConnections, writer: BlockBuilder) {
        self.connections = connections
        self.writer = writer
    }

    deinit { close() }

    // MARK: Creating and opening

    /// Creates a ledger named `name`, signed by `authority`, in the database at `location`: the schema (in a
    /// database that has none), the genesis block and, if `firstEvents` is not empty, block 1 holding them with
    /// their `roll` changes, all in one transaction. Refuses a database that holds a ledger already. Its
    /// connections run on `database`'s loop, if given.
    public static func create(
        _ location: PostgresLocation, name: String, authority: any AuthoritySigner, ledgerID: LedgerID,
        firstEvents: [LedgerEvent], timestamp: Int64, roll: [RollChange] = [], on database: PostgresDatabase? = nil
    ) throws(LedgerError) -> PostgresBlockStore {
        guard (1...Genesis.maxNameBytes).contains(name.utf8.count) else {
            throw LedgerError.invalidRequest("ledger name must be 1-\(Genesis.maxNameBytes) bytes of UTF-8")
        }
        guard timestamp >= 0 else { throw LedgerError.invalidRequest("creation time is before 1970") }
        let genesis = Genesis(
            ledgerID: ledgerID, createdAt: timestamp, authorityKey: authority.publicKey.rawRepresentation, name: name)
        let (block, start) = try BlockBuilder.start(genesis, key: authority)
        var writer = start
        let first = try firstEvents.isEmpty ? nil : Built(writer, firstEvents.map(HashedEvent.init), timestamp)
        let connections = try PostgresConnections(location, on: database)
        try connections.with { (session) throws(LedgerError) in
            try session.run("BEGIN", "cannot start a transaction")
            try PostgresSchema.migrate(session, creating: true)
            let held = try session.run("SELECT count(*) FROM vote_ledger", "cannot read the ledger")
            guard try PostgresSchema.decode(held, Int64.self, "the ledger") == 0 else {
                throw LedgerError.invalidRequest("the database \(location) holds a ledger already")
            }
            let genesisEvent = ByteBuffer(bytes: genesis.event.encoded)
            let hash = ByteBuffer(bytes: block.header.hash.bytes)
            try session.run(
                "INSERT INTO vote_ledger (genesis, height, hash) VALUES (\(genesisEvent), 0, \(hash))",
                "cannot create the ledger")
            let (header, events) = rows(of: block)
            let leaves = ByteBuffer(bytes: block.events[0].leafHash.bytes)
            try session.run(
                """
                INSERT INTO vote_blocks (height, header, events, hash, first_event, leaves)
                VALUES (0, \(header), \(events), \(hash), 0, \(leaves))
                """, "cannot write the genesis block")
            if let first {
                guard try write(session, first, after: writer, roll: try collapse(roll, height: 1)) else {
                    throw LedgerError.io("the database \(location) changed while the ledger was created")
                }
            }
            try session.run("COMMIT", "cannot commit the new ledger")
        }
        if let first { writer.advance(to: first.next) }
        return PostgresBlockStore(connections: connections, writer: writer)
    }

    /// Opens the ledger at `location` for writing, signing with `signer`, which must be the genesis key.
    /// Migrates an older schema; refuses a database without a ledger or written by a newer `vote`. Its
    /// connections run on `database`'s loop, if given.
    public static func open(
        _ location: PostgresLocation, signer: any AuthoritySigner, on database: PostgresDatabase? = nil
    ) throws(LedgerError)
        -> PostgresBlockStore
    {
        let connections = try PostgresConnections(location, on: database)
        try connections.with { (session) throws(LedgerError) in
            try session.run("BEGIN", "cannot start a transaction")
            try PostgresSchema.migrate(session, creating: false)
            try session.run("COMMIT", "cannot commit the schema")
        }
        let source = try PostgresBlockSource(connections: connections)
        let head = try source.lastHeader()
        // From the group heads, else (a row of vote_merkle_groups was changed) from the leaves alone.
        let frontier = try connections.with { (session) throws(LedgerError) in
            let fast = try Self.frontier(session, size: head.treeSize, groups: true)
            return fast.root == head.treeRoot ? fast : try Self.frontier(session, size: head.treeSize, groups: false)
        }
        guard frontier.root == head.treeRoot else {
            throw BlockPlace(file: "vote_blocks", offset: head.height, length: 0).damage(
                height: head.height, "the stored leaves do not give the block's tree root")
        }
        let writer = try BlockBuilder(genesis: source.genesis, head: head, frontier: frontier, key: signer)
        return PostgresBlockStore(connections: connections, writer: writer)
    }

    /// The tree frontier after the first `size` leaves: the head of each complete subtree, from the group heads
    /// and leaves (`GroupedTree`), not from every leaf.
    private static func frontier(_ session: Session, size: UInt64, groups: Bool) throws(LedgerError) -> MerkleFrontier {
        var subtrees: [Digest] = []
        var start: UInt64 = 0
        for bit in (0..<64).reversed() where size & (1 << UInt64(bit)) != 0 {
            let end = start + (1 << UInt64(bit))
            subtrees.append(try PostgresBlockSource.root(session, start..<end, groups: groups))
            start = end
        }
        guard let frontier = MerkleFrontier(size: size, subtrees: subtrees) else {
            throw LedgerError.io("the tree of \(size) leaves does not form a frontier")
        }
        return frontier
    }

    // MARK: The writer's state

    /// The ledger's identity, from its genesis block.
    public var genesis: Genesis { writer.genesis }
    /// Header of the last block this writer knows of.
    public var head: BlockHeader { writer.head }
    /// Hash of the last block's header.
    public var headHash: Digest { writer.headHash }
    /// The tree frontier after the last block.
    public var frontier: MerkleFrontier { writer.frontier }
    /// The store keeps and enforces the voter roll.
    public var keepsRoll: Bool { true }

    // MARK: Appending

    /// A block built and signed, with the heads of the tree groups it completes.
    private struct Built {
        let next: BlockBuilder.Next
        let groups: [(index: UInt64, head: Digest)]

        init(_ writer: BlockBuilder, _ events: [HashedEvent], _ timestamp: Int64) throws(LedgerError) {
            var groups: [(index: UInt64, head: Digest)] = []
            next = try writer.next(events, timestamp: timestamp) { leaf, before in
                if let head = GroupedTree.group(completedBy: leaf, after: before) {
                    groups.append((before.size / GroupedTree.groupSize, head))
                }
            }
            self.groups = groups
        }
    }

    /// Appends one block holding `events` and the staged roll changes, in one transaction, and returns its header
    /// once committed. Throws `.headMoved` (nothing written) if another writer appended first.
    @discardableResult
    public func append(_ events: [HashedEvent], timestamp: Int64) throws(LedgerError) -> BlockHeader {
        guard !closed else { throw LedgerError.invalidRequest("this writer is closed") }
        let built = try Built(writer, events, timestamp)
        let changes = Changes()
        var attempts = 0
        while try !commit(built, changes, attempts: attempts) { attempts += 1 }
        writer.advance(to: built.next)
        return built.next.block.header
    }

    /// How one attempt at a block's transaction ended, short of a failure.
    private enum Outcome {
        case committed
        /// `COMMIT` failed (the connection dropped, the server was told to shut down): read the block back to know.
        case unknown(LedgerError)
        /// Another writer appended first; rolled back.
        case moved
        /// The database aborted the transaction (serialization failure, deadlock); rolled back: try again.
        case retry(LedgerError)
    }

    /// One attempt at writing `built`: head lock and check, block, groups, roll, head, commit. Returns whether
    /// it committed, or is worth retrying.
    private func commit(_ built: Built, _ changes: Changes, attempts: Int) throws(LedgerError) -> Bool {
        let height = built.next.block.header.height
        let outcome: Outcome = try connections.with { (session) throws(LedgerError) in
            do throws(LedgerError) {
                // Read committed whatever the server's default: the head row's UPDATE then waits for another
                // writer's transaction and re-checks its WHERE against what that one committed (no match: the
                // head moved), where a stricter level would abort it as a serialization failure instead.
                try session.run(
                    "BEGIN ISOLATION LEVEL READ COMMITTED", "cannot start the transaction of block \(height)")
                guard try Self.write(session, built, after: writer, roll: changes) else {
                    try session.run("ROLLBACK", "cannot roll back block \(height)")
                    return .moved
                }
            } catch {
                guard let state = session.refusedState, state == "40001" || state == "40P01" else { throw error }
                try session.run("ROLLBACK", "cannot roll back block \(height)")
                return .retry(error)
            }
            do throws(LedgerError) {
                try session.run("COMMIT", "cannot commit block \(height)")
                return .committed
            } catch {
                return .unknown(error)
            }
        }
        switch outcome {
        case .committed: return true
        case .unknown(let error): try resolveCommit(built, failed: error)
        case .moved: throw LedgerError.headMoved("another writer appended block \(height) first")
        case .retry(let error):
            guard attempts < Self.retries else { throw error }
            return false
        }
        return true
    }

    /// `COMMIT` failed: the transaction may have committed all the same (the connection dropped after the server
    /// committed, or a server told to stop while it waited for a synchronous standby had committed locally), so
    /// the block is read back before anyone is answered. Ours (same hash) is committed; another block there means
    /// another writer won; none means nothing was written, for the reason COMMIT gave (`failed`).
    private func resolveCommit(_ built: Built, failed: LedgerError) throws(LedgerError) {
        let height = built.next.block.header.height
        // The database may be restarting: its answer is waited for (the block's callers wait, nothing else can be
        // written meanwhile) rather than a caller told "not recorded" about a vote that was.
        var waited = 0.0
        var stored: ByteBuffer?
        while true {
            do throws(LedgerError) {
                stored = try connections.with { (session) throws(LedgerError) in
                    let rows = try session.run(
                        "SELECT hash FROM vote_blocks WHERE height = \(Int64(height))",
                        "failed to commit block \(height), and cannot read back whether it did: \(failed)")
                    return try PostgresSchema.decode(rows, ByteBuffer.self, "block \(height)")
                }
                break
            } catch {
                guard waited < Self.commitResolutionLimit else { throw error }
                Thread.sleep(forTimeInterval: 0.25)
                waited += 0.25
            }
        }
        guard let stored else { throw failed }
        guard Array(stored.readableBytesView) == built.next.hash.bytes else {
            throw LedgerError.headMoved("another writer appended block \(height) first")
        }
    }

    /// How long (seconds) a commit whose outcome is unknown is read back for before the block fails unresolved.
    static let commitResolutionLimit = 60.0

    /// Writes `built` after `writer`'s head in one statement (one round trip to the database): moves the head row
    /// if it is still `writer`'s head and, only then, inserts the block, the heads of the tree groups it completes
    /// and its roll `changes`. False, with nothing written, if the head is not `writer`'s (another writer
    /// appended). Throws, for the caller to roll back, if the roll refuses a change: a new key is there already or
    /// an entry is not what its change expects.
    private static func write(
        _ session: Session, _ built: Built, after writer: BlockBuilder, roll changes: Changes
    ) throws(LedgerError) -> Bool {
        let header = built.next.block.header
        let (headerBytes, events) = rows(of: built.next.block)
        var leaves = ByteBuffer()
        for leaf in built.next.leaves { leaves.writeBytes(leaf.bytes) }
        let height = Int64(header.height)
        let hash = ByteBuffer(bytes: built.next.hash.bytes)
        let firstEvent = Int64(header.treeSize) - Int64(header.eventCount)
        let groupIndexes = built.groups.map { Int64($0.index) }
        let groupHeads = built.groups.map { ByteBuffer(bytes: $0.head.bytes) }
        let new = RollColumns(changes.new)
        let moved = RollColumns(changes.transitions)
        // Every insert and update reads `tip`, so none writes a row unless the head moved to this block; the roll's
        // new keys and transitions never touch one key twice (`collapse`).
        let result = try session.run(
            """
            WITH tip AS (
                UPDATE vote_ledger SET height = \(height), hash = \(hash)
                WHERE height = \(Int64(writer.head.height)) AND hash = \(ByteBuffer(bytes: writer.headHash.bytes))
                RETURNING 1
            ), block AS (
                INSERT INTO vote_blocks (height, header, events, hash, first_event, leaves)
                SELECT \(height), \(headerBytes), \(events), \(hash), \(firstEvent), \(leaves) FROM tip
            ), tree AS (
                INSERT INTO vote_merkle_groups (group_index, head)
                SELECT g.group_index, g.head FROM unnest(\(groupIndexes), \(groupHeads)) AS g(group_index, head), tip
            ), new_keys AS (
                INSERT INTO vote_roll (place, kind, digest, entry)
                SELECT c.place, c.kind, c.digest, c.entry
                FROM unnest(\(new.places), \(new.kinds), \(new.digests), \(new.entries)) AS c(place, kind, digest, entry), tip
                ON CONFLICT DO NOTHING RETURNING place, kind, digest
            ), changed AS (
                UPDATE vote_roll AS r SET entry = c.entry
                FROM unnest(\(moved.places), \(moved.kinds), \(moved.digests), \(moved.entries), \(moved.previous))
                    AS c(place, kind, digest, entry, previous), tip
                WHERE r.place = c.place AND r.kind = c.kind AND r.digest = c.digest AND r.entry = c.previous
                RETURNING r.place, r.kind, r.digest
            )
            SELECT 0::smallint, 0, 0::smallint, ''::bytea FROM tip
            UNION ALL SELECT 1::smallint, place, kind, digest FROM new_keys
            UNION ALL SELECT 2::smallint, place, kind, digest FROM changed
            """, "cannot write block \(height)")
        var headMoved = false
        var written: [Set<[UInt8]>] = [[], []]
        for row in result.rows {
            guard let (part, place, kind, digest) = try? row.decode((Int16, Int32, Int16, ByteBuffer).self) else {
                throw LedgerError.io("writing block \(height) answered a row that does not decode")
            }
            if part == 0 {
                headMoved = true
            } else {
                written[Int(part) - 1].insert(RollColumns.key(place, kind, Array(digest.readableBytesView)))
            }
        }
        guard headMoved else { return false }
        for (part, (changes, why)) in [
            (changes.new, "exists though the chain gives none"),
            (changes.transitions, "is not the entry the chain gives"),
        ]
        .enumerated() where written[part].count != changes.count {
            let missing = changes.first { change in
                !written[part].contains(
                    RollColumns.key(
                        Int32(bitPattern: change.place), Int16(truncatingIfNeeded: change.kind), change.digest.bytes))
            }
            throw disagreeing(missing ?? changes[0], why)
        }
        return true
    }

    /// A block's two rows of `vote_blocks`: its header with the signature, and its events.
    private static func rows(of block: Block) -> (header: ByteBuffer, events: ByteBuffer) {
        let bytes = block.encoded
        let split = LedgerFormat.headerSize + LedgerFormat.signatureSize
        return (ByteBuffer(bytes: bytes[..<split]), ByteBuffer(bytes: bytes[split...]))
    }

    // MARK: The voter roll

    /// A block's roll changes, one per key: new keys (previous 0) and transitions (previous → entry).
    struct Changes {
        var new: [RollChange] = []
        var transitions: [RollChange] = []
    }

    /// Collapses `changes` to one per key, in order (a key authorised then voted in one block is new, voted):
    /// each change must start from what the one before it in the block left.
    static func collapse(_ changes: [RollChange], height: UInt64) throws(LedgerError) -> Changes {
        struct Key: Hashable {
            let digest: Digest
            let place: UInt32
            let kind: UInt32
        }
        var order: [Key] = []
        var merged: [Key: RollChange] = [:]
        for change in changes {
            let key = Key(digest: change.digest, place: change.place, kind: change.kind)
            if var before = merged[key] {
                guard change.previous == before.entry else {
                    throw refused(change, height, "changed twice out of order")
                }
                before.entry = change.entry
                merged[key] = before
            } else {
                order.append(key)
                merged[key] = change
            }
        }
        var collapsed = Changes()
        for key in order {
            let change = merged[key]!
            if change.previous == 0 { collapsed.new.append(change) } else { collapsed.transitions.append(change) }
        }
        return collapsed
    }

    /// Roll changes as the columns of `vote_roll`, to bind as arrays.
    struct RollColumns {
        let places: [Int32]
        let kinds: [Int16]
        let digests: [ByteBuffer]
        let entries: [Int16]
        let previous: [Int16]

        init(_ changes: [RollChange]) {
            places = changes.map { Int32(bitPattern: $0.place) }
            kinds = changes.map { Int16(truncatingIfNeeded: $0.kind) }
            digests = changes.map { ByteBuffer(bytes: $0.digest.bytes) }
            entries = changes.map { Int16(truncatingIfNeeded: $0.entry) }
            previous = changes.map { Int16(truncatingIfNeeded: $0.previous) }
        }

        /// A roll key as one value: place, kind and digest.
        static func key(_ place: Int32, _ kind: Int16, _ digest: [UInt8]) -> [UInt8] {
            withUnsafeBytes(of: place.bigEndian, Array.init) + [UInt8(kind & 0xFF)] + digest
        }
    }

    /// What a roll key of `change`'s kind is, in words.
    private static func kind(of change: RollChange) -> String {
        let kinds: [UInt32: String] = [
            1: "voter tag", 2: "token hash", 3: "binding", 4: "issuance code", 5: "anonymous credential",
        ]
        return kinds[change.kind] ?? "key of kind \(change.kind)"
    }

    /// The roll refused `change` of block `height` because it `why`: the writer's own changes out of order.
    private static func refused(_ change: RollChange, _ height: UInt64, _ why: String) -> LedgerError {
        .io("the voter roll refused block \(height): a \(kind(of: change)) in place \(change.place) \(why)")
    }

    /// The row of `change`'s key `why` (exists, or holds another entry, where the chain says otherwise): the writer decided from
    /// the chain, so the row was changed outside the ledger.
    private static func disagreeing(_ change: RollChange, _ why: String) -> LedgerError {
        .rollDisagrees(
            key: change,
            "the row of vote_roll for a \(kind(of: change)) in place \(change.place) \(why): it was changed outside the ledger, and this command is refused (vote verify names the row)"
        )
    }

    // MARK: Other writers' blocks

    /// The blocks other writers appended after this writer's head, checked (each extends the one before and is
    /// signed by the genesis key) and taken in: `head`, `headHash` and `frontier` move past them.
    public func catchUp() throws(LedgerError) -> [EncodedBlock] {
        guard !closed else { throw LedgerError.invalidRequest("this writer is closed") }
        return try connections.with { (session) throws(LedgerError) in try takeIn(session) }
    }

    /// Reads the blocks above this writer's head on `session` (within its transaction, if one is open), checks
    /// each (it extends the one before and is signed by the genesis key) and moves the writer past them.
    private func takeIn(_ session: Session) throws(LedgerError) -> [EncodedBlock] {
        var taken: [EncodedBlock] = []
        while true {
            let page = try PostgresBlockSource.blocks(
                session, from: writer.head.height + 1, limit: PostgresBlockSource.page)
            for stored in page {
                let block = try stored.decoded()
                guard stored.height == block.header.height else {
                    throw stored.place.damage(height: stored.height, "the row holds block \(block.header.height)")
                }
                // The same checks a shared memory writer makes: height, link, tree head, the authority's signature.
                try writer.advance(past: block, at: stored.place)
                taken.append(block)
            }
            if page.count < PostgresBlockSource.page { break }
        }
        return taken
    }

    // MARK: Deciding under the head

    /// Other servers append to this ledger too.
    public var othersAppend: Bool { true }

    /// Writes the next block as `decide` makes it, in one transaction that holds the chain's head row from the
    /// catch-up to the commit: the head row is locked (`SELECT … FOR UPDATE`, waiting for another writer's
    /// block to commit), the blocks others appended since this writer's head are read and taken in (only if the
    /// head moved), `decide` sees them and decides against the head the block will extend, and the block, its
    /// tree groups and its roll changes are written in one statement and committed (`synchronous_commit = on`)
    /// before this returns: four round trips to the database when no other writer appended (stop 31: seven
    /// before, 12,250 votes/s on one server beside the peer's 8,323). No other writer can append meanwhile, so
    /// the decision never has to be made again. Nothing is written if `decide` throws (its error is rethrown) or
    /// decides no events.
    public func write(deciding decide: (_ missed: [EncodedBlock]) throws -> BlockDecision) throws -> BlockHeader? {
        guard !closed else { throw LedgerError.invalidRequest("this writer is closed") }
        var decideFailure: (any Error)?
        var commitFailure: LedgerError?
        let built: Built? = try connections.with { (session) throws(LedgerError) -> Built? in
            try session.run("BEGIN ISOLATION LEVEL READ COMMITTED", "cannot start a block's transaction")
            let locked = try session.run(
                "SELECT height, hash FROM vote_ledger FOR UPDATE", "cannot lock the chain's head")
            guard let row = locked.rows.first, let (tip, tipHash) = try? row.decode((Int64, ByteBuffer).self) else {
                throw LedgerError.io("the chain's head row is missing or does not decode")
            }
            let moved = tip != Int64(writer.head.height) || Array(tipHash.readableBytesView) != writer.headHash.bytes
            let missed = moved ? try takeIn(session) : []
            let decision: BlockDecision
            deciding = session
            defer { deciding = nil }
            do { decision = try decide(missed) } catch {
                decideFailure = error
                try session.run("ROLLBACK", "cannot roll back a block")
                return nil
            }
            guard !decision.events.isEmpty else {
                try session.run("ROLLBACK", "cannot roll back a block")
                return nil
            }
            let built = try Built(writer, decision.events, decision.timestamp)
            let height = built.next.block.header.height
            let changes = try Self.collapse(decision.roll, height: height)
            guard try Self.write(session, built, after: writer, roll: changes) else {
                throw LedgerError.io("the chain's head moved under its lock before block \(height)")
            }
            do throws(LedgerError) {
                try session.run("COMMIT", "cannot commit block \(height)")
            } catch {
                commitFailure = error
            }
            return built
        }
        if let decideFailure { throw decideFailure }
        guard let built else { return nil }
        if let commitFailure { try resolveCommit(built, failed: commitFailure) }
        writer.advance(to: built.next)
        return built.next.block.header
    }

    /// Reads the rows of `changes`' keys (on the decision's session, under the head lock) and returns the changes
    /// whose row is not their `previous` (0: no row).
    public func disagreeing(_ changes: [RollChange]) throws -> [RollChange] {
        guard !changes.isEmpty else { return [] }
        // A key changed twice in one block (authorised, then voted) is checked against what it was before the block.
        var seen: Set<[UInt8]> = []
        let changes = changes.filter {
            seen.insert(
                RollColumns.key(Int32(bitPattern: $0.place), Int16(truncatingIfNeeded: $0.kind), $0.digest.bytes)
            ).inserted
        }
        let keys = RollColumns(changes)
        let read = { (session: Session) throws(LedgerError) -> [RollChange] in
            let rows = try session.run(
                """
                SELECT r.place, r.kind, r.digest, r.entry FROM vote_roll AS r
                JOIN unnest(\(keys.places), \(keys.kinds), \(keys.digests)) AS k(place, kind, digest)
                ON r.place = k.place AND r.kind = k.kind AND r.digest = k.digest
                """, "cannot read the voter roll")
            var stored: [[UInt8]: Int16] = [:]
            for row in rows.rows {
                guard let (place, kind, digest, entry) = try? row.decode((Int32, Int16, ByteBuffer, Int16).self) else {
                    throw LedgerError.io("a row of vote_roll does not decode")
                }
                stored[RollColumns.key(place, kind, Array(digest.readableBytesView))] = entry
            }
            return changes.filter { change in
                let key = RollColumns.key(
                    Int32(bitPattern: change.place), Int16(truncatingIfNeeded: change.kind), change.digest.bytes)
                return stored[key].map { Int($0) } != (change.previous == 0 ? nil : Int(change.previous))
            }
        }
        if let deciding { return try read(deciding) }
        return try connections.with(read)
    }

    // MARK: The rest of the seam

    /// The authority key the blocks are signed with.
    public var authority: any AuthoritySigner { writer.authority }

    /// A reader of the ledger, sharing this writer's connections.
    public func source() throws(LedgerError) -> any BlockSource {
        try PostgresBlockSource(connections: connections)
    }

    /// Stops writing; the connections close once every reader from `source()` is gone too.
    public func close() { closed = true }
}
