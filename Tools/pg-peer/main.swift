import Crypto
import Foundation
import Hummingbird
import PostgresNIO

// The server a team would build instead of `vote serve` on PostgreSQL, which Tools/bench-http runs under the same
// load (the same route, bodies and tokens) to compare like with like: Hummingbird with one route, postgres-nio's
// `PostgresClient` pool, and one transaction per vote.
//
//     pg-peer SOCKET_DIRECTORY DATABASE CONNECTIONS
//
// connects as `postgres` over the Unix socket in SOCKET_DIRECTORY (Tools/pg-cluster's), keeps CONNECTIONS
// connections open (one per concurrent request of the load: no request waits for a connection), creates its
// tables first if they are not there (`schema`), listens on a free loopback port and prints "listening on URL" once
// it accepts. Whoever runs it fills `voters` and `candidates` (Tools/bench-http: the tokens of `vote serve`'s line).
//
// POST /api/v1/places/P/votes with {"candidate": C, "token": "…"} (a voting token as `vote` prints it: dashes and
// case do not matter, the 33rd character is its check character) casts the vote as `CastVote` says and answers
// 201 with a receipt, 409 if the token has voted, 404 if it is unknown or the candidate is, 400 for a malformed
// body or token. Durable: every session runs with synchronous_commit on, so a 201 follows the commit's flush.

/// The tables: `voters` is the pgbench line's table; a vote row records the place, the choice (a registered
/// candidate, by foreign key) and the hash of the token that cast it.
let schema: [PostgresQuery] = [
    """
    CREATE TABLE IF NOT EXISTS voters (token_hash bytea PRIMARY KEY, place int NOT NULL,
        voted boolean NOT NULL DEFAULT false)
    """,
    "CREATE TABLE IF NOT EXISTS candidates (place int NOT NULL, id int NOT NULL, PRIMARY KEY (place, id))",
    """
    CREATE TABLE IF NOT EXISTS votes (id bigserial PRIMARY KEY, place int NOT NULL, choice int NOT NULL,
        token_hash bytea NOT NULL, cast_at timestamptz NOT NULL DEFAULT now(),
        FOREIGN KEY (place, choice) REFERENCES candidates)
    """,
]

/// One vote as one statement, so one transaction and one round trip: the UPDATE of the pgbench line (the token must
/// be there and unvoted) feeding the INSERT of the vote row. No row back: nothing was written, and the caller asks
/// `VoterStatus` why. PostgreSQL sends the result with ReadyForQuery, after the implicit transaction has committed
/// (and, synchronous_commit on, flushed), and the route reads it to its end before answering, so a 201 means a
/// durable vote. Prepared once per connection (postgres-nio does it on first use).
struct CastVote: PostgresPreparedStatement {
    static let sql = """
        WITH voter AS (
            UPDATE voters SET voted = true WHERE place = $1 AND token_hash = $2 AND voted = false
            RETURNING place, token_hash)
        INSERT INTO votes (place, choice, token_hash) SELECT place, $3, token_hash FROM voter
        RETURNING id, cast_at
        """
    typealias Row = (Int64, Date)

    var place: Int32
    var tokenHash: ByteBuffer
    var candidate: Int32

    func makeBindings() -> PostgresBindings {
        var bindings = PostgresBindings()
        bindings.append(place)
        bindings.append(tokenHash)
        bindings.append(candidate)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}

/// Why a vote wrote nothing: the token's row (it has voted: `CastVote` waits for a vote of the same token in flight,
/// so an unvoted row does not stay unvoted), or no row (unknown). Only refused votes ask.
struct VoterStatus: PostgresPreparedStatement {
    static let sql = "SELECT voted FROM voters WHERE place = $1 AND token_hash = $2"
    typealias Row = Bool

    var place: Int32
    var tokenHash: ByteBuffer

    func makeBindings() -> PostgresBindings {
        var bindings = PostgresBindings()
        bindings.append(place)
        bindings.append(tokenHash)
        return bindings
    }

    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}

/// The request body `vote serve` takes.
struct VoteRequest: Decodable {
    var candidate: Int32
    var token: String
}

/// What the voter keeps: the vote's number and time, and the hash of the token that cast it.
struct Receipt: Encodable {
    var place: Int32
    var candidate: Int32
    var vote: Int64
    var castAt: Date
    var tokenHash: String

