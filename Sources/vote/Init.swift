import ArgumentParser
import LedgerCrypto
import VoteCommandLine
import VoteLedger

/// `vote init`: creates the ledger directory, the authority key, the voter secret, the genesis block and
/// block 1, which binds the voter secret to the ledger.
struct Init: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init", abstract: "Create a ledger: keys and genesis block.")

    @OptionGroup var ledger: LedgerOptions
    @Option(help: "A name for the ledger (1-200 bytes).") var name = "VoteLedger"
    @OptionGroup var passphrase: PassphraseOptions
    @Flag(help: "Ask for the passphrase on the terminal (twice, echo off) and encrypt the key with it.")
    var passphrasePrompt = false

    func run() throws {
        var secret = try passphrase.read()
        if passphrasePrompt && secret == nil {
            let first = try PassphraseOptions.prompt("New passphrase for the authority key: ")
            guard try PassphraseOptions.prompt("Repeat the passphrase: ") == first else {
                throw VoteError(.refused, "the two passphrases differ")
            }
            secret = first
        }
        let created = try ElectionLedger.create(at: ledger.path, name: name, passphrase: secret, now: Clock.now())
        defer { created.close() }
        try Output.report(recorded: "the ledger was created at \(ledger.path)") {
            try Output.line("created ledger \"\(created.genesis.name)\" at \(ledger.path)")
            try Output.line("ledger id      \(created.genesis.ledgerID)")
            try Output.line("authority key  \(Hex.encode(created.genesis.authorityKey))")
        }
    }
}
