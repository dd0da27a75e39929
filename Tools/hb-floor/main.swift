import Glibc
import Hummingbird

// What Tools/bench-http measures VoteLedger's server against besides PostgreSQL: the cheapest server
// Hummingbird makes. One route, no middleware, no ledger, no JSON: it reads the request body and answers
// a fixed 201 with a body the size of a vote's receipt (2,000 bytes). Under the bench's load its rate is
// the most any Hummingbird server can answer on that machine. Prints "listening on URL" once it accepts.
let receipt = ByteBuffer(string: String(repeating: "x", count: 2000))
let router = Router()
router.post("api/v1/places/:place/votes") { request, _ -> Response in
    _ = try await request.body.collect(upTo: 64 * 1024)
    return Response(status: .created, headers: [.contentType: "application/json"], body: .init(byteBuffer: receipt))
}
let app = Application(
    router: router, configuration: .init(address: .hostname("127.0.0.1", port: 0)),
    onServerRunning: { channel in
        let line = "listening on http://127.0.0.1:\(channel.localAddress?.port ?? 0)\n"
        _ = line.withCString { write(1, $0, strlen($0)) }
    })
try await app.runService()
