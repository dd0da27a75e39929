import ArgumentParser
import Ledger
import TlogWitness
import VoteCommandLine
import VoteLedger
import VoteServer

/// `vote witness`, as far as it needs the server: `vote witness serve` (`vote witness init` is in `vote`).
struct WitnessCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "witness", abstract: "Cosign other logs' checkpoints (c2sp.org/tlog-witness).",
        subcommands: [WitnessServe.self])
}

/// `vote witness serve`: a witness over HTTP for the logs given, its state (each log's latest cosigned
/// checkpoint) in `--state`.
struct WitnessServe: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract:
            "Serve a witness: POST /add-checkpoint cosigns a log's checkpoint that extends the last one cosigned.",
        discussion: """
            Prints "listening on http://HOST:PORT" (https:// with --tls-cert) once it accepts connections \
            (--listen HOST:0 picks a free port). Each log's latest cosigned checkpoint is kept in --state, written durably before each answer; \
            a damaged state file stops the start (restore it; never delete it). SIGTERM or SIGINT stop it.
            """)

    @Option(help: "The witness key file (from vote witness init).") var key: String
    @Option(
        name: .customLong("log"),
        help: ArgumentHelp(
            "A log to witness: its origin and its Ed25519 verifier key (for a VoteLedger ledger, what vote head or "
                + "GET /api/v1/key prints: voteledger/<id>=voteledger/<id>+<key id>+<base64>); repeatable, and "
                + "an origin given with several keys (a log rotating its key) is cosigned when any of them signed.",
            valueName: "ORIGIN=VKEY"))
    var logs: [String] = []
    @Option(help: "The witness's state directory (created 0700 if missing).") var state = "./vote-witness"
    @Option(help: "Address to listen on, HOST:PORT.") var listen = "127.0.0.1:8380"
    @Option(help: "Serve HTTPS with this certificate (PEM, the server's first, then its chain); needs --tls-key.")
    var tlsCert: String?
    @Option(help: "The private key (PEM) of --tls-cert.") var tlsKey: String?
    @Option(help: "Close a connection that completes no request part (headers, a body chunk) for this many seconds.")
    var idleTimeout: Double = 30
    @Option(help: "Close a connection whose request headers have not all arrived this many seconds after it opened.")
    var headTimeout: Double = 10
    @Option(help: "Close a connection whose request body has not all arrived this many seconds after its headers.")
    var bodyTimeout: Double = 60
    @Option(
        help:
            "With --tls-cert, close a connection whose TLS handshake has not completed this many seconds after it opened."
    )
    var handshakeTimeout: Double = 10

    func validate() throws {
        guard Serve.address(listen) != nil else { throw ValidationError("--listen must be HOST:PORT (port 0-65535)") }
        guard !logs.isEmpty else { throw ValidationError("give at least one --log ORIGIN=VKEY") }
        guard (tlsCert == nil) == (tlsKey == nil) else { throw ValidationError("--tls-cert and --tls-key go together") }
        for (name, value) in [
            ("idle", idleTimeout), ("head", headTimeout), ("body", bodyTimeout), ("handshake", handshakeTimeout),
        ]
        where !(0.001...86_400).contains(value) {
            throw ValidationError("--\(name)-timeout must be 0.001 to 86400 seconds")
        }
    }

    func run() throws {
        let (host, port) = Serve.address(listen)!
        let certificate = try tlsCert.map { try ServerCertificate(certificateFile: $0, keyFile: tlsKey!) }
        let witness = try Witness(
            key: try WitnessKey(contentsOf: key), logs: try logs.map(WitnessedLog.init(option:)), directory: state)
        let limits = ServerLimits(
            idleTimeout: .milliseconds(Int64(idleTimeout * 1000)),
            headTimeout: .milliseconds(Int64(headTimeout * 1000)),
            bodyTimeout: .milliseconds(Int64(bodyTimeout * 1000)),
            handshakeTimeout: .milliseconds(Int64(handshakeTimeout * 1000)))
        try waitFor {
            try await WitnessServer.run(witness, host: host, port: port, limits: limits, certificate: certificate) {
                address in
                try? Output.line("listening on \(address)")
                try? Output.line("witness \(witness.cosigner.name), verifier key \(witness.cosigner.verifierKey)")
                try? Output.flush()
            }
        }
    }
}
