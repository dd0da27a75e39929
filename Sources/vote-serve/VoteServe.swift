import ArgumentParser
import FileDriver
import FileStore
import Foundation
import Ledger
import Mail
import OutputFiles
import TlogWitness
import VoteCommandLine
import VoteLedger
import VoteServer

/// `vote-serve`: the commands of `vote` that need the HTTP server, in a program of their own so that the
/// server's code (SwiftNIO, Hummingbird) is not loaded by every other command. `vote serve …`,
/// `vote admin-token …` and `vote witness serve …` run it; its usage lines say `vote`, as the user typed.
@main
struct VoteServe: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vote",
        abstract: "The HTTP server of a VoteLedger ledger.",
        subcommands: [Serve.self, AdminTokenCommand.self, WitnessCommand.self])

    static func main() { CommandLineProgram.main(VoteServe.self) }
}

/// `vote serve`: the ledger over HTTP (the JSON API of `/api/v1`). While it runs it is the ledger's one
/// writer: CLI read commands keep working beside it; CLI write commands fail at once, naming it.
struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the ledger over HTTP (JSON API under /api/v1, OpenAPI at /api/v1/openapi.json).",
        discussion: """
            Prints "listening on http://HOST:PORT" once it accepts connections (--listen HOST:0 picks a free \
            port). On first start it creates the admin token and prints it once ("admin token: …"), or writes \
            it to --admin-token-file (0600); only its SHA-256 is kept. SIGTERM or SIGINT stop it gracefully: \
            in-flight requests finish, the last block is written and the ledger is closed.
            """)

    @OptionGroup var ledger: LedgerOptions
    @Option(help: "Address to listen on, HOST:PORT.") var listen = "127.0.0.1:8080"
    @Option(help: "Write a newly created admin token to this new file (0600) instead of printing it.")
    var adminTokenFile: String?
    @Option(help: "Close a connection that completes no request part (headers, a body chunk) for this many seconds.")
    var idleTimeout: Double = 30
    @Option(
        help: ArgumentHelp(
            "Close a connection whose request headers have not arrived in full this many seconds after it opened "
                + "or its last answer was sent."))
    var headTimeout: Double = 10
    @Option(help: "Close a connection whose request body has not arrived in full this many seconds after its headers.")
    var bodyTimeout: Double = 60
    @Option(
        help:
            "With --tls-cert, close a connection whose TLS handshake has not completed this many seconds after it opened."
    )
    var handshakeTimeout: Double = 10
    @Option(help: "Serve at most this many connections at once (more wait in the listen backlog).") var maxConnections =
        1024
    @Option(help: "Connections one client address may hold open at once (more are closed; trusted proxies excepted).")
    var maxConnectionsPerAddress = 128
    @Option(
        help: "Hold a block open up to this many ms for more votes while votes keep arriving (0: never; default 25).")
    var blockHold: Double?
    @Option(
        help: ArgumentHelp(
            "Failed token attempts a client address may make in a row before its failures are answered 429 (one "
                + "more every 3 s); a request with a good token is always served."))
    var tokenFailureBurst = 20
    @Option(help: "Seconds until a client address that used up --token-failure-burst may fail once more (default 3).")
    var tokenFailureRefill: Double = 3
    @Option(
        name: .customLong("trusted-proxy"),
        help: ArgumentHelp(
            "A proxy (CIDR, e.g. 10.0.0.0/8, or one address) whose X-Forwarded-For names the client; repeatable.",
            valueName: "CIDR"))
    var trustedProxies: [String] = []
    @Option(help: "Serve HTTPS with this certificate (PEM, the server's first, then its chain); needs --tls-key.")
    var tlsCert: String?
    @Option(help: "The private key (PEM) of --tls-cert.") var tlsKey: String?
    @Option(
        help: ArgumentHelp(
            "Also serve GET /metrics alone, without the admin token, on this HOST:PORT (plain HTTP; e.g. "
                + "127.0.0.1:9464 for a Prometheus scraper on this host).", valueName: "HOST:PORT"))
    var metricsListen: String?
    @Option(
        name: .customLong("witness"),
        help: ArgumentHelp(
            "A witness to ask for cosignatures of the ledger's heads: its name, its URL and its verifier key (vote "
                + "witness init prints it); repeatable. Receipts and GET /api/v1/head then carry their cosignatures.",
            valueName: "NAME=URL=VKEY"))
    var witnesses: [String] = []
    @Option(
        help: ArgumentHelp(
            "Give up on a witness's answer after this many seconds: a vote waits no longer for its cosignature, "
                + "and it is left out (and asked again in the background) until it answers."))
    var witnessTimeout: Double = 2
    @Option(
        help: ArgumentHelp(
            "Ask the witnesses at most once every this many seconds (a rate a witness can plan for): a vote's answer "
                + "waits for the next round, whose head covers it; 0 asks after each block."))
    var witnessInterval: Double = 1
    @OptionGroup(title: "Mail from the console (as vote voter mail takes them; without them the console cannot mail)")
    var mail: MailOptions
    @OptionGroup var passphrase: PassphraseOptions

    func validate() throws {
        guard Serve.address(listen) != nil else { throw ValidationError("--listen must be HOST:PORT (port 0-65535)") }
        if let metricsListen, Serve.address(metricsListen) == nil {
            throw ValidationError("--metrics-listen must be HOST:PORT (port 0-65535)")
        }
        guard idleTimeout >= 0.001, idleTimeout <= 86_400 else {
            throw ValidationError("--idle-timeout must be 0.001 to 86400 seconds")
        }
        guard headTimeout >= 0.001, headTimeout <= 86_400 else {
            throw ValidationError("--head-timeout must be 0.001 to 86400 seconds")
        }
        guard bodyTimeout >= 0.001, bodyTimeout <= 86_400 else {
            throw ValidationError("--body-timeout must be 0.001 to 86400 seconds")
        }
        guard handshakeTimeout >= 0.001, handshakeTimeout <= 86_400 else {
            throw ValidationError("--handshake-timeout must be 0.001 to 86400 seconds")
        }
        guard tokenFailureBurst >= 1 else { throw ValidationError("--token-failure-burst must be at least 1") }
        guard tokenFailureRefill >= 0.001, tokenFailureRefill <= 86_400 else {
            throw ValidationError("--token-failure-refill must be 0.001 to 86400 seconds")
        }
        if let blockHold, !(0...1000).contains(blockHold) {
            throw ValidationError("--block-hold must be 0 to 1000 ms")
        }
        guard maxConnections >= 1 else { throw ValidationError("--max-connections must be at least 1") }
        guard maxConnectionsPerAddress >= 1 else {
            throw ValidationError("--max-connections-per-address must be at least 1")
        }
        for proxy in trustedProxies where AddressRange(proxy) == nil {
            throw ValidationError("--trusted-proxy must be an IP address or CIDR block (10.0.0.0/8), not '\(proxy)'")
        }
        guard (tlsCert == nil) == (tlsKey == nil) else {
            throw ValidationError("--tls-cert and --tls-key go together")
        }
        guard witnessTimeout >= 0.001, witnessTimeout <= 3600 else {
            throw ValidationError("--witness-timeout must be 0.001 to 3600 seconds")
        }
        guard witnessInterval >= 0, witnessInterval <= 3600 else {
            throw ValidationError("--witness-interval must be 0 to 3600 seconds")
        }
    }

    static func address(_ text: String) -> (host: String, port: Int)? {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
            (0...65535).contains(port),
            colon > text.startIndex
        else { return nil }
        return (String(text[..<colon]), port)
    }

    func run() throws {
        let (host, port) = Serve.address(listen)!
        // Before the ledger is opened: its writer's metrics are made on first use, with the backend there is then.
        ServerMetrics.bootstrap()
        let keys = try ledger.requiredKeyDirectory()
        let endpoints = try witnesses.map { try WitnessEndpoint(option: $0) }
        let cosigning =
            endpoints.isEmpty
            ? nil
            : Cosigning(
                witnesses: endpoints, timeout: .milliseconds(Int64(witnessTimeout * 1000)),
                interval: .milliseconds(Int64(witnessInterval * 1000)))
        // Read before anything else, so bad certificate files refuse the start having written nothing.
        let certificate = try tlsCert.map { try ServerCertificate(certificateFile: $0, keyFile: tlsKey!) }
        // The relay's password is read now, so a missing one refuses the start rather than the first mailing.
        let mailSettings = try mail.settings()
        let hold =
            blockHold.map { LedgerWriter.BlockHold(limit: .microseconds(Int(($0 * 1000).rounded()))) } ?? .standard
        // The server does not wait for another writer: it is started on a ledger no one else is writing.
        let (store, storeServices) = try ledger.served()
        let opened = try VoteLedgerService.openLedger(
            StoreConfiguration(store, passphrase: try passphrase.source(), lockTimeout: 0))
        let source = try opened.source()
        let keyStore = FileKeyStore(keys)
        let server = LedgerServer(
            writer: LedgerWriter(opened, hold: hold), source: source, adminToken: .stored(keyStore),
            cosigning: cosigning, keys: keyStore, mail: mailSettings)
        let created = try AdminToken.createIfMissing(keys: keyStore) { token in
            if let adminTokenFile {
                try AdminTokenCommand.write(token, to: adminTokenFile)
            } else {
                try Output.line("admin token: \(token)")
                try Output.flush()
            }
        }
        if created && adminTokenFile == nil {
            Output.note("the admin token is shown only this once; `vote admin-token rotate` replaces it")
        }
        let limits = ServerLimits(
            idleTimeout: .milliseconds(Int64(idleTimeout * 1000)),
            headTimeout: .milliseconds(Int64(headTimeout * 1000)),
            bodyTimeout: .milliseconds(Int64(bodyTimeout * 1000)),
            handshakeTimeout: .milliseconds(Int64(handshakeTimeout * 1000)),
            maxConnections: maxConnections, maxConnectionsPerAddress: maxConnectionsPerAddress,
            failureBurst: tokenFailureBurst, failureRefillMs: Int64((tokenFailureRefill * 1000).rounded()),
            trustedProxies: trustedProxies.compactMap(AddressRange.init))
        // Recorded in the ledger directory's `serve` file, locked while the server runs, so a CLI writer fails at
        // once naming it; the file goes once the ledger is closed. (A database ledger has several servers.)
        let marker = ledger.databaseURL == nil ? try ServeMarker(ledger: ledger.path) : nil
        defer { marker?.remove() }
        let metrics = metricsListen.flatMap(Serve.address)
        try waitFor {
            try await server.run(
                host: host, port: port, limits: limits, certificate: certificate, metrics: metrics,
                services: storeServices
            ) { address, metricsAddress in
                try marker?.announce(address)
                try? Output.line("listening on \(address)")
                // The web app's pages, for a person reading the terminal (the tests read the line above).
                for (page, route) in [("booth", "booth"), ("results", "results"), ("audit", "audit")] {
                    try? Output.line("  \(page.padding(toLength: 8, withPad: " ", startingAt: 0))\(address)/#/\(route)")
                }
                try? Output.line("  console \(address)/#/authority (sign in with the admin token)")
                if let metricsAddress { try? Output.line("metrics on \(metricsAddress)/metrics (no token)") }
                try? Output.flush()
            }
        }
    }
}

