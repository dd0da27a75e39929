import CoreMetrics
import Ledger
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
public import ServiceLifecycle

/// A small pool of connections to one database, for the store's synchronous protocols.
///
/// `BlockAppender` and `BlockSource` are synchronous, and they are called from the writer's own thread and from HTTP
/// route handlers running on Swift concurrency's cooperative threads. postgres-nio's `PostgresClient` is
/// async-only: blocking a cooperative thread until a task finishes that itself needs a cooperative thread can
/// deadlock the pool (two cores: two cooperative threads). So the store uses `PostgresConnection`'s
/// `EventLoopFuture` API on an event loop group of its own (never the one Hummingbird serves on): the calling
/// thread waits on a future that only the store's own loop completes. Idle connections wait under a lock; a
/// connection whose work failed is closed, never reused (its session may be in a broken transaction, or gone).
///
/// The loop is the `PostgresDatabase`'s a program runs as a service of its lifecycle (`vote serve`), else one of
/// the pool's own, stopped when the pool closes (a command that opens the ledger and ends).
final class PostgresConnections: Sendable {
    let location: PostgresLocation
    private let configuration: PostgresConnection.Configuration
    private let group: MultiThreadedEventLoopGroup
    /// The database whose loop it runs on (nil: the loop is the pool's own, stopped when it closes).
    private let database: PostgresDatabase?
    private let state = Locked(State())
    /// Quiet: every failure reaches the caller as a `LedgerError`.
    static let logger = Logger(label: "vote.postgres", factory: { _ in SwiftLogNoOpLogHandler() })

    private struct State {
        var idle: [PostgresConnection] = []
        /// Connections taken and not yet given back or closed.
        var inUse = 0
        var nextID = 1
        var closed = false

        /// Records the pool's connections (`vote_database_connections`, by state), for `GET /metrics`.
        func record() {
            Gauge(label: "vote_database_connections", dimensions: [("state", "idle")]).record(idle.count)
            Gauge(label: "vote_database_connections", dimensions: [("state", "in_use")]).record(inUse)
        }
    }

    /// A pool of connections to `location`, on `database`'s loop if given.
    init(_ location: PostgresLocation, on database: PostgresDatabase? = nil) throws(LedgerError) {
        self.location = location
        configuration = try location.configuration()
        group = database?.group ?? MultiThreadedEventLoopGroup(numberOfThreads: 1)
        self.database = database
        if let database, !database.add(self) { state.withLock { $0.closed = true } }
    }

    deinit { close() }

    /// Runs `body` on a connection of the pool (a new one if none is idle), returning the connection afterwards
    /// if `body` succeeded and closing it if not. `body` must leave no transaction open when it returns. An idle
    /// connection found dead by `body`'s first statement (the server restarted meanwhile) is replaced and `body`
    /// runs again: that statement never ran.
    func with<T>(_ body: (Session) throws(LedgerError) -> T) throws(LedgerError) -> T {
        let (connection, reused) = try take()
        let session = Session(connection: connection, connections: self)
        do {
            let result = try body(session)
            give(connection)
            return result
        } catch {
            _ = try? connection.close().wait()
            release()
            guard reused, session.statements == 1, session.lostConnection else { throw error }
            return try with(body)
        }
    }

    /// Connections taken and not yet given back or closed.
    var inUse: Int { state.withLock { $0.inUse } }

    /// Counts a taken connection as gone (closed rather than given back).
    private func release() {
        state.withLock { state in
            state.inUse -= 1
            state.record()
        }
    }

    /// An idle connection, or a new one (`SET synchronous_commit = on` for every session: a commit returns only
    /// once it is on the database's disk, whatever the server's default).
    private func take() throws(LedgerError) -> (PostgresConnection, reused: Bool) {
        let (idle, id, closed) = state.withLock { state -> (PostgresConnection?, Int, Bool) in
            state.nextID += 1
            let idle = state.idle.popLast()
            if !state.closed {
                state.inUse += 1
                state.record()
            }
            return (idle, state.nextID, state.closed)
        }
        guard !closed else { throw LedgerError.invalidRequest("the database \(location) is closed") }
        if let idle, !idle.isClosed { return (idle, true) }
        do throws(LedgerError) {
            return try connect(id: id)
        } catch {
            release()
            throw error
        }
    }

