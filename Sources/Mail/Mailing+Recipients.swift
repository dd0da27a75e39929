public import Election
public import Foundation
public import Ledger
public import VoteLedger

/// The contact book and delivery log of the ledger `ledgerID`, sealed under `secret` with its keys in `keys`:
/// what `vote voter mail`, `vote voter letters` and the console's desk read.
public func officerRecords(keys: any KeyStore, ledgerID: LedgerID, secret: any VoterSecretKey) -> (ContactBook, MailLog)
{
    (
        ContactBook(keys: keys, ledgerID: ledgerID, secret: secret),
        MailLog(keys: keys, ledgerID: ledgerID, secret: secret)
    )
}

/// The places `member` may still vote in, with their token in each, in place order: among `only` (every place if
/// empty), not cancelled or closed at `now` (with `openNow`, open at `now`), where the token has not voted (asked of
/// `source` with the status index in `derived`). A replaced token is left out: the new one was handed over with the
/// re-issue. What mail, letters and the console's mail action list.
public func placesToVoteIn(
    _ member: ContactBook.Member, only: [UInt32], view: ElectionView, source: any BlockSource,
    derived: any DerivedStore, now: Int64, openNow: Bool = false
) throws -> [(state: PlaceState, token: VotingToken)] {
    var places: [(state: PlaceState, token: VotingToken)] = []
    for (id, token) in member.tokens.sorted(by: { $0.key < $1.key }) where only.isEmpty || only.contains(id) {
        guard let state = view.state.place(id), !state.cancelled, state.place.voting.end > now,
            !openNow || state.place.voting.start <= now,
            try view.hasVoted(source, place: id, tokenHash: token.hash, derived: derived) == false
        else { continue }
        places.append((state, token))
    }
    return places
}

extension Mailing {
    /// Whom a mailing of `kind` reaches among `members`: each member with places to vote in (a reminder: open
    /// now) and an e-mail address, and how many had places but no address (letters are for them).
    public struct Due: Sendable {
        public var recipients: [Recipient] = []
        public var withoutAddress = 0
    }

    /// The recipients of a mailing of `kind` in the places `only` (every place if empty), as `placesToVoteIn`
    /// finds them at `now`.
    public static func due(
        _ members: [ContactBook.Member], kind: MailKind, only: [UInt32], view: ElectionView, source: any BlockSource,
        derived: any DerivedStore, now: Int64
    ) throws -> Due {
        var due = Due()
        for member in members {
            // A reminder lists the places open now.
            let places = try placesToVoteIn(
                member, only: only, view: view, source: source, derived: derived, now: now,
                openNow: kind == .reminder
            ).map { (MailPlace($0.state.place), $0.token) }
            guard !places.isEmpty else { continue }
            guard let address = member.contact.email else {
                due.withoutAddress += 1
                continue
            }
            due.recipients.append(Recipient(member: member, address: address, places: places))
        }
        return due
    }
}

/// How messages are sent and what they say around the links: the relay, the web app's address, whom to ask for
/// help, the windows' time zone and the rate. `vote voter mail` and `vote serve` read it from the same options.
public struct MailSettings: Sendable {
    public var relay: SMTPRelay
    /// The web app's address as voters reach it (`VotingLink.base`).
    public var base: String
    public var help: String
    public var timeZone: TimeZone
    /// At most this many messages a minute.
    public var perMinute: Int

    public init(relay: SMTPRelay, base: String, help: String, timeZone: TimeZone, perMinute: Int) {
        self.relay = relay
        self.base = base
        self.help = help
        self.timeZone = timeZone
        self.perMinute = perMinute
    }

    /// The messages of a mailing of `kind` for the election named `election`.
    public func invitation(_ kind: MailKind, election: String) -> Invitation {
        Invitation(kind: kind, election: election, base: base, help: help, timeZone: timeZone)
    }
}

extension MailPlace {
    /// The place as a message or a letter names it.
    public init(_ place: Place) {
        self.init(
            id: place.id, name: place.name, opens: Date(timeIntervalSince1970: Double(place.voting.start) / 1000),
            closes: Date(timeIntervalSince1970: Double(place.voting.end) / 1000), anonymous: place.isAnonymous)
    }
}