    enum CodingKeys: String, CodingKey {
        case place, candidate, vote
        case castAt = "cast_at"
        case tokenHash = "token_hash"
    }
}

/// SHA-256 of a token's 32 random characters (upper case, no dashes or spaces, without the check character), as
/// `vote` hashes it, so the peer finds the tokens Tools/bench-http loaded; `nil` if it cannot be a token.
func tokenHash(_ text: String) -> ByteBuffer? {
    var canonical: [UInt8] = []
    canonical.reserveCapacity(33)
    for byte in text.utf8 where byte != UInt8(ascii: "-") && byte != UInt8(ascii: " ") {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"): canonical.append(byte - 32)
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "2")...UInt8(ascii: "7"): canonical.append(byte)
        default: return nil
        }
    }
    guard canonical.count == 32 || canonical.count == 33 else { return nil }
    return ByteBuffer(bytes: SHA256.hash(data: canonical[..<32]))
}

/// Lower-case hexadecimal, as receipts show hashes.
func hex(_ bytes: ByteBuffer) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var out: [UInt8] = []
    out.reserveCapacity(2 * bytes.readableBytes)
    for byte in bytes.readableBytesView {
        out.append(digits[Int(byte >> 4)])
        out.append(digits[Int(byte & 15)])
    }
    return String(decoding: out, as: UTF8.self)
}

/// The receipt's JSON, padded with spaces (still JSON) to the size of `vote serve`'s receipt (2,000 bytes, whose
/// Merkle proof and signature the peer has no counterpart of), so every server of the bench sends the same bytes.
let receiptSize = 2000
let encoder: JSONEncoder = {
    let encoder = JSONEncoder()
    encoder.dateEncodingStrategy = .iso8601
    return encoder
}()

func created(_ receipt: Receipt) throws -> Response {
    var body = ByteBuffer(data: try encoder.encode(receipt))
    body.writeRepeatingByte(UInt8(ascii: " "), count: max(0, receiptSize - body.readableBytes))
    return Response(status: .created, headers: [.contentType: "application/json"], body: .init(byteBuffer: body))
}

let arguments = CommandLine.arguments
guard arguments.count == 4, let connections = Int(arguments[3]), connections > 0 else {
    FileHandle.standardError.write(Data("usage: pg-peer SOCKET_DIRECTORY DATABASE CONNECTIONS\n".utf8))
    exit(2)
}
let socket = arguments[1] + "/.s.PGSQL.5432"
// The tables, on a connection of its own before the pool starts: a database that cannot be reached ends the
// program with one line, instead of a server whose first request waits for it.
do {
    let connection = try await PostgresConnection.connect(
        configuration: .init(unixSocketPath: socket, username: "postgres", password: nil, database: arguments[2]),
        id: 0, logger: Logger(label: "pg-peer"))
    for statement in schema {
        _ = try await connection.query(statement, logger: Logger(label: "pg-peer")).get()
    }
    try await connection.closeGracefully()
} catch {
    FileHandle.standardError.write(Data("pg-peer: cannot create the tables: \(String(reflecting: error))\n".utf8))
    exit(1)
}
var configuration = PostgresClient.Configuration(
    unixSocketPath: socket, username: "postgres", password: nil, database: arguments[2])
configuration.options.additionalStartupParameters = [("synchronous_commit", "on")]
configuration.options.maximumConnections = connections
configuration.options.minimumConnections = connections
let client = PostgresClient(configuration: configuration)

let router = Router()
router.post("api/v1/places/:place/votes") { request, context -> Response in
    guard let place = context.parameters.get("place", as: Int32.self) else {
        throw HTTPError(.notFound, message: "no such place")
    }
    let vote = try await request.decode(as: VoteRequest.self, context: context)
    guard let hash = tokenHash(vote.token) else { throw HTTPError(.badRequest, message: "the token is malformed") }
    // Every row is read before the answer, so the statement has completed (and its commit with it).
    var recorded: CastVote.Row?
    do {
        for try await row in try await client.execute(
            CastVote(place: place, tokenHash: hash, candidate: vote.candidate))
        {
            recorded = row
        }
    } catch let error as PSQLError where error.serverInfo?[.sqlState] == "23503" {
        throw HTTPError(.notFound, message: "no such candidate")
    }
    if let (id, castAt) = recorded {
        return try created(
            Receipt(place: place, candidate: vote.candidate, vote: id, castAt: castAt, tokenHash: hex(hash)))
    }
    var known = false
    for try await _ in try await client.execute(VoterStatus(place: place, tokenHash: hash)) { known = true }
    if known { throw HTTPError(.conflict, message: "this token has voted") }
    throw HTTPError(.notFound, message: "the token is not authorised in this place")
}
let app = Application(
    router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)), services: [client],
    onServerRunning: { channel in
        let line = "listening on http://127.0.0.1:\(channel.localAddress?.port ?? 0)\n"
        _ = line.withCString { write(1, $0, strlen($0)) }
    })
try await app.runService()
