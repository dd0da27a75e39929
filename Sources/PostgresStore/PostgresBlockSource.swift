public import Ledger
public import LedgerCrypto
import NIOCore
import PostgresNIO

/// A reader of a ledger in PostgreSQL: every operation is a query, so it sees what any writer (any process)
/// has committed, and it writes nothing and takes no lock, so it also reads a read-only standby (a streaming
/// replica). Thread-safe: each call takes a connection of its own from the pool.
public final class PostgresBlockSource: BlockSource, DerivedTables, Sendable {
    /// The ledger's identity, from its genesis block.
    public let genesis: Genesis
    let connections: PostgresConnections
    /// Blocks a scan reads per query.
    static let page = 256

    /// Opens the ledger at `location` for reading (on `database`'s connections, if given); refuses a database
    /// that holds none, or one a newer `vote` wrote.
    public convenience init(_ location: PostgresLocation, on database: PostgresDatabase? = nil) throws(LedgerError) {
        try self.init(connections: try PostgresConnections(location, on: database))
    }

    init(connections: PostgresConnections) throws(LedgerError) {
        self.connections = connections
        genesis = try connections.with { (session) throws(LedgerError) in
            try PostgresSchema.check(session)
            let rows = try session.run("SELECT genesis FROM vote_ledger", "cannot read the ledger")
            guard let bytes = try PostgresSchema.decode(rows, ByteBuffer.self, "the genesis") else {
                throw PostgresSchema.notALedger(connections.location)
            }
            return try Self.genesis(Array(bytes.readableBytesView), connections.location)
        }
    }

    static func genesis(_ bytes: [UInt8], _ location: PostgresLocation) throws(LedgerError) -> Genesis {
        do {
            guard let event = LedgerEvent(encoded: bytes) else { throw DecodeError("too short") }
            return try Genesis(decoding: event)
        } catch {
            throw LedgerError.damaged(
                height: 0, file: "vote_ledger", offset: 0, reason: "the genesis does not decode: \(error)")
        }
    }

    // MARK: Blocks

    /// The header of the last block.
    public func lastBlock() throws -> BlockHeader { try lastHeader() }

    func lastHeader() throws(LedgerError) -> BlockHeader {
        try connections.with { (session) throws(LedgerError) in
            let rows = try session.run(
                "SELECT height, header FROM vote_blocks ORDER BY height DESC LIMIT 1", "cannot read the last block")
            guard let row = rows.rows.first else { throw PostgresSchema.notALedger(connections.location) }
            return try Self.header(row)
        }
    }

    /// The header of block `height`, or `nil` if the ledger does not hold it.
    public func header(at height: UInt64) throws -> BlockHeader? {
        try connections.with { (session) throws(LedgerError) in
            let rows = try session.run(
                "SELECT height, header FROM vote_blocks WHERE height = \(Int64(clamping: height))",
                "cannot read block \(height)")
            return try rows.rows.first.map(Self.header)
        }
    }

    /// Block `height`, or `nil` if the ledger does not hold it.
    public func block(at height: UInt64) throws -> EncodedBlock? {
        let stored = try blocks(from: height, limit: 1).first
        return try stored.map { try $0.decoded() }
    }

    /// Streams every block from height `first` on, in order, a page at a time.
    public func forEachBlock(from first: UInt64, _ body: (EncodedBlock) throws -> Void) throws {
        _ = try scanBlocks(from: first) { _, _ in
            true
        } eachStored: {
            try body(try $0.decoded())
        }
    }

    /// Streams every block from height `first` on, in order, as stored (`header ‖ events`), each placed at
    /// table `vote_blocks`, offset its height.
    public func scanBlocks(
        from first: UInt64, _ body: (_ block: [UInt8], _ place: BlockPlace) throws -> Bool
    ) throws -> StoredScan {
        try scanBlocks(from: first, body) { _ in }
    }

    private func scanBlocks(
        from first: UInt64, _ body: (_ block: [UInt8], _ place: BlockPlace) throws -> Bool,
        eachStored: (StoredBlock) throws -> Void
    ) throws -> StoredScan {
        var scan = StoredScan()
        var next = first
        while true {
            let page = try blocks(from: next, limit: Self.page)
            for block in page {
                guard block.height == next else {
                    throw block.place.damage(height: next, "block \(next) is missing (found \(block.height))")
                }
                scan.bytes += block.place.length
                try eachStored(block)
                guard try body(block.bytes, block.place) else { return scan }
                next += 1
            }
            if page.count < Self.page { return scan }
        }
    }

