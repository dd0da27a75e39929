import Election
import FileDriver
import FileStore
import Foundation
import Hummingbird
import HummingbirdTesting
import Ledger
import LedgerCrypto
import Logging
import TestSupport
import Testing
import VoteLedger
import VoteServer

/// A clock the test steps (ms since the epoch): windows open and close because the test says so, never
/// because the machine was slow.
final class SteppedClock: @unchecked Sendable {
    private let lock = NSLock()
    private var time: Int64
    init(_ time: Int64) { self.time = time }
    var now: Int64 { lock.withLock { time } }
    func set(_ time: Int64) { lock.withLock { self.time = time } }
}

/// `value` as an ISO 8601 time (ms since the epoch), as the API takes it.
func iso(_ ms: Int64) -> String { Timestamp.format(ms) }

/// A JSON body, its keys sorted: the same object gives the same bytes every time (a Swift dictionary's order
/// differs between two instances with the same keys, and a retry with an `Idempotency-Key` must repeat its bytes).
func body(_ object: Any) -> ByteBuffer {
    ByteBuffer(bytes: try! JSONSerialization.data(withJSONObject: object, options: .sortedKeys))
}

/// A response body as a JSON object.
func object(_ buffer: ByteBuffer?) -> [String: Any] {
    guard let buffer else { return [:] }
    return (try? JSONSerialization.jsonObject(with: Data(buffer.readableBytesView))) as? [String: Any] ?? [:]
}

/// A response body as a JSON array.
func array(_ buffer: ByteBuffer?) -> [[String: Any]] {
    guard let buffer else { return [] }
    return (try? JSONSerialization.jsonObject(with: Data(buffer.readableBytesView))) as? [[String: Any]] ?? []
}

/// The error code of an error response.
func errorCode(_ buffer: ByteBuffer?) -> String? {
    (object(buffer)["error"] as? [String: Any])?["code"] as? String
}

let jsonHeaders: HTTPFields = [.contentType: "application/json"]

/// Records every token a test issues in $VOTE_SECRETS_LOG, which CI greps the whole test output for: no
/// admin or voting token may ever be printed (`recordSecrets`).
enum SecretsLog {
    static func record(_ secrets: [String]) { recordSecrets(secrets) }
}

/// A logger for in-process tests: only errors (the access log itself is checked on the real process).
let quietLogger: Logger = {
    var logger = Logger(label: "test")
    logger.logLevel = .error
    return logger
}()

/// One request on a new connection, given ten minutes to be answered (the test client's own default gives
/// up after 15 s, which a starved test task on a loaded machine can exceed).
@Sendable func fetch(
    _ port: Int, _ uri: String, _ method: HTTPRequest.Method = .get, headers: HTTPFields = [:], body: ByteBuffer? = nil
) async throws -> TestClient.Response {
    try await TestClient.withClient(host: "127.0.0.1", port: port, configuration: .init(timeout: .seconds(600))) {
        try await $0.execute(TestClient.Request(uri, method: method, headers: headers, body: body))
    }
}

// MARK: - An election's set-up

/// An hour (ms). Every window in these tests is an hour long and the clock is stepped past a boundary, so no
/// window opens or closes because the machine was slow.
let hour: Int64 = 3_600_000

/// A place as the authority posts it: registration open for the hour from `start`, voting the hour after;
/// `ballot` "anonymous" for blind-signed ballot credentials.
func placeBody(
    _ name: String = "Board", from start: Int64, description: String? = nil, ballot: String? = nil
) -> [String: Any] {
    var place: [String: Any] = [
        "name": name, "registration": ["start": iso(start), "end": iso(start + hour)],
        "voting": ["start": iso(start + hour), "end": iso(start + 2 * hour)],
    ]
    if let description { place["description"] = description }
    if let ballot { place["ballot"] = ballot }
    return place
}

/// The authority's headers, for a JSON body or (`csv`) a list of voters.
func adminHeaders(_ admin: String, csv: Bool = false) -> HTTPFields {
    [.contentType: csv ? "text/csv" : "application/json", .authorization: "Bearer \(admin)"]
}

