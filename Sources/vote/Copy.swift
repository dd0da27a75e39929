import ArgumentParser
import FileStore
import Foundation
import JSONViews
import Ledger
import VoteCommandLine
import VoteLedger

/// `vote copy --from A --to B`: moves a ledger between a directory and a PostgreSQL database (either way,
/// or directory to directory): the source verified first, every block written again into a new ledger and
/// checked byte for byte against the source, the copy verified. Signing the blocks again takes the authority
/// key (from `--keys`); nothing secret is written to the target.
struct Copy: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "copy",
        abstract: "Copy a ledger between a directory and a PostgreSQL database, byte for byte.",
        discussion: """
            FROM and TO are each a ledger directory or a postgres:// URL. TO must be a new directory or a \
            database without a ledger. Both are verified; the copy's blocks are checked to be the source's, byte \
            for byte. Give the ledger's key directory with --keys (default: $VOTE_KEYS, else FROM.keys).
            """)

    @Option(help: "The ledger to copy: its directory or its database URL.") var from: String
    @Option(help: "Where to write the copy: a new directory or an empty database's URL.") var to: String
    @Option(help: "Key directory holding the authority key (default: $VOTE_KEYS, else FROM.keys).") var keys: String?
    @OptionGroup var passphrase: PassphraseOptions
    @OptionGroup var output: JSONOption

    /// A ledger named on the command line: a database URL or a directory.
    static func isDatabase(_ name: String) -> Bool {
        name.hasPrefix("postgres://") || name.hasPrefix("postgresql://")
    }

    func run() throws {
        let source: any BlockSource =
            Copy.isDatabase(from) ? try LedgerOptions.database(from).source() : try FileBlockSource(path: from)
        let verified = try ElectionVerifier.verify(source)
        let keyDirectory =
            keys ?? ProcessInfo.processInfo.environment["VOTE_KEYS"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (Copy.isDatabase(from) ? nil : KeyDirectory(defaultFor: from).path)
        guard let keyDirectory else {
            throw VoteError(
                .usage, "copying a database ledger signs its blocks again: give its key directory with --keys")
        }
        let genesis = source.genesis
        let key = try passphrase.using { secret in
            try FileBlockStore.loadAuthorityKey(from: KeyDirectory(keyDirectory), passphrase: secret, genesis: genesis)
        }
        let target: any BlockAppender =
            Copy.isDatabase(to)
            ? try LedgerOptions.database(to).create(
                name: genesis.name, authority: key, ledgerID: genesis.ledgerID, firstEvents: [],
                timestamp: genesis.createdAt)
            : try FileBlockStore.create(
                at: to, keys: keyDirectory, writingKeys: false, name: genesis.name, authority: key,
                ledgerID: genesis.ledgerID, timestamp: genesis.createdAt)
        let head: BlockHeader
        do {
            defer { Output.endProgress() }
            head = try LedgerCopy.copy(source, into: target) { height, last in
                Output.progress("copied block \(height) of \(last)")
            }
            target.close()
        } catch {
            target.close()
            throw error
        }
        let copy: any BlockSource =
            Copy.isDatabase(to) ? try LedgerOptions.database(to).source() : try FileBlockSource(path: to)
        let again = try ElectionVerifier.verify(copy)
        guard again.chain.headHash == verified.chain.headHash, again.chain.treeRoot == verified.chain.treeRoot else {
            throw VoteError(.integrity(block: nil, offset: nil), "integrity failure: the copy verifies to another head")
        }
        if output.json {
            return try Output.json(
                CopyJSON(
                    from: Copy.describe(from), to: Copy.describe(to), blocks: head.height + 1, events: head.treeSize,
                    root: head.treeRoot.hex))
        }
        try Output.line(
            "copied \(Output.count(head.height + 1, "block")) (\(Output.count(head.treeSize, "event"))) from \(Copy.describe(from)) to \(Copy.describe(to))"
        )
        try Output.line("both verify to tree root \(head.treeRoot.hex); every block is byte for byte the source's")
    }

    /// A ledger's name for messages: a directory as given, a database URL without its password.
    static func describe(_ name: String) -> String {
        isDatabase(name) ? (try? LedgerOptions.database(name).description) ?? "the database" : name
    }
}

/// `vote copy --json`.
struct CopyJSON: Encodable {
    var from: String
    var to: String
    var blocks: UInt64
    var events: UInt64
    var root: String
}
