import Election
import Foundation
import Hummingbird
import JSONViews
import Ledger
import Mail
import VoteLedger

/// The officer's desk in the console (issue 36), behind the admin token: a place's counts from the server's own
/// ledger (authorised, withdrawn, credentials issued, voted), its turnout over time from the vote events' block
/// times, the mail figures from the sealed mail log, and the mail action: invitations, or reminders to those who
/// have not voted, sent in the background one mailing at a time while the console polls its progress.
struct DeskRoutes {
    let server: LedgerServer

    /// Turnout over time has at most this many buckets: enough points for a chart, few enough to read.
    static let maxBuckets = 48
    /// The bucket lengths to choose from (seconds): the shortest that keeps the window within `maxBuckets`.
    static let bucketLengths: [Int64] = [
        60, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172_800, 604_800, 2_592_000,
    ]

    struct MailRequest: Decodable {
        /// `invitation` (the voting links) or `reminder` (to those who have not voted in a place open now).
        var kind: String
    }

    func add(to admin: RouterGroup<ServerContext>) {
        admin.get("admin/places/:place/desk") { _, context in
            let place = try context.parameters.id("place", what: "place")
            let view = server.view()
            guard let state = view.state.place(place) else { throw APIError(VoteError(.placeNotFound(place))) }
            let now = server.clock()
            let keys = server.keys
            let source = server.source
            let timeline = try await server.read { source in try Self.timeline(of: state, in: source, now: now) }
            let mail = try await server.read { _ in
                try keys.map { try Self.mailFigures(place: place, keys: $0, source: source, secret: server.tagger) }
            }
            return try JSONBody.response(
                DeskJSON(
                    state: state, now: now, timeline: timeline, mail: mail ?? nil,
                    mailAction: server.mail != nil && keys != nil, mailing: server.mailing.withLock { $0 }))
        }
        admin.post("admin/places/:place/mail") { request, context in
            let place = try context.parameters.id("place", what: "place")
            guard server.view().state.place(place) != nil else { throw APIError(VoteError(.placeNotFound(place))) }
            guard let settings = server.mail, let keys = server.keys else {
                throw APIError(
                    .conflict, "no_relay",
                    "vote serve was started without a relay: restart it with --smtp-host, --from, --base-url and --help-contact to mail from the console (vote voter mail sends from the command line)"
                )
            }
            let body = try await JSONBody.decode(MailRequest.self, from: request)
            guard let kind = MailKind(rawValue: body.kind) else {
                throw APIError(.badRequest, "bad_request", "kind must be invitation or reminder")
            }
            return try await start(kind, place: place, settings: settings, keys: keys)
        }
        admin.get("admin/mail") { _, _ in
            try JSONBody.response(MailingJSON(server.mailing.withLock { $0 }))
        }
    }

    /// Takes the mail log's lock (a mailing under way, here or from `vote voter mail`, is a 409), finds whom to
    /// mail, and sends on a thread of its own: the relay's socket and the rate's pauses block.
    private func start(
        _ kind: MailKind, place: UInt32, settings: MailSettings, keys: any KeyStore
    ) async throws -> Response {
        let (book, log) = officerRecords(keys: keys, ledgerID: server.genesis.ledgerID, secret: server.tagger)
        let unlock: @Sendable () -> Void
        do { unlock = try log.lock() } catch {
            throw APIError(
                .conflict, "mailing_under_way", "a mailing is under way; wait for it to finish (GET /api/v1/admin/mail)"
            )
        }
        let view = server.view()
        let now = server.clock()
        let derived = server.derived
        let due: Mailing.Due
        do {
            due = try await server.read { source in
                let members = try book.members()
                guard !members.isEmpty else {
                    throw APIError(
                        .conflict, "contact_book_empty",
                        "the contact book is empty: authorise the members from their list with an e-mail column first")
                }
                return try Mailing.due(
                    members, kind: kind, only: [place], view: view, source: source, derived: derived, now: now)
            }
        } catch {
            unlock()
            throw error
        }
        var configured = Mailing(log: log, kind: kind)
        configured.perMinute = settings.perMinute
        let mailing = configured
        let invitation = settings.invitation(kind, election: server.genesis.name)
        let started = DeskMailing(
            place: place, kind: kind, state: .running, total: due.recipients.count,
            withoutAddress: due.withoutAddress)
        server.mailing.withLock { $0 = started }
        let progress = server.mailing
        let recipients = due.recipients
        let thread = Thread {
            defer { unlock() }
            do {
                let totals = try mailing.run(recipients, invitation: invitation, relay: settings.relay, locked: true) {
                    totals in progress.withLock { $0?.update(totals) }
                }
                progress.withLock {
                    $0?.update(totals)
                    $0?.state = .done
                }
            } catch {
                progress.withLock {
                    $0?.state = .failed
                    $0?.error = VoteError.describe(error)
                }
            }
        }
        thread.start()
        return try JSONBody.response(MailingJSON(started), status: .accepted)
    }

