import Election
import Foundation
public import Ledger
public import VoteLedger

/// The officer's contact book (`contacts.sealed` in the key directory): each member's name, e-mail address,
/// language, postal address and time zone as the organisation's list gave them, and their token in each place, so the voting links can be
/// mailed and those who have not voted reminded without a tokens file. Nothing of it reaches the ledger, a public
/// copy or a database: it lives with the keys, sealed under a key derived from the voter secret
/// (`SealedRecords`). `vote voter authorize --from` appends each batch before its authorisations are recorded,
/// as it writes the tokens file.
public struct ContactBook: Sendable {
    /// The book's file name in a key directory.
    public static let fileName = "contacts.sealed"

    /// One member as the book knows them: their contact (the latest the lists gave) and their token per place.
    public struct Member: Sendable {
        /// The identity as the ledger normalises it (`VoterIdentity.normalize`): the member's key in the book.
        public var identity: String
        public var contact: VoterList.Contact
        /// The member's token in each place, by place id.
        public var tokens: [UInt32: VotingToken]
    }

    /// One line of a batch: a member authorised in `place` with `token`.
    struct Entry: Codable {
        var identity: String
        var place: UInt32
        var token: String
        var contact: VoterList.Contact?
    }

    private let records: SealedRecords

    /// The book of the ledger `ledgerID` kept with its keys in `keys`, sealed under `secret`.
    public init(keys: any KeyStore, ledgerID: LedgerID, secret: any VoterSecretKey) {
        records = SealedRecords(
            ContactBook.fileName, in: keys, key: secret.recordsKey(ledgerID: ledgerID),
            context: "voteledger contact book v1", what: "contact book")
    }

    /// The book's size now (to cut a batch off again that was not recorded).
    public func size() throws(VoteError) -> Int { try records.read().intact }

    /// Adds the voters of a batch in `place`, synced before it returns.
    public func add(_ issued: [IssuedToken], place: UInt32) throws {
        guard !issued.isEmpty else { return }
        let entries = try issued.map { voter in
            Entry(
                identity: try VoterIdentity.normalize(voter.identity), place: place, token: voter.token.display,
                contact: voter.contact)
        }
        try records.append(try JSONEncoder().encode(entries).map { $0 })
    }

    /// Cuts the book back to `size` bytes: the batch after it was not recorded.
    public func truncate(to size: Int) throws(VoteError) { try records.truncate(to: size) }

    /// Every member, in the order they were first added.
    public func members() throws -> [Member] {
        var order: [String] = []
        var members: [String: Member] = [:]
        for record in try records.read().records {
            let entries: [Entry]
            do { entries = try JSONDecoder().decode([Entry].self, from: Data(record)) } catch {
                throw VoteError(.refused, "the contact book holds a record that is not a batch of contacts")
            }
            for entry in entries {
                guard let token = VotingToken(typed: entry.token) else {
                    throw VoteError(.refused, "the contact book holds a token that is not one")
                }
                if members[entry.identity] == nil {
                    order.append(entry.identity)
                    members[entry.identity] = Member(identity: entry.identity, contact: .init(), tokens: [:])
                }
                members[entry.identity]!.tokens[entry.place] = token
                guard let contact = entry.contact else { continue }
                // A later list's field replaces an earlier one; a field it leaves empty keeps the earlier one.
                if let name = contact.name { members[entry.identity]!.contact.name = name }
                if let email = contact.email { members[entry.identity]!.contact.email = email }
                if let language = contact.language { members[entry.identity]!.contact.language = language }
                if let address = contact.address { members[entry.identity]!.contact.address = address }
                if let zone = contact.timeZone { members[entry.identity]!.contact.timeZone = zone }
            }
        }
        return order.map { members[$0]! }
    }

    /// Records `token` as the member's new one in `place` (a re-issue), if the book holds the member there; whether
    /// it did.
    public func replaceToken(of identity: String, place: UInt32, with token: VotingToken) throws -> Bool {
        guard try members().contains(where: { $0.identity == identity && $0.tokens[place] != nil }) else {
            return false
        }
        let entry = Entry(identity: identity, place: place, token: token.display, contact: nil)
        try records.append(try JSONEncoder().encode([entry]).map { $0 })
        return true
    }
}