    /// A new connection, its session set up.
    private func connect(id: Int) throws(LedgerError) -> (PostgresConnection, reused: Bool) {
        do {
            let connection = try PostgresConnection.connect(
                on: group.next(), configuration: configuration, id: id, logger: Self.logger
            ).wait()
            do {
                _ = try Self.wait(connection.query("SET synchronous_commit = on", logger: Self.logger), on: connection)
            } catch {
                _ = try? connection.close().wait()
                throw error
            }
            return (connection, false)
        } catch {
            throw failure(error, "cannot be reached")
        }
    }

    private func give(_ connection: PostgresConnection) {
        let keep = state.withLock { state in
            guard !state.closed, state.idle.count < 8, !connection.isClosed else { return false }
            state.idle.append(connection)
            state.inUse -= 1
            state.record()
            return true
        }
        guard !keep else { return }
        // An open connection of a database's pool says goodbye (its pool is closing, or has 8 idle), counted by
        // the database before it stops counting as in use here, so the database never sees neither.
        if let database, !connection.isClosed {
            database.close([connection])
        } else {
            _ = try? connection.close().wait()
        }
        release()
    }

    /// Closes every idle connection, and the event loop group if it is the pool's own; later calls fail. Waits
    /// for nothing: the last reference to a reader may go away on any thread, also an event loop's (a server's),
    /// where waiting on a future is a deadlock NIO refuses with a crash. A database's pool hands its connections
    /// to the database, which ends each with a goodbye to the server and waits for that before it stops the loop.
    func close() {
        let idle = state.withLock { state -> [PostgresConnection]? in
            guard !state.closed else { return nil }
            state.closed = true
            defer { state.idle = [] }
            return state.idle
        }
        guard let idle else { return }
        if let database { return database.close(idle) }
        let closed = EventLoopFuture.andAllComplete(idle.map { $0.close() }, on: group.next())
        // The connections live until they are closed (postgres-nio asserts it), then the pool's loop stops.
        closed.whenComplete { [group, idle] _ in withExtendedLifetime(idle) { group.shutdownGracefully { _ in } } }
    }

    /// The connection closed under a statement.
    struct Closed: Error, CustomStringConvertible {
        var description: String { "the connection was lost" }
    }

    /// Waits for `statement`, sent on `connection`, or for the connection to close under it, checked every second.
    /// postgres-nio can lose a statement sent as the server is stopped under it: the connection closes and the
    /// statement's future never completes (seen on 2026-11-30: the writer thread of `vote serve` waited on a
    /// `COMMIT` for good, its votes unanswered, after an immediate shutdown of the database). A statement still
    /// running on an open connection is waited for however long it takes: its outcome decides what callers are told.
    static func wait<T: Sendable>(_ statement: EventLoopFuture<T>, on connection: PostgresConnection) throws -> T {
        let answer = connection.eventLoop.makePromise(of: T.self)
        statement.cascade(to: answer)
        let watch = connection.eventLoop.scheduleRepeatedTask(initialDelay: .seconds(1), delay: .seconds(1)) { _ in
            if connection.isClosed { answer.fail(Closed()) }  // a second completion is ignored
        }
        defer { watch.cancel() }
        return try answer.futureResult.wait()
    }

    // MARK: Failures

    /// What a PostgreSQL failure means for the ledger, in one line naming the database (never its password).
    func failure(_ error: any Error, _ doing: String) -> LedgerError {
        guard let error = error as? PSQLError else { return .io("the database \(location) \(doing): \(error)") }
        if let info = error.serverInfo {
            let message = info[.message] ?? "error"
            let state = info[.sqlState] ?? ""
            if state == "53100" { return .noSpace("the database \(location) \(doing): the disk is full: \(message)") }
            return .io("the database \(location) \(doing): \(message) (SQLSTATE \(state))")
        }
        let cause = error.underlying.map { ": \(String(describing: $0))" } ?? ""
        switch error.code {
        case .serverClosedConnection, .clientClosedConnection, .uncleanShutdown:
            return .io("the database \(location) \(doing): the connection was lost\(cause)")
        case .connectionError:
            return .io("the database \(location) \(doing): cannot connect\(cause)")
        default:
            return .io("the database \(location) \(doing): \(error.code)\(cause)")
        }
    }
}

