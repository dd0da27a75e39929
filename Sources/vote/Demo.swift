import ArgumentParser
import Election
import FileDriver
import FileStore
import Foundation
import Ledger
import OutputFiles
import VoteCommandLine
import VoteLedger

/// `vote demo`: a complete small election, end to end, explained step by step; with `--serve`, then a second
/// place open for voting for a day, served with the web app (`vote serve`) until SIGINT or SIGTERM.
struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo", abstract: "Run a complete demo election (about 7 seconds) on a fresh ledger.",
        discussion: """
            With --serve it then opens place 2 for voting for a day, prints its voters' tokens, and runs \
            `vote serve` on the ledger: the booth, results, audit page and console are at the printed links, \
            the admin token is printed once; Ctrl-C stops it.
            """)

    @Option(help: "Where to create the demo ledger (default: a new temporary directory).")
    var ledger: String?
    @Flag(help: "Leave an election open for voting and serve it with the web app (vote serve).") var serve = false
    @Option(help: "With --serve: the address to listen on, HOST:PORT (port 0: any free port).")
    var listen = "127.0.0.1:8080"
    @Argument(
        parsing: .postTerminator,
        help: "With --serve: more `vote serve` options, after `--` (e.g. -- --tls-cert FILE --tls-key FILE).")
    var serveOptions: [String] = []

    func validate() throws {
        guard serve || serveOptions.isEmpty else { throw ValidationError("options after -- are for --serve") }
    }

    func run() async throws {
        let path = try ledger ?? temporaryLedgerPath()
        let start = Clock.now()
        func step(_ text: String) throws {
            try Output.line(String(format: "[%5.1fs] ", Double(Clock.now() - start) / 1000) + text)
            try Output.flush()  // each step as it happens
        }

        let writer = try VoteLedgerService.createWriter(
            StoreConfiguration(.file(path: path)), name: "Demo Union", now: start)
        let receipt: TlogProof
        do { receipt = try await election(writer, path: path, step: step) } catch {
            await writer.close()
            throw error
        }
        await writer.close()
        let report = try ElectionVerifier.verify(try FileBlockSource(path: path))
        try step(
            "verified \(report.chain.blocks) blocks and \(report.chain.events) events: hashes, tree heads, signatures and every rule re-checked"
        )
        let receiptPath = URL(fileURLWithPath: path).deletingLastPathComponent().path + "/voter1.tlog-proof"
        let file = try OutputFile(creating: receiptPath, what: "receipt")
        try file.appendDurably(receipt.serialized)
        file.close()
        let audit = try Auditor.audit(
            receipt: receipt, ledger: try AuditedLedger(try FileBlockSource(path: path)), key: nil, head: nil)
        try step("voter 1's receipt (\(receiptPath)) audits: included at height \(audit.height) and unchanged since")
        guard serve else {
            try step("done; explore with: vote log --ledger \(path)   or   vote audit --ledger \(path) \(receiptPath)")
            if try !onPath() {
                try step("vote is not on your PATH yet; in this shell: export PATH=\"\(try ownDirectory()):$PATH\"")
            }
            try step("to see the election in a browser (booth, results, audit, console): vote demo --serve")
            return
        }
        try await openPlace(path: path, step: step)
        try runServer(["serve", "--ledger", path, "--listen", listen] + serveOptions)
    }

    /// Place 1 from creation to certified results, told step by step; returns voter 1's receipt.
    private func election(
        _ writer: LedgerWriter, path: String, step: (String) throws -> Void
    ) async throws -> TlogProof {
        try step(
            "created a ledger at \(path): signed genesis block; authority key and voter secret (unencrypted, for the demo) in \(KeyDirectory(defaultFor: path).path)"
        )

        let now = Clock.now()
        let registration = TimeWindow(start: now, end: now + 2_000)
        let voting = TimeWindow(start: now + 2_000, end: now + 5_000)
        _ = try await writer.submit(
            .createPlace(
                name: "Board election 2026", description: "Elect the union board.", registration: registration,
                voting: voting, maxCandidates: 5))
        try step("created place 1 \"Board election 2026\": registration open for 2 s, then voting for 3 s")

        let names = [("Ada Park", "Fair pay for all"), ("Min-jun Lee", "Shorter weeks"), ("Sofia Rossi", "Open books")]
        let registered = try await writer.submit(
            batch: names.map { Command.registerCandidate(place: 1, name: $0.0, pledge: $0.1) })
        try step("registered \(registered.accepted) candidates in one block: \(names.map(\.0).joined(separator: ", "))")

        let members = ["m-1001", "m-1002", "m-1003", "m-1004", "+821012345678"]
        var tokens: [VotingToken] = []
        var commands: [Command] = []
        for member in members {
            let token = try VotingToken.generate()
            tokens.append(token)
            commands.append(
                .authorizeVoter(place: 1, voterTag: try writer.voterSecret.tag(member), tokenHash: token.hash))
        }
        _ = try await writer.submit(batch: commands)
        try step(
            "authorised \(members.count) voters; only HMAC tags of their ids and SHA-256 of their tokens are on the ledger"
        )
        try step("voter m-1001's token is \(tokens[0].display) (shown once, kept by the voter)")

        try waitUntil(voting.start)
        try step("voting is open")
        let choices: [UInt32] = [1, 2, 1, 3]
        var receipts: [TlogProof] = []
        for (index, candidate) in choices.enumerated() {
            let outcome = try await writer.submit(
                batch: [.castVote(place: 1, candidate: candidate, tokenHash: tokens[index].hash)], proofs: true)
            let receipt = try outcome.receipt(of: 0)
            receipts.append(try outcome.tlogProof(for: receipt))
            try step(
                "voter \(index + 1) voted; receipt \(receipt.eventHash.hex.prefix(16))… in block \(receipt.height)")
        }

        do {
            _ = try await writer.submit(.castVote(place: 1, candidate: 2, tokenHash: tokens[0].hash))
        } catch let error as VoteError {
            try step("voter 1 tried to vote again: rejected, \"\(error.message)\"; the first vote stands")
        }

        try waitUntil(voting.end)
        do {
            _ = try await writer.submit(.castVote(place: 1, candidate: 2, tokenHash: tokens[4].hash))
        } catch let error as VoteError {
            try step("voter 5 tried to vote after the window closed: rejected, \"\(error.message)\"")
        }

        // The ledger puts the certified tree size in (the events before the certification).
        let certified = try await writer.submit(.certifyResults(place: 1, treeSize: 0))
        try step("voting closed; results certified on the ledger in block \(certified.height)")
        guard let place = try await writer.state().place(1) else { return receipts[0] }
        let turnout = Projections.turnout(place)
        try step("results (turnout \(turnout.voted) of \(turnout.authorized)):")
        for row in Projections.tally(place) {
            try Output.line(
                "          \(row.candidate). \(Output.padded(row.name, to: 12)) \(Output.count(row.votes, "vote"))  \(Output.percent(row.votes, of: turnout.voted))"
            )
        }
        return receipts[0]
    }

    /// Place 2, open for voting for a day from two seconds on, with the same candidates and five voters
    /// whose tokens it prints: what the served demo's booth is for.
    private func openPlace(path: String, step: (String) throws -> Void) async throws {
        let writer = try VoteLedgerService.openWriter(StoreConfiguration(.file(path: path)))
        let (tokens, voting): ([VotingToken], TimeWindow)
        do { (tokens, voting) = try await openPlace(writer) } catch {
            await writer.close()
            throw error
        }
        await writer.close()
        try step("created place 2 \"Board election, served\": voting opens in 2 s and stays open for a day")
        for (index, token) in tokens.enumerated() {
            try Output.line("          voting token \(index + 1): \(token.display)")
        }
        try waitUntil(voting.start)
        try step("voting is open in place 2; serving the ledger (Ctrl-C stops it):")
        try Output.flush()
    }

    /// Writes place 2, its candidates and voters; returns the voters' tokens and the voting window.
    private func openPlace(_ writer: LedgerWriter) async throws -> ([VotingToken], TimeWindow) {
        let now = Clock.now()
        let voting = TimeWindow(start: now + 2_000, end: now + 86_400_000)
        _ = try await writer.submit(
            .createPlace(
                name: "Board election, served", description: "Vote in the booth, then check the receipt.",
                registration: TimeWindow(start: now, end: voting.start), voting: voting, maxCandidates: 5))
        let names = [("Ada Park", "Fair pay for all"), ("Min-jun Lee", "Shorter weeks"), ("Sofia Rossi", "Open books")]
        _ = try await writer.submit(
            batch: names.map { Command.registerCandidate(place: 2, name: $0.0, pledge: $0.1) })
        let tokens = try (1...5).map { _ in try VotingToken.generate() }
        _ = try await writer.submit(
            batch: try zip(2001..., tokens).map { member, token -> Command in
                .authorizeVoter(place: 2, voterTag: try writer.voterSecret.tag("m-\(member)"), tokenHash: token.hash)
            })
        return (tokens, voting)
    }

    private func temporaryLedgerPath() throws -> String {
        var base = NSTemporaryDirectory()
        while base.count > 1, base.hasSuffix("/") { base.removeLast() }
        var template = Array((base + "/vote-demo-XXXXXX").utf8CString)
        guard template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) != nil else {
            throw VoteError(.io, "cannot create a temporary directory")
        }
        return String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) + "/ledger"
    }

    private func waitUntil(_ time: Int64) throws {
        let wait = time - Clock.now()
        if wait > 0 { usleep(UInt32(wait) * 1000 + 50_000) }
    }
}