    // MARK: Figures

    /// The place's votes over its voting window so far, by the block times of its vote events (a ballot replaced
    /// is not a new voter), in buckets of the length that keeps the window within `maxBuckets`.
    static func timeline(of state: PlaceState, in source: any BlockSource, now: Int64) throws -> TimelineJSON {
        let window = state.place.voting
        let end = min(now, window.end)
        let length = max(end - window.start, 0)
        let bucket = (bucketLengths.first { length <= $0 * 1000 * Int64(maxBuckets) } ?? bucketLengths.last!) * 1000
        let count = length == 0 ? 0 : Int((length + bucket - 1) / bucket)
        var votes = [UInt64](repeating: 0, count: count)
        let types = Set(
            [ElectionEvent.Tag.voteCast, .anonymousVoteCast, .ballotCast, .anonymousBallotCast].map(\.rawValue))
        let place = state.place.id
        if count > 0 {
            try source.forEachBlock(from: 1) { block in
                for stored in block.events where types.contains(stored.type) {
                    guard let event = try? ElectionEvent(type: stored.type, payload: stored.payload) else { continue }
                    switch event {
                    case .voteCast(place, _, _), .anonymousVoteCast(place, _, _, _), .ballotCast(place, _, _),
                        .anonymousBallotCast(place, _, _, _):
                        let index = Int((block.header.timestamp - window.start) / bucket)
                        votes[min(max(index, 0), count - 1)] += 1
                    default: continue
                    }
                }
            }
        }
        var total: UInt64 = 0
        return TimelineJSON(
            bucketSeconds: bucket / 1000,
            buckets: votes.enumerated().map { index, votes in
                total += votes
                return .init(start: Timestamp.format(window.start + Int64(index) * bucket), votes: votes, total: total)
            })
    }

    /// The mail figures of `place` from the contact book and the mail log: nil when there is no contact book.
    static func mailFigures(
        place: UInt32, keys: any KeyStore, source: any BlockSource, secret: any VoterSecretKey
    ) throws -> MailFiguresJSON? {
        let (book, log) = officerRecords(keys: keys, ledgerID: source.genesis.ledgerID, secret: secret)
        let members = try book.members().filter { $0.tokens[place] != nil }
        guard !members.isEmpty else { return nil }
        let records = try log.all().filter { $0.identity != nil && ($0.places ?? []).contains(place) }
        func counts(_ kind: MailKind) -> MailFiguresJSON.Counts {
            var latest: [String: MailLog.Status] = [:]
            for record in records where record.kind == kind { latest[record.identity!] = record.status }
            var counts = MailFiguresJSON.Counts()
            for status in latest.values {
                switch status {
                case .sent: counts.sent += 1
                case .refused: counts.refused += 1
                case .deferred: counts.deferred += 1
                default: counts.failed += 1
                }
            }
            return counts
        }
        let tried = Set(records.filter { $0.kind == .invitation }.compactMap(\.identity))
        let withAddress = members.filter { $0.contact.email != nil }
        let lastReminder = records.filter { $0.kind == .reminder && $0.status == .sent }.map(\.at).max()
        return MailFiguresJSON(
            inContactBook: members.count, withoutEmail: members.count - withAddress.count,
            invitations: counts(.invitation), reminders: counts(.reminder),
            notMailed: withAddress.filter { !tried.contains($0.identity) }.count,
            lastReminder: lastReminder.map { Timestamp.format(Int64($0.timeIntervalSince1970 * 1000)) })
    }
}

/// The console's mailing: which place and kind, how far it got, and how it ended.
struct DeskMailing: Sendable {
    enum State: String, Encodable, Sendable { case running, done, failed }
    var place: UInt32
    var kind: MailKind
    var state: State
    /// Members to mail in this mailing (after those already sent or not due).
    var total: Int
    var sent = 0
    /// Refused, deferred or failed.
    var failed = 0
    var skipped = 0
    /// Members with places to vote in but no e-mail address (letters are for them).
    var withoutAddress: Int
    var error: String?

