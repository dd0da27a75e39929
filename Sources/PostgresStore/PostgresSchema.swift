import Ledger
import PostgresNIO

/// The ledger's tables in PostgreSQL and how a database gets them. `vote_schema` holds the schema's version;
/// `migrations[i]` takes a database from version i to i + 1, in a transaction that also records the new version,
/// so a database is always at one version. A database at a newer version than this build knows is refused:
/// a newer `vote` wrote it.
///
/// Version 1:
/// - `vote_ledger`, one row: the genesis event's bytes and the chain's head (height, header hash). Every
///   appender locks this row first, so appends to one chain are serialised across processes.
/// - `vote_blocks`: each block as the format defines it (FORMAT.md §3.3): `header` is its header and signature,
///   `events` its events section, so `header ‖ events` is the block's bytes; beside them the header's hash, the
///   tree index of its first event, and its events' leaf hashes (32 bytes each).
/// - `vote_merkle_groups`: the head of each complete group of 1024 leaves (as the file store's nodes.idx), so a
///   proof reads about a thousand digests per level instead of every leaf.
/// - `vote_roll`: the voter roll under one unique key (place, kind, digest) with its entry (2: voted), so the
///   database itself refuses a second vote on one token.
enum PostgresSchema {
    /// The version this build writes.
    static let version = 1

    /// The statements of each migration, in order: `migrations[i]` goes from version i to i + 1.
    static let migrations: [[String]] = [
        [
            """
            CREATE TABLE vote_ledger (
                only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
                genesis bytea NOT NULL, height bigint NOT NULL, hash bytea NOT NULL)
            """,
            """
            CREATE TABLE vote_blocks (
                height bigint PRIMARY KEY, header bytea NOT NULL, events bytea NOT NULL, hash bytea NOT NULL UNIQUE,
                first_event bigint NOT NULL UNIQUE, leaves bytea NOT NULL)
            """,
            "CREATE TABLE vote_merkle_groups (group_index bigint PRIMARY KEY, head bytea NOT NULL)",
            """
            CREATE TABLE vote_roll (
                place integer NOT NULL, kind smallint NOT NULL, digest bytea NOT NULL, entry smallint NOT NULL,
                PRIMARY KEY (place, kind, digest))
            """,
        ]
    ]

    /// A key for `pg_advisory_xact_lock`: one process migrates at a time.
    private static let migrationLock: Int64 = 0x766F_7465_5F73_6368

    /// Brings the database up to `version` inside the caller's open transaction: creates `vote_schema` if
    /// `creating` (a database without it is otherwise not a ledger), refuses a newer version, and runs the
    /// missing migrations. Returns the version found before.
    @discardableResult
    static func migrate(_ session: Session, creating: Bool) throws(LedgerError) -> Int {
        try session.run("SELECT pg_advisory_xact_lock(\(migrationLock))", "cannot lock the schema")
        let found = try foundVersion(session)
        guard found != nil || creating else { throw notALedger(session.connections.location) }
        if found == nil {
            try session.run("CREATE TABLE vote_schema (version integer NOT NULL)", "cannot create the schema")
            try session.run("INSERT INTO vote_schema VALUES (0)", "cannot create the schema")
        }
        let from = found ?? 0
        for step in from..<max(from, version) {
            for statement in migrations[step] {
                try session.run(PostgresQuery(unsafeSQL: statement), "cannot migrate to schema version \(step + 1)")
            }
            try session.run("UPDATE vote_schema SET version = \(step + 1)", "cannot record the schema version")
        }
        return from
    }

    /// Checks, without writing (a read-only standby), that the database holds a ledger this build reads.
    static func check(_ session: Session) throws(LedgerError) {
        guard try foundVersion(session) != nil else { throw notALedger(session.connections.location) }
    }

    /// The database's schema version, nil if it has none; refuses one newer than this build's.
    private static func foundVersion(_ session: Session) throws(LedgerError) -> Int? {
        let exists = try session.run("SELECT to_regclass('vote_schema') IS NOT NULL", "cannot read the schema")
        guard try decode(exists, Bool.self, "the schema") == true else { return nil }
        let rows = try session.run("SELECT version FROM vote_schema", "cannot read the schema version")
        guard let found = try decode(rows, Int32.self, "the schema version") else {
            throw LedgerError.io("the database \(session.connections.location): vote_schema holds no version")
        }
        guard found <= version else {
            throw LedgerError.invalidRequest(
                "the database \(session.connections.location) was written by a newer vote (schema version \(found); "
                    + "this one knows up to \(version)): upgrade vote")
        }
        return Int(found)
    }

    static func notALedger(_ location: PostgresLocation) -> LedgerError {
        .notALedger(path: location.description, reason: "the database holds no ledger (no vote_schema table)")
    }

    /// The first column of the first row of `result`, nil if there is none.
    static func decode<T: PostgresDecodable>(
        _ result: PostgresQueryResult, _ type: T.Type, _ what: String
    ) throws(LedgerError) -> T? {
        guard let row = result.rows.first else { return nil }
        do { return try row.decode(T.self) } catch { throw LedgerError.io("\(what) does not decode: \(error)") }
    }
}
