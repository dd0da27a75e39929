import Foundation
import Ledger
import LedgerCrypto
import LedgerTestSupport
import PostgresNIO
import TestSupport
import Testing

@testable import PostgresStore

/// What only the PostgreSQL store does: its schema, several writers on one chain, the voter roll it enforces,
/// and the database's failures as answers.
@Suite struct PostgresStoreTests {
    /// A new ledger in a new database of the shared cluster.
    static func ledger(firstEvents: [LedgerEvent] = []) throws -> (PostgresLocation, PostgresBlockStore) {
        let location = try PostgresCluster.shared.database()
        let store = try PostgresBlockStore.create(
            location, name: "test", authority: Fixture.key, ledgerID: Fixture.ledgerID, firstEvents: firstEvents,
            timestamp: Fixture.epoch)
        return (location, store)
    }

    static func schemaVersion(_ location: PostgresLocation) throws -> [Int32] {
        try PostgresCluster.execute("SELECT version FROM vote_schema", in: location).rows.map {
            try $0.decode(Int32.self)
        }
    }

    static func blockCount(_ location: PostgresLocation) throws -> Int64 {
        try PostgresCluster.execute("SELECT count(*) FROM vote_blocks", in: location).rows[0].decode(Int64.self)
    }

    // MARK: Location

    /// URLs in libpq's forms parse; a malformed one is one line naming what is wrong; the password never prints.
    @Test func locations() throws {
        let tcp = try PostgresLocation(url: "postgres://vote:s3cret@db.example:6543/ledger")
        #expect(tcp.user == "vote" && tcp.host == "db.example" && tcp.port == 6543 && tcp.database == "ledger")
        #expect(tcp.description == "postgres://vote:***@db.example:6543/ledger")
        let socket = try PostgresLocation(url: "postgresql://postgres@/vote?host=/run/pg")
        #expect(socket.host == nil && socket.socketDirectory == "/run/pg" && socket.port == 5432)
        #expect(socket.description == "postgres://postgres@/vote?host=/run/pg")
        #expect(try PostgresLocation(url: "postgres://a@h/d?sslmode=require").requiresTLS)
        let bad: [(String, String)] = [
            ("http://a@h/d", "scheme"), ("postgres://h/d", "no user"), ("postgres://a@h", "no database"),
            ("postgres://a@h/", "no database"), ("postgres://a@/d", "no host"), ("postgres://a@h/d?host=/s", "both"),
            ("postgres://a@/d?host=relative", "absolute"), ("postgres://a@h/d?colour=blue", "unknown parameter colour"),
            ("postgres://a@h/d?sslmode=allow", "sslmode allow"), ("postgres://a:pw@h:99999/d", "port"),
            ("postgres://a:secretpw@/d?host=/s&sslmode=require", "TLS"),
        ]
        for (url, reason) in bad {
            let error = ledgerError { _ = try PostgresLocation(url: url) }
            guard case .invalidRequest(let message) = error else {
                Issue.record("\(url): \(String(describing: error))")
                continue
            }
            #expect(message.contains(reason), "\(url): \(message)")
            #expect(!message.contains("\n") && !message.contains("secretpw"), "\(url): \(message)")
        }
    }

    /// An unknown database or role is one clear line naming it, never the password.
    @Test func unknownDatabaseOrRole() throws {
        let base = try PostgresLocation(url: PostgresCluster.shared.url)
        let directory = try #require(base.socketDirectory)
        for (url, says) in [
            ("postgres://postgres:hunter2@/nosuch?host=\(directory)", "database \"nosuch\" does not exist"),
            ("postgres://nobody:hunter2@/vote?host=\(directory)", "role \"nobody\" does not exist"),
        ] {
            let location = try PostgresLocation(url: url)
            for error in [
                ledgerError { _ = try PostgresBlockStore.open(location, signer: Fixture.key) },
                ledgerError { _ = try PostgresBlockSource(location) },
            ] {
                let message = String(describing: error.map { $0.description } ?? "")
                #expect(message.contains(says), "\(message)")
                #expect(!message.contains("\n") && !message.contains("hunter2"), "\(message)")
            }
        }
    }