    init(place: UInt32, kind: MailKind, state: State, total: Int, withoutAddress: Int) {
        self.place = place
        self.kind = kind
        self.state = state
        self.total = total
        self.withoutAddress = withoutAddress
    }

    mutating func update(_ totals: Mailing.Totals) {
        total = totals.recipients
        sent = totals.sent
        failed = totals.refused + totals.deferred + totals.failed
        skipped = totals.skipped
    }
}

/// `GET /api/v1/admin/mail` and the mail action's answer: `{state: idle}` before any mailing.
struct MailingJSON: Encodable {
    var mailing: DeskMailing?

    init(_ mailing: DeskMailing?) { self.mailing = mailing }

    enum CodingKeys: String, CodingKey {
        case state, place, kind, total, sent, failed, skipped, error
        case withoutAddress = "without_address"
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        guard let mailing else { return try container.encode("idle", forKey: .state) }
        try container.encode(mailing.state.rawValue, forKey: .state)
        try container.encode(mailing.place, forKey: .place)
        try container.encode(mailing.kind.rawValue, forKey: .kind)
        try container.encode(mailing.total, forKey: .total)
        try container.encode(mailing.sent, forKey: .sent)
        try container.encode(mailing.failed, forKey: .failed)
        try container.encode(mailing.skipped, forKey: .skipped)
        try container.encode(mailing.withoutAddress, forKey: .withoutAddress)
        try container.encodeIfPresent(mailing.error, forKey: .error)
    }
}

struct TimelineJSON: Encodable {
    struct Bucket: Encodable {
        var start: String
        /// Votes whose block time falls in this bucket.
        var votes: UInt64
        /// Votes up to the end of this bucket.
        var total: UInt64
    }
    var bucketSeconds: Int64
    var buckets: [Bucket]

    enum CodingKeys: String, CodingKey {
        case buckets
        case bucketSeconds = "bucket_seconds"
    }
}

struct MailFiguresJSON: Encodable {
    struct Counts: Encodable {
        var sent = 0
        var refused = 0
        var deferred = 0
        var failed = 0
    }
    var inContactBook: Int
    var withoutEmail: Int
    var invitations: Counts
    var reminders: Counts
    /// Members with an address never sent an invitation for the place (not tried).
    var notMailed: Int
    var lastReminder: String?

    enum CodingKeys: String, CodingKey {
        case invitations, reminders
        case inContactBook = "in_contact_book"
        case withoutEmail = "without_email"
        case notMailed = "not_mailed"
        case lastReminder = "last_reminder"
    }
}

/// A place's desk: its counts, turnout, turnout over time and mail figures, and whether the mail action is there.
struct DeskJSON: Encodable {
    var place: UInt32
    var name: String
    var anonymous: Bool
    var cancelled: Bool
    var votingStart: String
    var votingEnd: String
    var now: String
    var authorized: UInt64
    var withdrawn: UInt64
    /// Credentials issued: anonymous places only.
    var issued: UInt64?
    var voted: UInt64
    var percentage: Double
    var timeline: TimelineJSON
    var mail: MailFiguresJSON?
    var mailAction: Bool
    var mailing: MailingJSON

    init(
        state: PlaceState, now: Int64, timeline: TimelineJSON, mail: MailFiguresJSON?, mailAction: Bool,
        mailing: DeskMailing?
    ) {
        let turnout = Projections.turnout(state)
        place = state.place.id
        name = state.place.name
        anonymous = state.place.isAnonymous
        cancelled = state.cancelled
        votingStart = Timestamp.format(state.place.voting.start)
        votingEnd = Timestamp.format(state.place.voting.end)
        self.now = Timestamp.format(now)
        authorized = turnout.authorized
        withdrawn = state.withdrawn
        issued = turnout.issued
        voted = turnout.voted
        percentage = turnout.percentage
        self.timeline = timeline
        self.mail = mail
        self.mailAction = mailAction
        self.mailing = MailingJSON(mailing?.place == state.place.id ? mailing : nil)
    }

    enum CodingKeys: String, CodingKey {
        case place, name, anonymous, cancelled, now, authorized, withdrawn, issued, voted, percentage, timeline, mail
        case mailing
        case votingStart = "voting_start"
        case votingEnd = "voting_end"
        case mailAction = "mail_action"
    }
}
