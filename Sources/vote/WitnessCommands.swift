import ArgumentParser
import JSONViews
import Ledger
import LedgerCrypto
import TlogWitness
import VoteCommandLine
import VoteLedger

/// `vote witness`: run a witness for other people's ledgers (c2sp.org/tlog-witness), so that an authority
/// holding its key cannot rewrite its ledger or show two histories without the witnesses refusing.
struct WitnessCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "witness", abstract: "Cosign other logs' checkpoints (c2sp.org/tlog-witness).",
        subcommands: [WitnessInit.self, WitnessServe.self])
}

/// `vote witness init`: a new witness key, and the verifier key to hand to the elections it will witness.
struct WitnessInit: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init", abstract: "Make a witness key (Ed25519) and print its verifier key.",
        discussion: """
            The key file (0600, never overwritten) holds the name too: the key ID commits to it. Give the printed \
            verifier key to each election that will ask this witness to cosign (vote serve --witness).
            """)

    @Option(help: "The witness's name, by convention a schema-less URL (witness.example.org/vote).") var name: String
    @Option(help: "The new key file.") var key: String
    @OptionGroup var output: JSONOption

    func validate() throws {
        guard WitnessKey.isValidName(name) else {
            throw ValidationError("--name must not be empty and holds no spaces, control characters or '+'")
        }
    }

    struct KeyJSON: Encodable {
        var name: String
        var keyID: String
        var verifierKey: String

        enum CodingKeys: String, CodingKey {
            case name
            case keyID = "key_id"
            case verifierKey = "verifier_key"
        }
    }

    func run() throws {
        let cosigner = try WitnessKey.create(at: key, name: name).cosigner
        if output.json {
            return try Output.json(
                KeyJSON(name: cosigner.name, keyID: Hex.encode(cosigner.keyID), verifierKey: cosigner.verifierKey))
        }
        try Output.line(cosigner.verifierKey)
    }
}

/// `vote witness serve`, run by `vote-serve witness serve`.
struct WitnessServe: ServerCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve", abstract: "Serve a witness over HTTP (POST /add-checkpoint).",
        discussion: "It is the program vote-serve, installed beside vote; its options: vote witness serve --help.",
        helpNames: [])

    @Argument(parsing: .captureForPassthrough, help: .hidden) var arguments: [String] = []

    func run() throws { try runServer(["witness", "serve"] + arguments) }
}

/// `--witness NAME=URL=VKEY … [--witness-timeout S]`: the witnesses a command asks to cosign the signed head
/// it hands out (`vote cast`'s receipt, `vote receipt`, `vote head`), so that an election run from the CLI
/// alone publishes what `vote serve --witness` does.
struct WitnessOptions: ParsableArguments {
    @Option(
        name: .customLong("witness"),
        help: ArgumentHelp(
            "Ask this witness to cosign the head handed out (its name, URL and verifier key); repeatable.",
            valueName: "NAME=URL=VKEY"))
    var witnesses: [String] = []
    @Option(help: "With --witness: give up on a witness's answer after this many seconds (default 2).")
    var witnessTimeout: Double?

    func validate() throws {
        if witnesses.isEmpty && witnessTimeout != nil { throw ValidationError("--witness-timeout needs --witness") }
        if let witnessTimeout, !(0.001...3600).contains(witnessTimeout) {
            throw ValidationError("--witness-timeout must be 0.001 to 3600 seconds")
        }
        // Checked before anything is written: a mistyped witness must not stop a command half done.
        for witness in witnesses {
            do { _ = try WitnessEndpoint(option: witness) } catch let error as VoteError {
                throw ValidationError(error.message)
            }
        }
    }

    /// `note`, a signed head of the ledger `source` reads, with the cosignatures of the witnesses given, asked
    /// in parallel (each from the size it last cosigned, which its 409 names); each witness that does not
    /// cosign is named on standard error (with `refusing`, the names noted before: only a witness that starts
    /// refusing is named, and one that cosigns again is said to be back), and the note carries the others' lines.
    func cosign(_ note: SignedNote, source: any BlockSource, refusing: Locked<Set<String>>? = nil) throws -> SignedNote
    {
        guard !witnesses.isEmpty else { return note }
        let endpoints = try witnesses.map { try WitnessEndpoint(option: $0) }
        let (cosigned, refusals) = WitnessEndpoint.cosign(
            note, by: endpoints, source: source, timeout: .milliseconds(Int64((witnessTimeout ?? 2) * 1000)))
        let now = Set(refusals.map(\.name))
        let before = refusing?.withLock { known in
            defer { known = now }
            return known
        }
        for refusal in refusals where before?.contains(refusal.name) != true {
            Output.note("witness \(refusal.name) did not cosign: \(refusal.reason)")
        }
        for name in (before ?? []).subtracting(now).sorted() { Output.note("witness \(name) cosigns again") }
        return cosigned
    }
}
