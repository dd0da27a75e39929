import ArgumentParser
import Ledger
import LedgerCrypto
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
