import ArgumentParser
import Foundation
import Ledger
import LedgerCrypto
import VoteCommandLine
import VoteLedger

/// `vote init`: creates the ledger directory, the key directory with the authority key and the voter secret,
/// the genesis block and block 1, which binds the voter secret to the ledger. The authority key is encrypted
/// unless `--no-passphrase` says otherwise: the passphrase comes from `--passphrase-file` or
/// $VOTE_PASSPHRASE, else is asked for on the terminal (twice, echo off); off a terminal with neither,
/// nothing is created.
struct Init: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "init", abstract: "Create a ledger: keys and genesis block.")

    @OptionGroup var ledger: LedgerOptions
    @Option(help: "A name for the ledger (1-200 bytes).") var name = "VoteLedger"
    @OptionGroup var passphrase: PassphraseOptions
    @Flag(
        help: "Leave the authority key unencrypted (anyone who can read the key file can then sign as the authority).")
    var noPassphrase = false

    func run() async throws {
        let secret: [UInt8]?
        if noPassphrase {
            guard try passphrase.read() == nil else {
                throw VoteError(
                    .usage, "--no-passphrase and a passphrase (--passphrase-file, $VOTE_PASSPHRASE) conflict")
            }
            secret = nil
        } else if let given = try passphrase.read() {
            secret = given
        } else if isatty(0) == 1 {
            let first = try PassphraseOptions.prompt("New passphrase for the authority key: ")
            guard try PassphraseOptions.prompt("Repeat the passphrase: ") == first else {
                throw VoteError(.refused, "the two passphrases differ; nothing was created")
            }
            secret = first
        } else {
            throw VoteError(
                .usage,
                "a new authority key needs a passphrase: give --passphrase-file FILE or $VOTE_PASSPHRASE, run on a terminal to be asked, or pass --no-passphrase"
            )
        }
        let keys = try ledger.requiredKeyDirectory()
        let writer = try VoteLedgerService.createWriter(
            StoreConfiguration(try ledger.location, passphrase: secret.map { .given($0) } ?? .none),
            name: name, now: Clock.now())
        let genesis: Genesis
        do { genesis = try await writer.source().genesis } catch {
            await writer.close()
            throw error
        }
        await writer.close()
        if secret == nil {
            Output.note(
                "warning: the authority key in \(keys.path) is not encrypted: anyone who can read it can sign as the authority"
            )
        }
        try Output.report(recorded: "the ledger was created at \(ledger.described)") {
            try Output.line("created ledger \"\(genesis.name)\" at \(ledger.described)")
            try Output.line("ledger id      \(genesis.ledgerID)")
            try Output.line("authority key  \(Hex.encode(genesis.authorityKey))")
            try Output.line("key directory  \(keys.path) (secret: keep it out of every copy of the ledger)")
        }
    }
}