    /// A block as a row of `vote_blocks` holds it.
    struct StoredBlock {
        let height: UInt64
        let bytes: [UInt8]
        var place: BlockPlace { BlockPlace(file: "vote_blocks", offset: height, length: UInt64(bytes.count)) }

        func decoded() throws(LedgerError) -> EncodedBlock {
            do { return try EncodedBlock(decoding: bytes) } catch {
                throw place.damage(height: height, "the block does not decode: \(error.message)")
            }
        }
    }

    /// Up to `limit` stored blocks from height `first` on, in order.
    func blocks(from first: UInt64, limit: Int) throws(LedgerError) -> [StoredBlock] {
        try connections.with { (session) throws(LedgerError) in
            try Self.blocks(session, from: first, limit: limit)
        }
    }

    static func blocks(_ session: Session, from first: UInt64, limit: Int) throws(LedgerError) -> [StoredBlock] {
        let rows = try session.run(
            """
            SELECT height, header, events FROM vote_blocks WHERE height >= \(Int64(clamping: first))
            ORDER BY height LIMIT \(limit)
            """, "cannot read the blocks from \(first)")
        var blocks: [StoredBlock] = []
        for row in rows.rows {
            do {
                let (height, header, events) = try row.decode((Int64, ByteBuffer, ByteBuffer).self)
                blocks.append(
                    StoredBlock(
                        height: UInt64(height), bytes: Array(header.readableBytesView) + Array(events.readableBytesView)
                    ))
            } catch {
                throw LedgerError.io("a row of vote_blocks does not decode: \(error)")
            }
        }
        return blocks
    }

    /// The header in a row of (height, header).
    private static func header(_ row: PostgresRow) throws(LedgerError) -> BlockHeader {
        let height: Int64
        let bytes: [UInt8]
        do {
            let (stored, header) = try row.decode((Int64, ByteBuffer).self)
            height = stored
            bytes = Array(header.readableBytesView)
        } catch {
            throw LedgerError.io("a row of vote_blocks does not decode: \(error)")
        }
        do {
            return try ByteReader.reading(bytes) { (reader) throws(DecodeError) in try BlockHeader(decoding: &reader) }
        } catch {
            throw BlockPlace(file: "vote_blocks", offset: UInt64(height), length: UInt64(bytes.count)).damage(
                height: UInt64(height), "the header does not decode: \(error.message)")
        }
    }

    /// Height of the block holding event `index`, by the blocks' first events; nil past the last event.
    public func height(ofEvent index: UInt64) throws -> UInt64? {
        try connections.with { (session) throws(LedgerError) in
            let rows = try session.run(
                """
                SELECT height, first_event + length(leaves) / 32 FROM vote_blocks
                WHERE first_event <= \(Int64(clamping: index)) ORDER BY first_event DESC LIMIT 1
                """, "cannot find event \(index)")
            guard let row = rows.rows.first else { return nil }
            do {
                let (height, end) = try row.decode((Int64, Int64).self)
                return index < UInt64(end) ? UInt64(height) : nil
            } catch {
                throw LedgerError.io("a row of vote_blocks does not decode: \(error)")
            }
        }
    }

    // MARK: Proofs

    /// Every leaf hash of the first `treeSize` events; refused unless their tree head is `root`.
    public func leafHashes(treeSize: UInt64, root: Digest) throws -> [Digest] {
        let leaves = try connections.with { (session) throws(LedgerError) in
            try Self.leaves(session, 0..<treeSize)
        }
        guard Merkle.root(0..<treeSize, leaf: { leaves[Int($0)] }) == root else {
            throw LedgerError.invalidRequest("the tree of the first \(treeSize) events does not have that head")
        }
        return leaves
    }

    /// The inclusion proof (RFC 9162 PATH) of event `index` in the tree of the first `treeSize` events, from the
    /// group heads and leaves, checked against `root`.
    public func inclusionProof(index: UInt64, treeSize: UInt64, root: Digest) throws -> [Digest] {
        guard index < treeSize else {
            throw LedgerError.invalidRequest("event \(index) is not in a tree of \(treeSize) events")
        }
        return try connections.with { (session) throws(LedgerError) in
            // A proof asks for a subtree head a level: read at once what those heads need, not a query each.
            let known = try TreeReads(session, proofOf: index, treeSize: treeSize)
            for groups in [true, false] {
                let subtree = { (range: Range<UInt64>) throws(LedgerError) in
                    try Self.root(session, range, groups: groups, known: groups ? known : nil)
                }
                let proof = try typed { try Merkle.inclusionProof(index: index, size: treeSize, subtree: subtree) }
                let leaf = try subtree(index..<index + 1)
                if Merkle.verifyInclusion(leafHash: leaf, index: index, size: treeSize, proof: proof, root: root) {
                    return proof
                }
            }
            throw LedgerError.invalidRequest("the tree of the first \(treeSize) events does not have that head")
        }
    }

