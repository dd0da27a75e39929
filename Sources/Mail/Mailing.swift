public import Foundation
public import Ledger
public import VoteLedger

/// The delivery log (`mail.sealed` in the key directory, sealed as the contact book is): one record per
/// message, what the relay said, and when each mailing started and finished. It is what lets an interrupted run
/// resume without mailing anyone twice, and a resend reach only those whose message failed.
public struct MailLog: Sendable {
    public static let fileName = "mail.sealed"

    /// What happened to one message, or to a mailing.
    public enum Status: String, Codable, Sendable {
        case started, finished
        /// The relay accepted it.
        case sent
        /// The relay refused it for good (5xx), or the address was refused.
        case refused
        /// The relay refused it for now (4xx).
        case deferred
        /// The connection failed while it was being sent.
        case failed
        /// The relay accepted it, and a delivery status notification said later that it failed
        /// (`vote voter bounces`).
        case bounced
    }

    public struct Record: Codable, Sendable {
        public var mailing: String
        public var kind: MailKind
        public var status: Status
        public var identity: String?
        public var email: String?
        public var places: [UInt32]?
        /// The tokens the message carried, as the ledger names them (SHA-256, hex): a re-issued one is new.
        public var tokens: [String]?
        public var detail: String?
        public var at: Date
        /// The message's Message-ID (without angle brackets), which a bounce names.
        public var messageID: String?
    }

    private let records: SealedRecords

    public init(keys: any KeyStore, ledgerID: LedgerID, secret: any VoterSecretKey) {
        records = SealedRecords(
            MailLog.fileName, in: keys, key: secret.recordsKey(ledgerID: ledgerID),
            context: "voteledger mail log v1", what: "mail log")
    }

    public func all() throws -> [Record] {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try records.read().records.map { bytes in
            do { return try decoder.decode(Record.self, from: Data(bytes)) } catch {
                throw VoteError(.refused, "the mail log holds a record that is not one")
            }
        }
    }

    /// Held for a run, so two runs never mail the same members or write the log at once (in one process or in
    /// two): the returned function releases it. Refused at once, saying so, while another run holds it.
    public func lock() throws(VoteError) -> @Sendable () -> Void { try records.lock("mailing from this key directory") }

    func append(_ record: Record) throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        try records.append(Array(try encoder.encode(record)))
    }

    /// Each member's latest message of `kind`, by identity.
    public func latest(of kind: MailKind) throws -> [String: Record] {
        var latest: [String: Record] = [:]
        for record in try all() where record.kind == kind {
            if let identity = record.identity { latest[identity] = record }
        }
        return latest
    }
}

/// One run of `vote voter mail`: a message to each recipient through the relay, at most `perMinute` a minute,
/// each outcome in the log before the next message goes. A run picks up an unfinished mailing of its kind where
/// it stopped (those already sent are skipped); an invitation is not sent again to a member who was sent one for
/// the same places, unless `again`; `failedOnly` sends only to those whose last message failed.
public struct Mailing: Sendable {
    /// A member to mail, the address, and the places the message lists with the member's token in each.
    public struct Recipient: Sendable {
        public var member: ContactBook.Member
        public var address: String
        public var places: [(MailPlace, VotingToken)]

        public init(member: ContactBook.Member, address: String, places: [(MailPlace, VotingToken)]) {
            self.member = member
            self.address = address
            self.places = places
        }
    }

    /// What a run did.
    public struct Totals: Encodable, Sendable {
        public var mailing = ""
        public var kind: MailKind
        public var resumed = false
        /// Members to mail in this run (after those skipped).
        public var recipients = 0
        public var sent = 0
        public var refused = 0
        public var deferred = 0
        public var failed = 0
        /// Members not mailed: already sent (this mailing, or the same invitation before) or not failed.
        public var skipped = 0
    }

    public var log: MailLog
    public var kind: MailKind
    public var again = false
    public var failedOnly = false
    public var perMinute = 60

    public init(log: MailLog, kind: MailKind) {
        self.log = log
        self.kind = kind
    }

