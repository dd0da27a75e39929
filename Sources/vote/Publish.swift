import ArgumentParser
import FileStore
import Foundation
import Ledger
import VoteCommandLine
import VoteLedger

/// `vote publish --to DIR`: the copy of the ledger to hand to auditors and observers. It holds the log, the
/// indexes a reader starts from, `authority.pub`, and the copy's head signed by the authority
/// (`head.checkpoint`, as `vote head` prints it), and nothing secret: the keys live in the key directory,
/// and the copy names only public files. A read command: no lock, nothing in the ledger changes.
struct Publish: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "publish",
        abstract: "Write a public copy of the ledger for auditors (nothing secret; its head signed).")

    /// The signed head's file name in a published copy.
    static let headName = "head.checkpoint"

    @OptionGroup var ledger: LedgerOptions
    @Option(help: "The new directory to write the copy to (it must not exist, or be empty).") var to: String
    @OptionGroup var passphrase: PassphraseOptions

    func run() throws {
        guard let reader = try ledger.reader() as? FileBlockSource else {
            throw VoteError(
                .refused,
                "a database ledger is copied to a directory with `vote copy --to DIR`, then published from there")
        }
        let head = try passphrase.using { secret in
            try reader.writePublicCopy(to: to) { copy in
                let key = try ledger.authorityKey(reader, passphrase: secret)
                return [(Publish.headName, Array(try SignedHead.sign(copy, key: key).note.serialized.utf8))]
            }
        }
        try Output.line("published the ledger at \(to): \(head.height + 1) blocks, \(head.treeSize) events")
        try Output.line("signed head    \(to)/\(Publish.headName)")
        try Output.line("verify it with: vote verify --ledger \(to)")
    }
}