    // MARK: Schema

    /// A fresh database migrates to version 1 when the ledger is created; opening it again (twice) changes
    /// nothing; a database with no schema is not a ledger; one at a newer version is refused by writer and reader.
    @Test func schema() throws {
        let (location, store) = try Self.ledger(firstEvents: Fixture.events(2))
        #expect(try Self.schemaVersion(location) == [1])
        #expect(store.head.height == 1)
        for _ in 0..<2 {
            let again = try PostgresBlockStore.open(location, signer: Fixture.key)
            #expect(again.head == store.head && again.frontier == store.frontier)
        }
        #expect(try Self.schemaVersion(location) == [1])
        #expect(
            ledgerError {
                _ = try PostgresBlockStore.create(
                    location, name: "again", authority: Fixture.key, ledgerID: Fixture.ledgerID, firstEvents: [],
                    timestamp: Fixture.epoch)
            }.map { "\($0)".contains("holds a ledger already") } == true)

        let empty = try PostgresCluster.shared.database()
        try PostgresCluster.execute("CREATE TABLE unrelated (x integer)", in: empty)
        for error in [
            ledgerError { _ = try PostgresBlockStore.open(empty, signer: Fixture.key) },
            ledgerError { _ = try PostgresBlockSource(empty) },
        ] {
            guard case .notALedger = error else {
                Issue.record("\(String(describing: error))")
                continue
            }
        }
        #expect(
            try PostgresCluster.execute("SELECT to_regclass('vote_schema') IS NULL", in: empty).rows[0].decode(
                Bool.self))

        try PostgresCluster.execute("UPDATE vote_schema SET version = 2", in: location)
        for error in [
            ledgerError { _ = try PostgresBlockStore.open(location, signer: Fixture.key) },
            ledgerError { _ = try PostgresBlockSource(location) },
        ] {
            #expect(error.map { "\($0)".contains("written by a newer vote") } == true, "\(String(describing: error))")
        }
    }

    // MARK: Several writers

    /// Two writers on one database: the one behind loses the race with `.headMoved` and writes nothing, takes
    /// the winner's blocks with `catchUp`, and its retry extends them.
    @Test func loserCatchesUpAndRetries() throws {
        let (location, first) = try Self.ledger()
        let second = try PostgresBlockStore.open(location, signer: Fixture.key)
        let won = try first.append(Fixture.events(2), timestamp: Fixture.epoch + 1)
        let lost = ledgerError { try second.append(Fixture.events(1, from: 2), timestamp: Fixture.epoch + 2) }
        guard case .headMoved = lost else {
            Issue.record("expected headMoved, got \(String(describing: lost))")
            return
        }
        #expect(try Self.blockCount(location) == 2)
        let caught = try second.catchUp()
        #expect(caught.map(\.header) == [won])
        #expect(second.head == won && second.frontier == first.frontier)
        #expect(try second.catchUp().isEmpty)
        let retried = try second.append(Fixture.events(1, from: 2), timestamp: Fixture.epoch + 2)
        #expect(retried.height == 2 && retried.previousHash == won.hash)
        #expect(try first.catchUp().map(\.header) == [retried])
        #expect(first.head == second.head)
    }

    /// Two writers, each on its own thread, append as fast as they can, catching up and retrying whenever they
    /// lose: every block of both is in the chain once, with no gap and no fork, and the chain verifies. Also
    /// where the operator made every transaction stricter than PostgreSQL's default (the store's appends stay
    /// read committed, where losing the head row is `.headMoved`, not a serialization failure).
    @Test(arguments: ["read committed", "repeatable read", "serializable"])
    func twoWritersOnOneChain(isolation: String) async throws {
        let (location, _) = try Self.ledger()
        try PostgresCluster.execute(
            PostgresQuery(
                unsafeSQL: "ALTER DATABASE \(location.database) SET default_transaction_isolation = '\(isolation)'"),
            in: location)
        let perWriter = 25
        func run(_ writer: Int) async throws -> (appended: Int, lost: Int) {
            try await withCheckedThrowingContinuation { continuation in
                Thread.detachNewThread {
                    do {
                        let store = try PostgresBlockStore.open(location, signer: Fixture.key)
                        var lost = 0
                        for block in 0..<perWriter {
                            let events = Fixture.events(1 + block % 3, from: 1000 * writer + 10 * block)
                            while true {
                                do {
                                    try store.append(events, timestamp: Fixture.epoch + Int64(block))
                                    break
                                } catch LedgerError.headMoved {
                                    lost += 1
                                    _ = try store.catchUp()
                                }
                            }
                        }
                        continuation.resume(returning: (perWriter, lost))
                    } catch {
                        continuation.resume(throwing: error)
                    }
                }
            }
        }
        async let a = run(1)
        async let b = run(2)
        let results = try await [a, b]
        #expect(results.map(\.appended) == [perWriter, perWriter])
        let source = try PostgresBlockSource(location)
        let report = try ChainVerifier.verify(source)
        #expect(report.blocks == UInt64(1 + 2 * perWriter))
        #expect(report.height == UInt64(2 * perWriter))
        var payloads: [[UInt8]] = []
        try source.forEachBlock(from: 1) { block in payloads += block.events.map { Array($0.payload) } }
        var expected: [[UInt8]] = []
        for writer in 1...2 {
            for block in 0..<perWriter {
                expected += Fixture.events(1 + block % 3, from: 1000 * writer + 10 * block).map(\.payload)
            }
        }
        #expect(payloads.count == expected.count && Set(payloads) == Set(expected), "each block once")
    }

    // MARK: The voter roll

    static func change(
        _ byte: UInt8, place: UInt32 = 3, kind: UInt32 = 2, entry: UInt32, previous: UInt32
    )
        -> RollChange
    {
        RollChange(
            digest: Digest(bytes: [UInt8](repeating: byte, count: 32))!, place: place, kind: kind, entry: entry,
            previous: previous)
    }

    /// Writes `events` and their `roll` changes as one block, as the service does (`write(deciding:)`).
    static func write(_ store: PostgresBlockStore, _ events: [LedgerEvent], roll: [RollChange]) throws {
        _ = try store.write { _ in
            BlockDecision(events: events.map(HashedEvent.init), timestamp: Fixture.epoch, roll: roll)
        }
    }

    /// The roll is written in the block's transaction: a key new twice, or a transition from an entry that is
    /// not there, fails the block and writes nothing of it; a key authorised and voted in one block is fine.
    @Test func rollIsEnforced() throws {
        let (location, store) = try Self.ledger()
        #expect(store.keepsRoll)
        try Self.write(
            store, Fixture.events(1),
            roll: [Self.change(1, entry: 1, previous: 0), Self.change(2, entry: 1, previous: 0)])
        let head = store.head

        let twice = ledgerError {
            try Self.write(store, Fixture.events(1, from: 1), roll: [Self.change(1, entry: 1, previous: 0)])
        }
        #expect(
            twice.map { "\($0)" }
                == "the row of vote_roll for a token hash in place 3 exists though the chain gives none: it was changed outside the ledger, and this command is refused (vote verify names the row)"
        )
        let wrong = ledgerError {
            try Self.write(
                store, Fixture.events(1, from: 1),
                roll: [Self.change(1, entry: 2, previous: 1), Self.change(2, entry: 3, previous: 2)])
        }
        #expect(
            wrong.map { "\($0)" }
                == "the row of vote_roll for a token hash in place 3 is not the entry the chain gives: it was changed outside the ledger, and this command is refused (vote verify names the row)"
        )
        #expect(store.head == head)
        #expect(try Self.blockCount(location) == 2)
        #expect(try PostgresBlockSource(location).lastBlock() == head)
        let entries = try PostgresCluster.execute("SELECT entry FROM vote_roll ORDER BY digest", in: location).rows.map
        {
            try $0.decode(Int16.self)
        }
        #expect(entries == [1, 1], "the refused blocks' changes are not there")

        try Self.write(
            store, Fixture.events(1, from: 1),
            roll: [
                Self.change(1, entry: 2, previous: 1), Self.change(9, entry: 1, previous: 0),
                Self.change(9, entry: 2, previous: 1),
            ])
        let after = try PostgresCluster.execute("SELECT entry FROM vote_roll ORDER BY digest", in: location).rows.map {
            try $0.decode(Int16.self)
        }
        #expect(after == [2, 1, 2])
        #expect(store.head.height == 2)
    }

    // MARK: Failures

    /// The database crashing (`pg-cluster stop … immediate`) makes an append an `.io` error, not a crash, and
    /// writes nothing; once it is back, the same store reconnects and appends again.
    @Test func databaseDownAndBack() throws {
        let cluster = try PostgresCluster()
        try cluster.execute("CREATE DATABASE crash")
        let location = try PostgresLocation(url: cluster.url.replacingOccurrences(of: "/vote?", with: "/crash?"))
        let store = try PostgresBlockStore.create(
            location, name: "crash", authority: Fixture.key, ledgerID: Fixture.ledgerID, firstEvents: [],
            timestamp: Fixture.epoch)
        let source = try PostgresBlockSource(location)
        try store.append(Fixture.events(1), timestamp: Fixture.epoch)
        let head = store.head
        cluster.stop(immediate: true)
        let down = ledgerError { try store.append(Fixture.events(1, from: 1), timestamp: Fixture.epoch) }
        guard case .io(let message) = down else {
            Issue.record("expected .io, got \(String(describing: down))")
            return
        }
        #expect(message.hasPrefix("the database postgres://postgres@/crash?host="), "\(message)")
        #expect(!message.contains("\n"))
        #expect(ledgerError { _ = try source.lastBlock() }.map { if case .io = $0 { true } else { false } } == true)
        #expect(store.head == head)
        try cluster.start()
        let header = try store.append(Fixture.events(1, from: 1), timestamp: Fixture.epoch)
        #expect(header.height == 2 && header.previousHash == head.hash)
        #expect(try source.lastBlock() == header)
        #expect(try ChainVerifier.verify(source).blocks == 3)
    }

    /// The reader writes nothing and takes no lock: it reads, proves and verifies a database whose every
    /// transaction is read-only (as on a streaming replica), where a writer's append is refused as `.io`.
    @Test func readerNeedsNoWrites() throws {
        let (location, store) = try Self.ledger(firstEvents: Fixture.events(3))
        try store.append(Fixture.events(2, from: 3), timestamp: Fixture.epoch)
        let head = store.head
        try PostgresCluster.execute(
            PostgresQuery(unsafeSQL: "ALTER DATABASE \(location.database) SET default_transaction_read_only = on"),
            in: location)
        let source = try PostgresBlockSource(location)
        #expect(try source.lastBlock() == head)
        #expect(try ChainVerifier.verify(source).blocks == 3)
        let proof = try source.inclusionProof(index: 4, treeSize: head.treeSize, root: head.treeRoot)
        let leaf = Merkle.leafHash(Fixture.events(2, from: 3)[0].encoded)
        #expect(
            Merkle.verifyInclusion(leafHash: leaf, index: 4, size: head.treeSize, proof: proof, root: head.treeRoot))
        // Sessions opened from now on are read-only (the store's open connections predate the setting).
        let writer = try PostgresBlockStore.open(location, signer: Fixture.key)
        let refused = ledgerError { try writer.append(Fixture.events(1, from: 5), timestamp: Fixture.epoch) }
        #expect(refused.map { "\($0)".contains("read-only transaction") } == true, "\(String(describing: refused))")
        #expect(try source.lastBlock() == head)
    }

    /// A connection lost during `COMMIT` leaves the outcome unknown until the block is read back. Here the
    /// commit did happen: the server waits for a synchronous standby that never comes, so `COMMIT` hangs with
    /// the transaction committed locally, and the session is then terminated (as a failover or an operator
    /// would). The append returns the block, as committed, rather than an error for a block that is there.
    @Test func commitOutcomeIsReadBack() throws {
        let cluster = try PostgresCluster()
        try cluster.execute("CREATE DATABASE unknown")
        let location = try PostgresLocation(url: cluster.url.replacingOccurrences(of: "/vote?", with: "/unknown?"))
        _ = try PostgresBlockStore.create(
            location, name: "unknown", authority: Fixture.key, ledgerID: Fixture.ledgerID, firstEvents: [],
            timestamp: Fixture.epoch)
        try cluster.execute("ALTER SYSTEM SET synchronous_standby_names = 'nobody'")
        try cluster.execute("SELECT pg_reload_conf()")
        // The server applies a reload when it gets to it: until a new session has the setting (then so does the
        // writer's, opened after it; opening commits nothing, so it does not wait for the standby).
        try waitForBlocking(
            "a new session to have synchronous_standby_names = 'nobody'",
            read: {
                try PostgresCluster.execute("SHOW synchronous_standby_names", in: location).rows[0].decode(String.self)
            }, until: { $0 == "nobody" })
        // The appending thread has it until it reports; the test waits for that before touching it.
        nonisolated(unsafe) let store = try PostgresBlockStore.open(location, signer: Fixture.key)
        let outcome = LogLines()
        let appending = Thread {
            do {
                let header = try store.append(Fixture.events(1), timestamp: Fixture.epoch)
                outcome.append("appended \(header.height)")
            } catch {
                outcome.append("failed: \(error)")
            }
        }
        appending.start()
        // Until the append's COMMIT waits for the standby (or the append reports without having waited).
        let terminated = try waitForBlocking(
            "the append's COMMIT to wait for the standby",
            read: {
                let rows = try PostgresCluster.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE wait_event = 'SyncRep'", in: location)
                return try rows.rows.contains { try $0.decode(Bool.self) }
            }, until: { $0 || !outcome.lines.isEmpty })
        try waitForBlocking("the append to report", read: { outcome.lines }, until: { !$0.isEmpty })
        #expect(terminated, "the commit waited for the standby")
        #expect(outcome.lines == ["appended 1"])
        #expect(store.head.height == 1)
        try cluster.execute("ALTER SYSTEM RESET synchronous_standby_names")
        try cluster.execute("SELECT pg_reload_conf()")
        #expect(try PostgresBlockSource(location).lastBlock() == store.head)
        #expect(try store.append(Fixture.events(1, from: 1), timestamp: Fixture.epoch).height == 2)
    }

    // MARK: Same bytes, and the tree beyond one group

    /// Blocks appended to the memory store and to PostgreSQL with the same key, ledger id and times are
    /// byte-identical as stored.
    @Test func sameBytesAsMemory() throws {
        let (location, store) = try Self.ledger()
        let memory = try MemoryBlockSource(
            name: "test", authority: Fixture.key, ledgerID: Fixture.ledgerID, timestamp: Fixture.epoch)
        let writer = try memory.openWriter(authority: Fixture.key)
        for batch in 0..<5 {
            let events = Fixture.events(batch * 3 + 1, from: 100 * batch)
            let time = Fixture.epoch + Int64(batch) * 1000
            #expect(try store.append(events, timestamp: time) == writer.append(events, timestamp: time))
        }
        func stored(_ source: any BlockSource) throws -> [[UInt8]] {
            var blocks: [[UInt8]] = []
            _ = try source.scanBlocks(from: 0) { bytes, _ in
                blocks.append(bytes)
                return true
            }
            return blocks
        }
        let blocks = try stored(PostgresBlockSource(location))
        #expect(blocks.count == 6)
        #expect(blocks == (try stored(memory)))
    }

    /// Past 1024 leaves the groups' heads serve the proofs: every proof of a 3,000-event ledger is the reference
    /// tree's, and a writer opened on it (its frontier from the groups) appends the right root.
    @Test func proofsAcrossGroups() throws {
        let (location, store) = try Self.ledger()
        var events: [LedgerEvent] = []
        var heads = [store.head]
        for size in [700, 400, 1, 1200, 699] {
            let batch = Fixture.events(size, from: events.count, size: 8)
            heads.append(try store.append(batch, timestamp: Fixture.epoch))
            events += batch
        }
        #expect(
            try PostgresCluster.execute("SELECT count(*) FROM vote_merkle_groups", in: location).rows[0].decode(
                Int64.self) == 2)
        let reference = MerkleTree(leaves: StoreContract.expectedLeaves(store.genesis, events))
        let source = try PostgresBlockSource(location)
        for head in heads {
            for index in stride(from: 0, to: head.treeSize, by: 97) {
                #expect(
                    try source.inclusionProof(index: index, treeSize: head.treeSize, root: head.treeRoot)
                        == reference.inclusionProof(index: index, size: head.treeSize))
            }
            for old in heads where old.treeSize <= head.treeSize {
                #expect(
                    try source.consistencyProof(oldSize: old.treeSize, newSize: head.treeSize, root: head.treeRoot)
                        == reference.consistencyProof(oldSize: old.treeSize, newSize: head.treeSize))
            }
        }
        let reopened = try PostgresBlockStore.open(location, signer: Fixture.key)
        #expect(reopened.frontier == store.frontier)
        let next = try reopened.append(Fixture.events(30, from: events.count), timestamp: Fixture.epoch)
        let all = StoreContract.expectedLeaves(store.genesis, events + Fixture.events(30, from: events.count))
        #expect(next.treeRoot == MerkleTree(leaves: all).root(size: UInt64(all.count)))
    }

    /// `Tools/pg-cluster` run from a directory the `postgres` user cannot enter (a fresh clone under `mktemp -d`,
    /// mode 700): it prints the URL alone on standard output and nothing on standard error, so neither the
    /// cluster helper nor anyone else reads a warning as part of the URL; and the cluster serves.
    @Test func clusterStartsFromADirectoryPostgresCannotEnter() throws {
        let checkout = TemporaryDirectory()
        #expect(chmod(checkout.path, 0o700) == 0)
        let cluster = TemporaryDirectory()
        let started = try runToCompletion(
            PostgresCluster.script, ["start", cluster.child("pg")], directory: checkout.path)
        defer { _ = try? runToCompletion(PostgresCluster.script, ["stop", cluster.child("pg"), "immediate"]) }
        #expect(started.status == 0, "\(started.err)")
        #expect(started.err == "", "pg-cluster complained on standard error")
        #expect(started.out == "postgres://postgres@/vote?host=\(cluster.child("pg"))\n")
        let location = try PostgresLocation(url: started.out.trimmingCharacters(in: .whitespacesAndNewlines))
        let rows = try PostgresCluster.execute("SELECT 1", in: location).rows
        #expect(try rows.first?.decode(Int.self) == 1)
        let stopped = try runToCompletion(
            PostgresCluster.script, ["stop", cluster.child("pg"), "fast"], directory: checkout.path)
        #expect(stopped.status == 0 && stopped.err == "", "\(stopped.err)")
    }
}