/// The database's connections as a service of a program's lifecycle (`vote serve` runs it in its service group,
/// first, so that a graceful shutdown stops it last): every pool the store opens through it runs on its one event
/// loop. When the group shuts it down, after the server has stopped and the ledger is closed, it closes the pools'
/// idle connections (a pool refuses work from then on), waits up to 10 seconds for those still at work (each is
/// closed as it comes back) and for every closing a pool began as it went away, and stops the loop: each
/// connection ends with a goodbye to the server rather than being dropped when the process exits. A pool opened
/// or a connection handed back after that is closed at once. A program that never runs it stops the loop when
/// it goes away.
public final class PostgresDatabase: Service, Sendable {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    private let state = Locked(State())

    private struct State: @unchecked Sendable {
        /// The pools opened through it, held weakly: a reader that goes away closes its own.
        var pools: [Weak] = []
        /// Pools' closings not yet done.
        var closing = 0
        /// Whether the loop has stopped (`run` has ended).
        var stopped = false
    }

    private struct Weak {
        weak var pool: PostgresConnections?
    }

    public init() {}

    deinit { group.shutdownGracefully { _ in } }

    /// Adds `pool`; false once the loop has stopped (the pool is then to refuse work).
    func add(_ pool: PostgresConnections) -> Bool {
        state.withLock { state in
            guard !state.stopped else { return false }
            state.pools.removeAll { $0.pool == nil }
            state.pools.append(Weak(pool: pool))
            return true
        }
    }

    /// Ends `connections` with a Terminate message each (postgres-nio's `close()` just drops the socket, which
    /// the server logs as an unexpected EOF), counted until done; nothing once the loop has stopped (stopping
    /// it closed them).
    func close(_ connections: [PostgresConnection]) {
        guard !connections.isEmpty else { return }
        let counted = state.withLock { state in
            guard !state.stopped else { return false }
            state.closing += 1
            return true
        }
        guard counted else { return }
        Task {
            for connection in connections { try? await connection.closeGracefully() }
            state.withLock { $0.closing -= 1 }
        }
    }

    /// Waits for the program's graceful shutdown, then closes every pool, waits for connections at work and
    /// closings under way, and stops the loop.
    public func run() async throws {
        try? await gracefulShutdown()
        let open = state.withLock { state in state.pools.compactMap(\.pool) }
        for pool in open { pool.close() }
        let deadline = ContinuousClock.now + .seconds(10)
        while state.withLock({ $0.closing > 0 }) || open.contains(where: { $0.inUse > 0 }),
            ContinuousClock.now < deadline
        {
            // In a task of its own: should the group be cancelled, a cancelled sleep would not wait at all.
            await Task { try? await Task.sleep(for: .milliseconds(10)) }.value
        }
        state.withLock { $0.stopped = true }
        try await group.shutdownGracefully()
    }
}

/// One connection taken from the pool for a unit of work.
final class Session {
    let connection: PostgresConnection
    let connections: PostgresConnections
    /// The SQLSTATE of the last statement the server refused (a caller retries a serialization failure).
    private(set) var refusedState: String?
    /// Whether the last failure was the session's own (connection lost or never made), not a statement's.
    private(set) var lostConnection = false
    /// Statements run (or tried) so far.
    private(set) var statements = 0

    init(connection: PostgresConnection, connections: PostgresConnections) {
        self.connection = connection
        self.connections = connections
    }

    /// Runs `query` and returns its rows and row count; a failure becomes a `LedgerError` saying it was `doing`.
    @discardableResult
    func run(_ query: PostgresQuery, _ doing: String) throws(LedgerError) -> PostgresQueryResult {
        statements += 1
        do {
            return try PostgresConnections.wait(
                connection.query(query, logger: PostgresConnections.logger), on: connection)
        } catch {
            refusedState = (error as? PSQLError)?.serverInfo?[.sqlState]
            // No server answer at all, or the server ending the session (57P: shut down, crashed, restarting).
            lostConnection = refusedState.map { $0.hasPrefix("57P") || $0.hasPrefix("08") } ?? true
            throw connections.failure(error, doing)
        }
    }
}