/// `vote admin-token rotate`: a new admin token for `vote serve`, shown once; the old one stops working.
struct AdminTokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin-token", abstract: "Manage the admin token of vote serve.", subcommands: [Rotate.self])

    struct Rotate: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rotate",
            abstract: "Replace the admin token (a running server accepts only the new one from now on).")

        @OptionGroup var ledger: LedgerOptions
        @Option(help: "Write the new token to this new file (0600) instead of printing it.") var adminTokenFile: String?

        /// The new token is printed (and flushed) or written first; only then does its hash replace the old
        /// one, so a token that never reached anyone never locks the authority out.
        func run() throws {
            let keys = try ledger.requiredKeyDirectory()
            if ledger.databaseURL == nil {
                try FileBlockSource.requireLedger(at: ledger.path)
                try LedgerKeys.moveOut(ledger: ledger.path, keys: keys, log: Output.note)
            }
            try AdminToken.rotate(keys: FileKeyStore(keys)) { token in
                if let adminTokenFile { return try AdminTokenCommand.write(token, to: adminTokenFile) }
                try Output.line(token)
                try Output.flush()
            }
        }
    }

    /// Writes `token` to `path`, a new file (0600), synced; a file that cannot be created or written is
    /// removed again and the error thrown.
    static func write(_ token: String, to path: String) throws {
        let file = try OutputFile(creating: path, what: "admin token file")
        do { try file.appendDurably(token + "\n") } catch {
            file.remove()
            throw error
        }
        file.close()
    }
}
