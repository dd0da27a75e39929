import Foundation
import Ledger
import LedgerTestSupport
import PostgresNIO
import TestSupport
import Testing

@testable import PostgresStore

/// A throwaway PostgreSQL cluster (`Tools/pg-cluster`) in a temporary directory, stopped when the value goes
/// away; each test takes a database of its own in it (`database()`).
final class PostgresCluster: @unchecked Sendable {
    let directory: String
    let url: String
    private let lock = NSLock()
    private var databases = 0

    /// The cluster most tests share: started on first use, stopped when the test process exits.
    static let shared: PostgresCluster = {
        let cluster = try! PostgresCluster()
        sharedDirectory = cluster.directory
        atexit {
            if let directory = sharedDirectory {
                _ = PostgresCluster.cluster("stop", directory + "/pg", "immediate")
                try? FileManager.default.removeItem(atPath: directory)
            }
        }
        return cluster
    }()
    nonisolated(unsafe) private static var sharedDirectory: String?

    /// `Tools/pg-cluster` of this checkout.
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Tools/pg-cluster").path

    init() throws {
        directory = makeTemporaryDirectory()
        url = try Self.cluster("start", directory + "/pg").get()
    }

    /// Runs `Tools/pg-cluster` with `arguments` to completion: what it printed on standard output (the URL, for
    /// `start`), or why it failed (its standard error). Not with Foundation's `Process`, which takes the program
    /// for running as long as any process holding the socket it watches does, and the server `pg-cluster start`
    /// leaves running inherits it. A warning on standard error is never read as part of the answer.
    static func cluster(_ arguments: String...) -> Result<String, ClusterError> {
        let directory = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let (output, errors) = (directory + "/output", directory + "/errors")
        let command =
            ([script] + arguments).map { "'\($0)'" }.joined(separator: " ") + " >'\(output)' 2>'\(errors)'"
        let status = system(command)
        let printed = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        let complaint = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
        guard status == 0 else {
            return .failure(ClusterError(message: "pg-cluster \(arguments[0]): \(complaint)\(printed)"))
        }
        return .success(printed.trimmingCharacters(in: .whitespacesAndNewlines))
    }

    deinit {
        if directory != Self.sharedDirectory {
            stop(immediate: true)
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    /// Stops the server (`immediate`: as a crash would).
    func stop(immediate: Bool) {
        _ = Self.cluster("stop", directory + "/pg", immediate ? "immediate" : "fast")
    }

    /// Starts the stopped server again.
    func start() throws {
        _ = try Self.cluster("start", directory + "/pg").get()
    }

    /// A new, empty database: its location.
    func database() throws -> PostgresLocation {
        let name = lock.withLock {
            databases += 1
            return "test_\(databases)"
        }
        try execute("CREATE DATABASE \(name)")
        return try PostgresLocation(url: url.replacingOccurrences(of: "/vote?", with: "/\(name)?"))
    }

    /// Runs `sql` (a constant statement) in the cluster's `vote` database.
    func execute(_ sql: String) throws {
        try Self.execute(PostgresQuery(unsafeSQL: sql), in: try PostgresLocation(url: url))
    }

    /// Runs `query` in the database at `location`: what tests do behind the store's back.
    @discardableResult
    static func execute(_ query: PostgresQuery, in location: PostgresLocation) throws -> PostgresQueryResult {
        let connections = try PostgresConnections(location)
        defer { connections.close() }
        return try connections.with { (session) throws(LedgerError) in try session.run(query, "test") }
    }

    struct ClusterError: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }
}

extension StoreHarness {
    /// A PostgreSQL store in a new database of the shared cluster, with the contract's fixture key and id.
    static func postgres() throws -> StoreHarness {
        let location = try PostgresCluster.shared.database()
        let store = try PostgresBlockStore.create(
            location, name: "contract", authority: Fixture.key, ledgerID: Fixture.ledgerID, firstEvents: [],
            timestamp: Fixture.epoch)
        return StoreHarness(
            store: store, source: { try PostgresBlockSource(location) },
            openWriter: { key in try PostgresBlockStore.open(location, signer: key) },
            tamper: { height, _ in
                // The signature follows the block header in the `header` column.
                let rows = try PostgresCluster.execute(
                    "SELECT header FROM vote_blocks WHERE height = \(Int64(height))", in: location)
                var header = Array(try #require(rows.rows.first).decode(ByteBuffer.self).readableBytesView)
                header[LedgerFormat.headerSize] ^= 0x01
                try PostgresCluster.execute(
                    "UPDATE vote_blocks SET header = \(ByteBuffer(bytes: header)) WHERE height = \(Int64(height))",
                    in: location)
            }, keep: location)
    }
}
