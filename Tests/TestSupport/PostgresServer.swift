import Foundation

/// A throwaway PostgreSQL cluster made by `Tools/pg-cluster` in a temporary directory (initdb as the `postgres`
/// user, a Unix socket there, fsync and synchronous_commit on), stopped and removed when this goes away; for
/// tests that run `vote` and `vote serve` against a database.
public final class PostgresServer: @unchecked Sendable {
    /// The directory holding the cluster and its socket.
    public let directory: TemporaryDirectory
    /// postgres://postgres@/vote?host=DIRECTORY: the cluster's `vote` database.
    public let url: String

    /// `Tools/pg-cluster`, from this file's place in the repository.
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Tools/pg-cluster").path

    /// Makes and starts the cluster, passing `settings` (say, `max_connections=200`) to the server.
    public init(settings: [String] = []) throws {
        directory = TemporaryDirectory()
        url = try PostgresServer.cluster(["start", directory.child("pg")] + settings)
    }

    /// A streaming replica of the running `primary` (pg_basebackup -R), started read-only.
    public init(standbyOf primary: PostgresServer) throws {
        directory = TemporaryDirectory()
        url = try PostgresServer.cluster(["standby", primary.directory.child("pg"), directory.child("pg")])
    }

    deinit { _ = try? PostgresServer.cluster(["stop", directory.child("pg"), "immediate"]) }

    /// Stops the server: `immediate` as a crash would (no checkpoint; what was committed survives).
    public func stop(immediate: Bool = false) throws {
        _ = try PostgresServer.cluster(["stop", directory.child("pg"), immediate ? "immediate" : "fast"])
    }

    /// Starts the stopped server again.
    public func start() throws { _ = try PostgresServer.cluster(["start", directory.child("pg")]) }

    /// A new empty database in the cluster, as a URL.
    public func database(_ name: String) throws -> String {
        let run = try runToCompletion("/usr/bin/psql", [url, "-qc", "CREATE DATABASE \(name)"])
        guard run.status == 0 else { throw ClusterError(message: "CREATE DATABASE \(name): \(run.err)") }
        return url.replacingOccurrences(of: "/vote?", with: "/\(name)?")
    }

    /// Runs `Tools/pg-cluster` with `arguments`; its output, trimmed.
    static func cluster(_ arguments: [String]) throws -> String {
        let run = try runToCompletion(script, arguments)
        guard run.status == 0 else {
            throw ClusterError(message: "pg-cluster \(arguments.joined(separator: " ")): \(run.err)")
        }
        return run.out.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    public struct ClusterError: Error, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }
}