/// Where set-up requests go: through the in-process router (the client of `app.test(.router)`), or to a live
/// server's port, each on a new connection (`fetch`).
enum Requests: Sendable {
    case router(any TestClientProtocol)
    case port(Int)

    func send(
        _ uri: String, _ method: HTTPRequest.Method, headers: HTTPFields, body: ByteBuffer
    ) async throws -> (status: HTTPResponse.Status, body: ByteBuffer?) {
        switch self {
        case .router(let client):
            let response = try await client.executeRequest(uri: uri, method: method, headers: headers, body: body)
            return (response.status, response.body)
        case .port(let port):
            let response = try await fetch(port, uri, method, headers: headers, body: body)
            return (response.status, response.body)
        }
    }
}

/// Sets up place `id` as the authority does, through `requests`: the place (`placeBody(from: start)`, with
/// `ballot`), its `candidates`, then `voters` authorised by one CSV. Each step is expected to succeed and every
/// line of the CSV to be accepted. Returns the voters' tokens (issuance codes, in an anonymous place) in the
/// list's order, recorded in SecretsLog.
func registerPlace(
    _ requests: Requests, admin: String, start: Int64, description: String? = nil, ballot: String? = nil,
    id: Int = 1, candidates: [String] = [], voters: [String], sourceLocation: SourceLocation = #_sourceLocation
) async throws -> [String] {
    let place = try await requests.send(
        "/api/v1/places", .post, headers: adminHeaders(admin),
        body: body(placeBody(from: start, description: description, ballot: ballot)))
    #expect(place.status == .created, sourceLocation: sourceLocation)
    for name in candidates {
        let candidate = try await requests.send(
            "/api/v1/places/\(id)/candidates", .post, headers: adminHeaders(admin), body: body(["name": name]))
        #expect(candidate.status == .created, "\(name)", sourceLocation: sourceLocation)
    }
    let authorised = try await requests.send(
        "/api/v1/places/\(id)/voters", .post, headers: adminHeaders(admin, csv: true),
        body: ByteBuffer(string: voters.joined(separator: "\n")))
    let answer = object(authorised.body)
    #expect(authorised.status == .created, sourceLocation: sourceLocation)
    #expect((answer["rejected"] as? [Any])?.isEmpty == true, sourceLocation: sourceLocation)
    let tokens = (answer["tokens"] as? [[String: Any]] ?? []).compactMap { $0["token"] as? String }
    SecretsLog.record(tokens)
    return tokens
}

// MARK: - A ledger served in process

/// A ledger served in process by a `LedgerServer` on a clock the test steps (it starts at `start`), with an
/// admin token recorded in SecretsLog: what every in-process server test starts from. The ledger is held in
/// memory (the memory store, its admin token's hash given to the server), or with `.file` in a ledger
/// directory under `root` (the file store, the hash in its key directory) for the tests about the files.
/// `root` is a temporary directory either way, which goes with the fixture.
final class ServedLedger: Sendable {
    /// Where the served ledger is kept.
    enum Store { case memory, file }

    let root = makeTemporaryDirectory()
    let start = Clock.now()
    let clock: SteppedClock
    let server: LedgerServer
    /// The store's reader: what the server reads, and what a test checks the ledger through.
    let source: any BlockSource
    let admin: String

