import ArgumentParser
import LedgerCrypto
import VoteLedger

/// `vote init`: creates the ledger directory, the authority key, the voter secret and the genesis block.
struct Init: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Create a ledger: keys and genesis block.")

    @OptionGroup var ledger: LedgerOptions
    @Option(help: "A name for the ledger (1-200 bytes).") var name = "VoteLedger"
    @OptionGroup var passphrase: PassphraseOptions

    func run() throws {
        let created = try ElectionLedger.create(at: ledger.path, name: name, passphrase: try passphrase.read(), now: Clock.now())
        defer { created.close() }
        print("created ledger \"\(created.genesis.name)\" at \(ledger.path)")
        print("ledger id      \(created.genesis.ledgerID)")
        print("authority key  \(Hex.encode(created.genesis.authorityKey))")
    }
}
