import ArgumentParser
import FileStore
import Foundation
import Ledger
import VoteCommandLine
import VoteLedger

/// `vote publish --to DIR`: the copy of the ledger to hand to auditors and observers. It holds the log, the
/// indexes a reader starts from, `authority.pub`, and the copy's head signed by the authority
/// (`head.checkpoint`, as `vote head` prints it), and nothing secret: the keys live in the key directory,
/// and the copy names only public files. A read command: no lock, nothing in the ledger changes. While a place's
/// results are embargoed, the copy withholds the contents of its votes (FORMAT.md §11.20).
struct Publish: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "publish",
        abstract: "Write a public copy of the ledger for auditors (nothing secret; its head signed).",
        discussion: """
            Until voting ends in a place created with --results after-close, the copy withholds the contents \
            of that place's votes (and, in a token place, of its authorisations and re-issues): each shows \
            only its type, its place and its leaf hash, so the copy's heads, receipts and proofs still check \
            but nobody can count the place's votes from it. A copy written after voting ends holds every \
            event; `vote verify --ledger LATER --earlier-copy THIS` then checks this copy against it.
            """)

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
        // While a place's results are embargoed, the copy withholds what would let anyone count its votes.
        let now = Clock.now()
        var embargo = EmbargoFold()
        let head = try passphrase.using { secret in
            try reader.writePublicCopy(to: to, shown: { try embargo.publicBlock($0, at: now) }) { copy in
                let key = try ledger.authorityKey(reader, passphrase: secret)
                return [(Publish.headName, Array(try SignedHead.sign(copy, key: key).note.serialized.utf8))]
            }
        }
        try Output.line("published the ledger at \(to): \(head.height + 1) blocks, \(head.treeSize) events")
        if embargo.withheld > 0 {
            try Output.line(
                "withheld       \(Output.count(UInt64(embargo.withheld), "event")) of places whose results are embargoed (votes, and in a token place authorisations and re-issues): type, place and leaf hash only, until voting ends"
            )
        }
        try Output.line("signed head    \(to)/\(Publish.headName)")
        try Output.line("verify it with: vote verify --ledger \(to)")
    }
}
