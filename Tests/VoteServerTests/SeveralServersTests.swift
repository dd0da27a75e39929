import Foundation
import HTTPTypes
import TestSupport
import Testing
import VoteLedger

/// Several `vote serve` processes on one PostgreSQL database (a cluster `Tools/pg-cluster` makes for the test):
/// 64 clients spread over them, with distinct tokens (every one counted once) and with the same tokens sent to
/// every server (each counted once); every server shows the others' votes; the chain verifies.
@Suite(.serialized, .timeLimit(.minutes(10))) struct SeveralServersTests {
    /// Sends each vote at once on its own connection to the server `server(index)` names; the statuses.
    static func castAtOnce(
        _ votes: [(candidate: Int, token: String)], server: @escaping @Sendable (Int) -> Int
    ) async throws -> [HTTPResponse.Status] {
        try await withThrowingTaskGroup(of: HTTPResponse.Status.self) { group in
            for (index, vote) in votes.enumerated() {
                group.addTask {
                    try await fetch(
                        server(index), "/api/v1/places/1/votes", .post, headers: jsonHeaders,
                        body: body(["candidate": vote.candidate, "token": vote.token])
                    ).status
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }

    @Test(arguments: [2, 4]) func serversShareOneLedger(servers count: Int) async throws {
        let database = try PostgresServer()
        let election = try ProcessLedger("Campus Union", database: database.url)
        let (_, tokens) = try await election.register(
            candidates: ["Ada", "Grace"], voters: (1...96).map { "member-\($0)" })
        let servers = try (0..<count).map { _ in try election.serve(offset: hour + 1000) }
        let ports = servers.map(\.port)

        // 64 clients with distinct tokens, spread over the servers: every vote counts once.
        let distinct = try await SeveralServersTests.castAtOnce(tokens[0..<64].map { (candidate: 1, token: $0) }) {
            ports[$0 % ports.count]
        }
        #expect(distinct.allSatisfy { $0 == .created }, "\(distinct)")
        // 8 tokens, each sent 8 times across every server at once: each counts once, the rest are refused.
        let repeated = tokens[64..<72].flatMap { token in Array(repeating: (candidate: 2, token: token), count: 8) }
        let same = try await SeveralServersTests.castAtOnce(repeated) { ports[($0 / 2) % ports.count] }
        #expect(same.filter { $0 == .created }.count == 8, "\(same)")
        #expect(same.filter { $0 == .conflict }.count == 56, "\(same)")

        // Each server shows every vote, whichever server took it (its writer reads the others' blocks).
        for port in ports {
            try await waitFor(
                "server on port \(port) to show 72 votes", read: { try await SeveralServersTests.voted(port) },
                until: { $0 == 72 })
        }
        for server in servers {
            let stopped = server.stop()
            #expect(stopped.status == 0, "\(stopped.err)")
        }
        let verified = try VoteBinary.run(["verify", "--json"] + election.location, clockOffset: hour + 1000)
        #expect(verified.status == 0, "\(verified.err)")
        let tally = try VoteBinary.run(
            ["tally", "--place", "1", "--json"] + election.location, clockOffset: hour + 1000)
        let counted = try JSONSerialization.jsonObject(with: Data(tally.out.utf8)) as? [String: Any]
        #expect((counted?["turnout"] as? [String: Any])?["voted"] as? Int == 72, "\(tally.out) \(tally.err)")
    }

    /// Casts `tokens` from `clients` clients, each sending its share one vote after another to the server
    /// `server(index)` names (token `index` of the list); once `count` answers have come, the client that got the
    /// last of them runs `event` (a kill, a crash) while the others go on sending. Each token with its answer's
    /// status, or nil if no answer came (the server died, the connection was cut).
    static func cast(
        _ tokens: [String], clients: Int, server: @escaping @Sendable (Int) -> Int, after count: Int,
        _ event: @escaping @Sendable () throws -> Void
    ) async throws -> [(token: String, status: HTTPResponse.Status?)] {
        let answered = Answered()
        return try await withThrowingTaskGroup(of: [(String, HTTPResponse.Status?)].self) { group in
            for client in 0..<clients {
                group.addTask {
                    var answers: [(String, HTTPResponse.Status?)] = []
                    for index in stride(from: client, to: tokens.count, by: clients) {
                        let answer = try? await fetch(
                            server(index), "/api/v1/places/1/votes", .post, headers: jsonHeaders,
                            body: body(["candidate": 1, "token": tokens[index]]))
                        answers.append((tokens[index], answer?.status))
                        if answered.add() == count { try event() }
                    }
                    return answers
                }
            }
            return try await group.reduce(into: []) { $0 += $1.map { (token: $0.0, status: $0.1) } }
        }
    }

    /// A count that many tasks add to.
    final class Answered: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        /// Adds one; the count after it.
        func add() -> Int {
            lock.withLock {
                count += 1; return count
            }
        }
    }

    /// The number of votes server `port` shows for place 1.
    static func voted(_ port: Int) async throws -> Int {
        let tally = try await fetch(port, "/api/v1/places/1/tally", .get)
        return (object(tally.body)["turnout"] as? [String: Any])?["voted"] as? Int ?? -1
    }

    /// A server SIGKILLed while votes reach it, then the database stopped as a crash stops it while votes reach
    /// the other and started again: every vote answered 201 is in the ledger, every vote answered with an error
    /// is not (it can be cast again), the surviving server records again once the database is back, and the
    /// chain verifies. A vote that got no answer may or may not be in: it is never in twice.
    @Test func nothingAnsweredIsLostWhenAServerOrTheDatabaseDies() async throws {
        let database = try PostgresServer()
        let election = try ProcessLedger("Crash Union", database: database.url)
        let (_, tokens) = try await election.register(
            candidates: ["Ada", "Grace"], voters: (1...320).map { "member-\($0)" })
        let doomed = try election.serve(offset: hour + 1000)
        let survivor = try election.serve(offset: hour + 1000)
        let (doomedPort, survivorPort, doomedProcess) = (doomed.port, survivor.port, doomed.process.processIdentifier)

        // A server killed under load: the client that gets the 20th answer kills it, the others go on.
        var answers = try await SeveralServersTests.cast(
            Array(tokens[0..<160]), clients: 16, server: { $0 % 2 == 0 ? doomedPort : survivorPort }, after: 20
        ) { kill(doomedProcess, SIGKILL) }
        _ = doomed.stop(sending: nil)
        // The database crashed under load and started again, while the other clients go on voting.
        answers += try await SeveralServersTests.cast(
            Array(tokens[160..<280]), clients: 8, server: { _ in survivorPort }, after: 20
        ) {
            try database.stop(immediate: true)
            try database.start()
        }
        // The survivor records again (its next blocks reconnect), without a restart: a fresh token each try (one
        // answered 503 may yet have been recorded), the last one again once they run out, for up to the deadline.
        var tries = 0
        try await waitFor(
            "the server to record again after the database came back", every: .milliseconds(100),
            read: {
                let token = tokens[280 + min(tries, 39)]
                tries += 1
                return try await fetch(
                    survivorPort, "/api/v1/places/1/votes", .post, headers: jsonHeaders,
                    body: body(["candidate": 2, "token": token])
                ).status
            }, until: { $0 == .created })
        #expect(answers.contains { $0.status == .created })
        #expect(answers.contains { $0.status == nil || $0.status == .serviceUnavailable }, "nothing was cut off")

        // Every token answered with an error was not recorded: it votes now. Every 201 was: it is refused now.
        for (token, status) in answers where status != nil {
            let again = try await fetch(
                survivorPort, "/api/v1/places/1/votes", .post, headers: jsonHeaders,
                body: body(["candidate": 2, "token": token]))
            if status == .created {
                #expect(again.status == .conflict, "a vote answered 201 is missing")
            } else {
                #expect(again.status == .created, "a vote answered \(String(describing: status)) was recorded")
            }
        }
        let stopped = survivor.stop()
        #expect(stopped.status == 0, "\(stopped.err)")
        let verified = try VoteBinary.run(["verify"] + election.location, clockOffset: hour + 1000)
        #expect(verified.status == 0, "\(verified.err)")
    }
}