    /// A new ledger named `name` in `store`; `capacity` bounds the writer's queue (the server's own default if
    /// nil).
    init(_ name: String, capacity: Int? = nil, store: Store = .memory) throws {
        let clock = SteppedClock(start)
        self.clock = clock
        let ledger: ElectionLedger
        let adminToken: AdminTokenHash
        var keys: (any KeyStore)?
        switch store {
        case .memory:
            ledger = try VoteLedgerService.create(StoreConfiguration(.memory), name: name, now: clock.now)
            admin = Hex.encode(try SecureRandom.bytes(32))
            adminToken = .of(admin)
        case .file:
            let path = root + "/ledger"
            try VoteLedgerService.create(StoreConfiguration(.file(path: path)), name: name, now: clock.now).close()
            ledger = try VoteLedgerService.openLedger(StoreConfiguration(.file(path: path), lockTimeout: 0))
            let directory = KeyDirectory(defaultFor: path)
            admin = try AdminToken.rotate(keys: FileKeyStore(directory))
            adminToken = .stored(FileKeyStore(directory))
            keys = FileKeyStore(directory)
        }
        SecretsLog.record([admin])
        source = try ledger.source()
        let writer = LedgerWriter(ledger, capacity: capacity ?? 100_000, clock: { clock.now })
        server = LedgerServer(writer: writer, source: source, adminToken: adminToken, keys: keys)
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    /// The ledger directory of a `.file` ledger.
    var path: String { root + "/ledger" }
    var auth: HTTPFields { adminHeaders(admin) }

    /// The head block's hash, read from the store as any reader would.
    func head() throws -> String { try source.lastBlock().hash.hex }

    /// `registerPlace` as this ledger's authority, its windows from `start`.
    func register(
        _ requests: Requests, description: String? = nil, ballot: String? = nil, id: Int = 1, candidates: [String] = [],
        voters: [String], sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> [String] {
        try await registerPlace(
            requests, admin: admin, start: start, description: description, ballot: ballot, id: id,
            candidates: candidates, voters: voters, sourceLocation: sourceLocation)
    }

    /// Runs `test` against the routes in process (no socket), then closes the server and verifies the chain.
    func testRoutes(_ test: @Sendable (any TestClientProtocol) async throws -> Void) async throws {
        try await buildApplication(server, configuration: .init(), logger: quietLogger).test(.router, test)
        try await close()
    }

    /// Closes the server; the chain it leaves must verify.
    func close() async throws {
        await server.close()
        _ = try ElectionVerifier.verify(source)
    }
}

// MARK: - A ledger served by the real binary

/// A ledger made by `vote init` in a temporary directory, for the tests that run the real `vote serve` on it,
/// each phase a process with its clock moved past a window's boundary. The directory goes with the fixture.
final class ProcessLedger {
    let root = makeTemporaryDirectory()
    var ledger: String { root + "/ledger" }
    var tokenFile: String { root + "/admin-token" }
    /// Where the place's windows start: registration the hour from here, voting the hour after.
    let start: Int64
    /// The arguments that name the ledger: its directory, or its database and the key directory beside it.
    let location: [String]

    /// A new ledger named `name` in a directory, or in the empty database at `database`.
    init(_ name: String, database: String? = nil) throws {
        let root = root
        location = database.map { ["--store", $0, "--keys", root + "/keys"] } ?? ["--ledger", root + "/ledger"]
        let created = try VoteBinary.run(["init", "--name", name, "--no-passphrase"] + location)
        #expect(created.status == 0, "\(created.err)")
        start = Clock.now()
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    /// `vote serve` on the ledger, its clock `offset` ms ahead of the real one, with `arguments` besides.
    func serve(offset: Int64, arguments: [String] = []) throws -> ServeProcess {
        try ServeProcess(location: location, clockOffset: offset, adminTokenFile: tokenFile, arguments: arguments)
    }

    /// The registration phase: serves the ledger on the real clock, reads the admin token its first start
    /// wrote, runs `whileServing`, sets up place 1 (`registerPlace`) and stops the server, which must exit
    /// cleanly with the admin token nowhere in its log. Returns the admin token (recorded in SecretsLog) and
    /// the voters' tokens.
    func register(
        ballot: String? = nil, candidates: [String], voters: [String],
        whileServing: (ServeProcess) throws -> Void = { _ in }, sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> (admin: String, tokens: [String]) {
        let registration = try serve(offset: 0)
        let admin = try String(contentsOfFile: tokenFile, encoding: .utf8).trimmingCharacters(
            in: .whitespacesAndNewlines)
        SecretsLog.record([admin])
        try whileServing(registration)
        let tokens = try await registerPlace(
            .port(registration.port), admin: admin, start: start, ballot: ballot, candidates: candidates,
            voters: voters, sourceLocation: sourceLocation)
        let stopped = registration.stop()
        #expect(stopped.status == 0, "\(stopped.err)", sourceLocation: sourceLocation)
        #expect(!stopped.err.contains(admin), "the admin token reached the log", sourceLocation: sourceLocation)
        return (admin, tokens)
    }
}