    /// The consistency proof (RFC 9162 PROOF) from the first `oldSize` events to the first `newSize`, checked
    /// against `root`.
    public func consistencyProof(oldSize: UInt64, newSize: UInt64, root: Digest) throws -> [Digest] {
        guard oldSize > 0, oldSize <= newSize else {
            throw LedgerError.invalidRequest("no consistency proof from \(oldSize) to \(newSize) events")
        }
        return try connections.with { (session) throws(LedgerError) in
            for groups in [true, false] {
                let subtree = { (range: Range<UInt64>) throws(LedgerError) in
                    try Self.root(session, range, groups: groups)
                }
                // Every group head inside the tree goes into its head: one changed row cannot pass this check.
                guard try subtree(0..<newSize) == root else { continue }
                return try typed { try Merkle.consistencyProof(oldSize: oldSize, newSize: newSize, subtree: subtree) }
            }
            throw LedgerError.invalidRequest("the tree of the first \(newSize) events does not have that head")
        }
    }

    // MARK: The tree, by query

    /// The head of leaves `range`, from the group heads and the blocks' leaves (`GroupedTree`), or with `groups`
    /// false from the leaves alone. The group heads are derived (`vote_merkle_groups`): a proof or a frontier
    /// made from them is checked against a signed tree head, and made again from the leaves alone if it does not
    /// check out, so a changed row costs time, never a receipt; `vote verify` names it (`checkGroups`).
    /// What `known` holds is taken from it instead of the database.
    static func root(
        _ session: Session, _ range: Range<UInt64>, groups: Bool = true, known: TreeReads? = nil
    ) throws(LedgerError) -> Digest {
        try GroupedTree.root(
            range, groups: groups ? range.upperBound / GroupedTree.groupSize : 0,
            heads: { (groups) throws(LedgerError) in
                if let read = known?.heads(groups) { return read }
                return try heads(session, groups)
            },
            leaves: { (range) throws(LedgerError) in
                if let read = known?.leaves(range) { return read }
                return try leaves(session, range)
            })
    }

    /// The heads of groups `groups`, from `vote_merkle_groups`.
    static func heads(_ session: Session, _ groups: Range<UInt64>) throws(LedgerError) -> [Digest] {
        let rows = try session.run(
            """
            SELECT head FROM vote_merkle_groups WHERE group_index >= \(Int64(groups.lowerBound))
            AND group_index < \(Int64(groups.upperBound)) ORDER BY group_index
            """, "cannot read the tree")
        return try rows.rows.map { (row) throws(LedgerError) in try digest(row) }
    }

    /// The group heads and leaves an inclusion proof reads, read in three queries before it is made: the proof
    /// asks for one subtree head a level, and each was a query or two of its own (an inclusion proof in a tree of
    /// 120,000 events took 30 ms, against 2 ms from the file store). Above the groups the heads are read, up to
    /// `headsAtOnce` of them (beyond, they are asked for as needed); below, every subtree is inside the group that
    /// holds the event or inside the last, incomplete group, whose leaves are read.
    struct TreeReads {
        /// Group heads read at most at once (128 KB; a tree of 4 million events).
        static let headsAtOnce: UInt64 = 4096
        /// The heads of groups `0..<heads.count`.
        private var heads: [Digest] = []
        private var leaves: [(range: Range<UInt64>, hashes: [Digest])] = []

        init(_ session: Session, proofOf index: UInt64, treeSize: UInt64) throws(LedgerError) {
            let size = GroupedTree.groupSize
            let groups = treeSize / size
            if groups > 0, groups <= Self.headsAtOnce { heads = try PostgresBlockSource.heads(session, 0..<groups) }
            let own = index / size * size..<min(index / size * size + size, treeSize)
            leaves.append((own, try PostgresBlockSource.leaves(session, own)))
            let last = groups * size..<treeSize
            if !last.isEmpty, last != own { leaves.append((last, try PostgresBlockSource.leaves(session, last))) }
        }

