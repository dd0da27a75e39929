public import Election
import FileStore
import Foundation
public import Ledger
public import LedgerCrypto

/// The last head this user verified for each ledger, kept in the user's state directory, so a ledger
/// that was later rolled back or forked is refused ("trust on first use" for heads).
public struct HeadMemory {
    public let directory: String

    /// $VOTE_STATE_DIR, else $XDG_STATE_HOME/voteledger, else ~/.local/state/voteledger.
    public init() {
        self.init(environment: ProcessInfo.processInfo.environment)
    }

    public init(environment: [String: String]) {
        if let explicit = environment["VOTE_STATE_DIR"], !explicit.isEmpty {
            directory = explicit
        } else if let state = environment["XDG_STATE_HOME"], !state.isEmpty {
            directory = state + "/voteledger"
        } else {
            directory = (environment["HOME"] ?? NSHomeDirectory()) + "/.local/state/voteledger"
        }
    }

    private func path(_ id: LedgerID) -> String { directory + "/\(id).head" }

    /// Refuses `ledger` if it does not extend the head last verified for it; then remembers its head.
    public func check(_ ledger: AuditedLedger) throws {
        let file = path(ledger.genesis.ledgerID)
        if let bytes = ProtectedFile.read(file) {
            let text = String(decoding: bytes, as: UTF8.self)
            let fields = Dictionary(
                text.split(separator: "\n").compactMap { line -> (String, String)? in
                    let parts = line.split(separator: " ", maxSplits: 1)
                    return parts.count == 2 ? (String(parts[0]), String(parts[1])) : nil
                }, uniquingKeysWith: { first, _ in first })
            if let size = fields["tree_size"].flatMap(UInt64.init), let root = fields["root"].flatMap(Digest.init(hex:))
            {
                let when = fields["verified"] ?? "earlier"
                do {
                    try ledger.requirePrefix(size: size, root: root, what: "the head you verified \(when)")
                } catch {
                    let error = VoteError(error)
                    throw VoteError(error.reason, error.message + " (remembered in \(file))")
                }
            }
        }
        try remember(ledger.head)
    }

    private func remember(_ head: BlockHeader) throws {
        let text =
            "tree_size \(head.treeSize)\nroot \(head.treeRoot.hex)\nheight \(head.height)\nverified \(Timestamp.format(Clock.now()))\n"
        do {
            try FileManager.default.createDirectory(
                atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            try ProtectedFile.replace(path(head.ledgerID), contents: Array(text.utf8))
        } catch {
            throw VoteError(.io, "cannot save the verified head in \(directory): \(VoteError.describe(error))")
        }
    }
}
