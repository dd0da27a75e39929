import Election
import Ledger
import LedgerCrypto

/// The last head this user verified for each ledger, kept in a `DerivedStore` (for the command line, the
/// user's state directory), so a ledger that was later rolled back or forked is refused ("trust on first
/// use" for heads).
public struct RememberedHeads {
    public let store: any DerivedStore

    public init(_ store: any DerivedStore) {
        self.store = store
    }

    /// Refuses `ledger` if it does not extend the head last verified for it; then remembers its head.
    public func check(_ ledger: AuditedLedger) throws {
        let item = DerivedItem.head(ledger.genesis.ledgerID)
        if let bytes = store.read(item) {
            let text = String(decoding: bytes.bytes, as: UTF8.self)
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
                    throw VoteError(error.reason, error.message + " (remembered in \(store.location(of: item)))")
                }
            }
        }
        try remember(ledger.head)
    }

    private func remember(_ head: BlockHeader) throws {
        let text =
            "tree_size \(head.treeSize)\nroot \(head.treeRoot.hex)\nheight \(head.height)\nverified \(Timestamp.format(Clock.now()))\n"
        let item = DerivedItem.head(head.ledgerID)
        do { try store.write(item, Array(text.utf8)) } catch {
            throw VoteError(
                .io, "cannot save the verified head in \(store.location(of: item)): \(VoteError.describe(error))")
        }
    }
}