        /// The heads of `groups`, if read.
        func heads(_ groups: Range<UInt64>) -> [Digest]? {
            guard groups.upperBound <= UInt64(heads.count) else { return nil }
            return Array(heads[Int(groups.lowerBound)..<Int(groups.upperBound)])
        }

        /// The leaves `range`, if read.
        func leaves(_ range: Range<UInt64>) -> [Digest]? {
            for read in leaves
            where read.range.lowerBound <= range.lowerBound && range.upperBound <= read.range.upperBound {
                let start = Int(range.lowerBound - read.range.lowerBound)
                return Array(read.hashes[start..<start + range.count])
            }
            return nil
        }
    }

    /// The leaf hashes of events `range`, from the blocks holding them; fails if the ledger holds fewer. Only the
    /// range's part of each block's leaves is read: a proof asks for a few leaves of blocks that may hold 10,000
    /// (a bulk authorisation), and reading whole columns made an inclusion proof 44 ms.
    static func leaves(_ session: Session, _ range: Range<UInt64>) throws(LedgerError) -> [Digest] {
        guard !range.isEmpty else { return [] }
        let (low, high) = (Int64(range.lowerBound), Int64(range.upperBound))
        let rows = try session.run(
            """
            SELECT greatest(first_event, \(low)), substring(leaves
            FROM (least(greatest(\(low) - first_event, 0) * 32, length(leaves)) + 1)::int
            FOR least((\(high) - greatest(first_event, \(low))) * 32, length(leaves))::int) FROM vote_blocks
            WHERE first_event >= (SELECT max(first_event) FROM vote_blocks WHERE first_event <= \(low))
            AND first_event < \(high) ORDER BY first_event
            """, "cannot read the leaves")
        var leaves: [Digest] = []
        leaves.reserveCapacity(range.count)
        for row in rows.rows {
            let first: Int64
            let bytes: ByteBuffer
            do { (first, bytes) = try row.decode((Int64, ByteBuffer).self) } catch {
                throw LedgerError.io("a row of vote_blocks does not decode: \(error)")
            }
            let view = bytes.readableBytesView
            var index = UInt64(first)
            var at = view.startIndex
            while at + 32 <= view.endIndex {
                if range.contains(index) { leaves.append(Digest(bytes: Array(view[at..<at + 32]))!) }
                index += 1
                at += 32
            }
        }
        guard leaves.count == range.count else {
            throw LedgerError.invalidRequest("the ledger holds no events \(range.lowerBound)..<\(range.upperBound)")
        }
        return leaves
    }

    // MARK: The derived tables, for `vote verify`

    public var groupTable: String { "vote_merkle_groups" }
    public var rollTable: String { "vote_roll" }

    public func groupsNotFromLeaves() throws -> [UInt64] {
        try connections.with { (session) throws(LedgerError) in
            let size =
                try PostgresSchema.decode(
                    try session.run(
                        "SELECT coalesce(sum(length(leaves) / 32), 0)::bigint FROM vote_blocks", "cannot read the tree"),
                    Int64.self, "the tree") ?? 0
            let groups = UInt64(size) / GroupedTree.groupSize
            let rows = try session.run(
                "SELECT group_index, head FROM vote_merkle_groups ORDER BY group_index", "cannot read the tree")
            var stored: [UInt64: Digest] = [:]
            for row in rows.rows {
                guard let (index, head) = try? row.decode((Int64, ByteBuffer).self), index >= 0,
                    let digest = Digest(bytes: Array(head.readableBytesView))
                else { throw LedgerError.io("a row of vote_merkle_groups does not decode") }
                stored[UInt64(index)] = digest
            }
            var wrong: [UInt64] = []
            for group in 0..<groups {
                let range = group * GroupedTree.groupSize..<(group + 1) * GroupedTree.groupSize
                let head = try Self.root(session, range, groups: false)
                if stored[group] != head { wrong.append(group) }
            }
            // A head stored for a group the chain has not completed is not from its leaves either.
            wrong += stored.keys.filter { $0 >= groups }.sorted()
            return wrong
        }
    }