    /// Mails `recipients` through `relay` with the messages `invitation` makes; `progress` hears after each one.
    /// With `locked` the caller holds the log's lock (`MailLog.lock`) for the run, as the server does to refuse a
    /// second mailing before it answers.
    public func run(
        _ recipients: [Recipient], invitation: Invitation, relay: SMTPRelay, locked: Bool = false,
        progress: (Totals) -> Void
    ) throws -> Totals {
        let unlock = locked ? {} : try log.lock()
        defer { unlock() }
        let records = try log.all()
        var totals = Totals(kind: kind)
        let lastStart = records.last { $0.kind == kind && $0.status == .started }
        let unfinished = lastStart.flatMap { start in
            records.contains { $0.mailing == start.mailing && $0.status == .finished } ? nil : start.mailing
        }
        // A resend of failures writes into an interrupted mailing (what it sends counts as sent there) but does not
        // resume it; `again` starts a new one.
        totals.mailing = (again ? nil : unfinished) ?? UUID().uuidString.lowercased()
        totals.resumed = unfinished != nil && !again && !failedOnly
        let latest = try log.latest(of: kind)
        let due = recipients.filter { recipient in
            let identity = recipient.member.identity
            if failedOnly { return [.refused, .deferred, .failed, .bounced].contains(latest[identity]?.status) }
            if again { return true }
            if totals.resumed,
                records.contains(where: {
                    $0.mailing == totals.mailing && $0.identity == identity && $0.status == .sent
                })
            {
                return false
            }
            // An invitation goes once for the same tokens; a member authorised in a new place, or re-issued a
            // token, gets a new one.
            if kind == .invitation {
                let wanted = Set(recipient.places.map { $0.1.hash.hex })
                let sent = records.filter { $0.kind == .invitation && $0.identity == identity && $0.status == .sent }
                if sent.contains(where: { wanted.isSubset(of: Set($0.tokens ?? [])) }) { return false }
            }
            return true
        }
        totals.skipped = recipients.count - due.count
        totals.recipients = due.count
        // The relay is reached, with TLS and AUTH, before anything is logged: a wrong setting fails here.
        var session = due.isEmpty ? nil : try SMTPSession(relay)
        // A resend of failures starts and finishes no mailing: an interrupted one stays to be resumed.
        if !failedOnly && (again || unfinished == nil) {
            try log.append(.init(mailing: totals.mailing, kind: kind, status: .started, at: Date()))
        }
        progress(totals)
        let interval = Duration.seconds(60) / max(perMinute, 1)
        var lastSent: ContinuousClock.Instant?
        for recipient in due {
            if let lastSent, ContinuousClock.now < lastSent + interval {
                Thread.sleep(forTimeInterval: seconds(lastSent + interval - .now))
            }
            lastSent = .now
            let message = try invitation.message(
                to: recipient.member, address: recipient.address, places: recipient.places, from: relay.from)
            let messageID = MIMEMessage.messageID(in: message)
            let outcome: SMTPOutcome
            do {
                if session == nil { session = try SMTPSession(relay) }
                outcome = try session!.send(message, to: recipient.address)
            } catch {
                // The connection failed: this member's message may or may not have gone. It is logged as failed
                // (a resend of failures sends it again); the next member gets a new connection, and if that
                // cannot be had the run stops, to be resumed.
                session = nil
                try record(recipient, .failed, VoteError.describe(error), messageID, &totals)
                progress(totals)
                do { session = try SMTPSession(relay) } catch {
                    throw VoteError(
                        .io,
                        "\(VoteError.describe(error)); \(totals.sent) sent so far, run the same command again to go on where this stopped"
                    )
                }
                continue
            }
            switch outcome {
            case .sent(let text): try record(recipient, .sent, text, messageID, &totals)
            case .refused(let text): try record(recipient, .refused, text, messageID, &totals)
            case .deferred(let text): try record(recipient, .deferred, text, messageID, &totals)
            }
            progress(totals)
        }
        if !failedOnly { try log.append(.init(mailing: totals.mailing, kind: kind, status: .finished, at: Date())) }
        return totals
    }

    private func record(
        _ recipient: Recipient, _ status: MailLog.Status, _ detail: String, _ messageID: String?,
        _ totals: inout Totals
    )
        throws
    {
        try log.append(
            .init(
                mailing: totals.mailing, kind: kind, status: status, identity: recipient.member.identity,
                email: recipient.address, places: recipient.places.map(\.0.id),
                tokens: recipient.places.map { $0.1.hash.hex }, detail: detail, at: Date(), messageID: messageID))
        switch status {
        case .sent: totals.sent += 1
        case .refused: totals.refused += 1
        case .deferred: totals.deferred += 1
        default: totals.failed += 1
        }
    }

    private func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