    public func forEachRollRow(_ body: (RollChange) throws -> Void) throws {
        // A page at a time, in key order: a roll of millions of rows is never held at once.
        var after: (place: Int32, kind: Int16, digest: ByteBuffer)?
        while true {
            let rows = try connections.with { (session) throws(LedgerError) in
                if let after {
                    return try session.run(
                        """
                        SELECT place, kind, digest, entry FROM vote_roll
                        WHERE (place, kind, digest) > (\(after.place), \(after.kind), \(after.digest))
                        ORDER BY place, kind, digest LIMIT \(Self.rollPage)
                        """, "cannot read the voter roll")
                }
                return try session.run(
                    "SELECT place, kind, digest, entry FROM vote_roll ORDER BY place, kind, digest LIMIT \(Self.rollPage)",
                    "cannot read the voter roll")
            }
            var count = 0
            for row in rows.rows {
                guard let (place, kind, digest, entry) = try? row.decode((Int32, Int16, ByteBuffer, Int16).self),
                    let key = Digest(bytes: Array(digest.readableBytesView))
                else { throw LedgerError.io("a row of vote_roll does not decode") }
                try body(
                    RollChange(
                        digest: key, place: UInt32(bitPattern: place), kind: UInt32(UInt16(bitPattern: kind)),
                        entry: UInt32(UInt16(bitPattern: entry)), previous: 0))
                after = (place, kind, digest)
                count += 1
            }
            if count < Self.rollPage { return }
        }
    }

    public func rebuildDerivedTables(head: Digest, roll: [RollChange]) throws {
        try connections.with { (session) throws(LedgerError) in
            try session.run("BEGIN", "cannot start a transaction")
            let locked = try session.run("SELECT hash FROM vote_ledger FOR UPDATE", "cannot lock the chain's head")
            guard let tip = try PostgresSchema.decode(locked, ByteBuffer.self, "the chain's head"),
                Array(tip.readableBytesView) == head.bytes
            else {
                try session.run("ROLLBACK", "cannot roll back")
                throw LedgerError.headMoved("another writer appended since the chain was verified: verify again")
            }
            let size =
                try PostgresSchema.decode(
                    try session.run(
                        "SELECT coalesce(sum(length(leaves) / 32), 0)::bigint FROM vote_blocks", "cannot read the tree"),
                    Int64.self, "the tree") ?? 0
            try session.run("DELETE FROM vote_merkle_groups", "cannot clear vote_merkle_groups")
            let groups = UInt64(size) / GroupedTree.groupSize
            var indexes: [Int64] = []
            var heads: [ByteBuffer] = []
            for group in 0..<groups {
                let range = group * GroupedTree.groupSize..<(group + 1) * GroupedTree.groupSize
                indexes.append(Int64(group))
                heads.append(ByteBuffer(bytes: try Self.root(session, range, groups: false).bytes))
            }
            try session.run(
                "INSERT INTO vote_merkle_groups (group_index, head) SELECT * FROM unnest(\(indexes), \(heads))",
                "cannot rewrite vote_merkle_groups")
            try session.run("DELETE FROM vote_roll", "cannot clear vote_roll")
            var start = 0
            while start < roll.count {
                let page = roll[start..<min(start + Self.rollPage, roll.count)]
                let places = page.map { Int32(bitPattern: $0.place) }
                let kinds = page.map { Int16(truncatingIfNeeded: $0.kind) }
                let digests = page.map { ByteBuffer(bytes: $0.digest.bytes) }
                let entries = page.map { Int16(truncatingIfNeeded: $0.entry) }
                try session.run(
                    """
                    INSERT INTO vote_roll (place, kind, digest, entry)
                    SELECT * FROM unnest(\(places), \(kinds), \(digests), \(entries))
                    """, "cannot rewrite vote_roll")
                start += Self.rollPage
            }
            try session.run("COMMIT", "cannot commit the rebuilt tables")
        }
    }

    /// Rows of the voter roll a check reads per query.
    static let rollPage = 10_000

    /// `body()`, whose only failures are `LedgerError`s (`Merkle`'s proofs rethrow untyped).
    private func typed<T>(_ body: () throws -> T) throws(LedgerError) -> T {
        do { return try body() } catch let error as LedgerError { throw error } catch {
            throw LedgerError.io("the database \(connections.location): \(error)")
        }
    }

    private static func digest(_ row: PostgresRow) throws(LedgerError) -> Digest {
        do {
            let bytes = try row.decode(ByteBuffer.self)
            guard let digest = Digest(bytes: Array(bytes.readableBytesView)) else { throw DecodeError("not 32 bytes") }
            return digest
        } catch {
            throw LedgerError.io("a row of vote_merkle_groups does not decode: \(error)")
        }
    }
}
