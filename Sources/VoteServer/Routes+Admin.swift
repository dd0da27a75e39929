import Election
import Foundation
import Hummingbird
import JSONViews
import Ledger
import Mail
import VoteLedger

/// The authority's routes, behind the admin bearer token: create places, register and withdraw
/// candidates, authorise voters (the new tokens are in the response, once), re-issue a voter's token, certify
/// results. Each write goes through the ledger's one writer and is answered once its block is durable; a
/// retry with the same `Idempotency-Key` gets the same answer (`IdempotencyMiddleware`).
struct AdminRoutes {
    let server: LedgerServer
    /// Wrong admin tokens count against the client's address (429 beyond the limit).
    let failures: FailureLimiter
    /// The answers kept for retries that carry an `Idempotency-Key`.
    var idempotency = IdempotencyStore()

    /// The CSV upload of voter identities may be larger than a JSON body: up to this many bytes.
    static let csvLimit = 16 * 1024 * 1024
    /// A CSV's answer lists this many refused lines at most (the first, by line number) and counts the rest:
    /// a megabyte of bad lines once made an answer of 28 MB.
    static let listedRejections = 100

    struct WindowRequest: Decodable {
        var start: String
        var end: String
    }

    struct PlaceRequest: Decodable {
        var name: String
        var description: String?
        var registration: WindowRequest
        var voting: WindowRequest
        var maxCandidates: UInt32?
        /// `live` (the default) or `after-close`: `ResultsRelease`.
        var results: String?
        /// `token` (the default) or `anonymous`: blind-signed ballot credentials, with a new ballot key.
        var ballot: String?
        /// The questions the place asks instead of candidates, as `vote place create --questions` reads them.
        var questions: [QuestionJSON]?
        /// With `questions`: a voter may cast again until voting ends; only the last ballot counts.
        var revoting: Bool?
        /// With `ballot` anonymous: hold ballots and write them in batches (§11.31).
        var batches: BatchesRequest?
        enum CodingKeys: String, CodingKey {
            case name, description, registration, voting, results, ballot, questions, revoting, batches
            case maxCandidates = "max_candidates"
        }
    }

    /// An anonymous place's batch rule: `{"interval_seconds": 600, "size": 10}`, either or both.
    struct BatchesRequest: Decodable {
        var intervalSeconds: Int64?
        var size: UInt32?
        enum CodingKeys: String, CodingKey {
            case size
            case intervalSeconds = "interval_seconds"
        }

        /// The rule, its interval in ms (one out of range is left for the rule to refuse, in its words).
        var batching: BallotBatching {
            let interval = intervalSeconds.map { $0.multipliedReportingOverflow(by: 1000) }
            return BallotBatching(
                interval: interval.map { $0.overflow ? Int64.max : $0.partialValue }, size: size)
        }
    }

    struct CandidateRequest: Decodable {
        var name: String
        var pledge: String?
    }

    /// A correction of a place (§11.28): what changes; a field left out stays as it is.
    struct AmendRequest: Decodable {
        var name: String?
        var description: String?
        var voting: WindowRequest?
    }

    /// A cancellation (§11.30): why, optional.
    struct CancelRequest: Decodable {
        var reason: String?
    }

    /// A voter's withdrawal (§11.29): whom, by identity (the server computes the voter tag with its voter secret).
    struct WithdrawRequest: Decodable {
        var identity: String
    }

    struct VoterRequest: Decodable {
        var voter: String
        /// The voter's weight in a place that asks questions (default 1). Read signed, so that a negative one is
        /// refused by the rule's words rather than as JSON the decoder cannot place.
        var weight: Int64?
    }

    struct VotersJSON: Encodable {
        struct Issued: Encodable {
            var voter: String
            var token: String
        }
        struct Rejected: Encodable {
            var line: Int
            var code: String
            var message: String
        }
        var place: UInt32
        var tokens: [Issued]
        /// The first `AdminRoutes.listedRejections` lines refused, by line number.
        var rejected: [Rejected]
        /// How many lines were refused in all (`rejected` lists the first of them).
        var rejectedTotal: Int
        /// The line number of a header line that was skipped (`VoterList.isHeader`), if there was one.
        var skippedHeader: Int?

        enum CodingKeys: String, CodingKey {
            case place, tokens, rejected
            case rejectedTotal = "rejected_total"
            case skippedHeader = "skipped_header"
        }
    }

    func add(to api: RouterGroup<ServerContext>) {
        let admin = api.group().add(middleware: AdminAuthMiddleware(adminToken: server.adminToken, failures: failures))
            .add(middleware: IdempotencyMiddleware(store: idempotency, clock: server.clock))
        // The console's sign-in: a token is checked when it is typed, not at the first action (which would lose a
        // filled-in form). The middleware has said 401 or 403 already; reaching here means the token works.
        admin.get("admin/check") { _, _ in Response(status: .noContent) }
        admin.post("places") { request, _ in
            let body = try await JSONBody.decode(PlaceRequest.self, from: request)
            let now = server.clock()
            let command = Command.createPlace(
                name: body.name, description: body.description ?? "",
                registration: try window(body.registration, field: "registration", now: now),
                voting: try window(body.voting, field: "voting", now: now), maxCandidates: body.maxCandidates,
                resultsAfterClose: try ResultsRelease.named(body.results ?? "live", field: "results") == .afterClose,
                ballot: try body.questions.map(QuestionJSON.ballot), revoting: body.revoting ?? false,
                batching: body.batches?.batching)
            guard ["token", "anonymous"].contains(body.ballot ?? "token") else {
                throw APIError(.badRequest, "bad_request", "ballot must be token or anonymous")
            }
            let recorded = try await server.writer.createPlace(command, anonymous: body.ballot == "anonymous").event
            guard case .placeCreated(let place) = recorded.event else { throw APIError(CancellationError()) }
            return try JSONBody.response(
                PlaceCreatedJSON(place: place, recorded: RecordedJSON(recorded)), status: .created)
        }
        admin.post("places/:place/candidates") { request, context in
            let place = try context.parameters.id("place", what: "place")
            let body = try await JSONBody.decode(CandidateRequest.self, from: request)
            let recorded = try await server.writer.submit(
                .registerCandidate(place: place, name: body.name, pledge: body.pledge ?? ""))
            guard case .candidateRegistered(_, let candidate, let name, _) = recorded.event else {
                throw APIError(CancellationError())
            }
            return try JSONBody.response(
                CandidateRecordedJSON(
                    place: place, candidate: candidate, name: name, recorded: RecordedJSON(recorded)),
                status: .created)
        }
        admin.post("places/:place/candidates/:candidate/withdraw") { _, context in
            let place = try context.parameters.id("place", what: "place")
            let candidate = try context.parameters.id("candidate", what: "candidate")
            let recorded = try await server.writer.submit(.withdrawCandidate(place: place, candidate: candidate))
            return try JSONBody.response(
                CandidateRecordedJSON(
                    place: place, candidate: candidate, name: nil, recorded: RecordedJSON(recorded)))
        }
        admin.post("places/:place/amend") { request, context in
            let place = try context.parameters.id("place", what: "place")
            let body = try await JSONBody.decode(AmendRequest.self, from: request)
            let voting = try body.voting.map { try window($0, field: "voting", now: server.clock()) }
            let recorded = try await server.writer.submit(
                .amendPlace(place: place, name: body.name, description: body.description, voting: voting),
                receipt: false)
            guard case .placeAmended(_, let name, _, let window) = recorded.event.event else {
                throw APIError(.internalServerError, "internal_error", "the amendment recorded another event")
            }
            return try JSONBody.response(
                PlaceAmendedJSON(place: place, name: name, voting: window, recorded: RecordedJSON(recorded.event)))
        }
        admin.post("places/:place/cancel") { request, context in
            let place = try context.parameters.id("place", what: "place")
            let body = try await JSONBody.decode(CancelRequest.self, from: request)
            let recorded = try await server.writer.submit(
                .cancelPlace(place: place, reason: body.reason ?? ""), receipt: false)
            guard case .placeCancelled(_, let reason) = recorded.event.event else {
                throw APIError(.internalServerError, "internal_error", "the cancellation recorded another event")
            }
            let name = server.view().state.place(place)?.place.name ?? ""
            return try JSONBody.response(
                PlaceCancelledJSON(place: place, name: name, reason: reason, recorded: RecordedJSON(recorded.event)))
        }
        admin.post("places/:place/voters") { request, context in
            let place = try context.parameters.id("place", what: "place")
            let type = request.headers[.contentType].map(JSONBody.mediaType)
            if type == "text/csv" { return try await authorizeCSV(request, place: place) }
            let body = try await JSONBody.decode(VoterRequest.self, from: request)
            let token = try VotingToken.generate()
            let recorded = try await server.writer.submit(
                .authorizeVoter(
                    place: place, voterTag: try server.tagger.tag(body.voter), tokenHash: token.hash,
                    weight: UInt64(clamping: body.weight ?? 1)))
            return try JSONBody.response(
                VoterAuthorizedJSON(place: place, token: token.display, recorded: RecordedJSON(recorded)),
                status: .created)
        }
        admin.post("places/:place/voters/reissue") { request, context in
            // A lost letter: a new token for an authorised voter who has not voted; the old one stops working.
            let place = try context.parameters.id("place", what: "place")
            let body = try await JSONBody.decode(VoterRequest.self, from: request)
            let tag = try server.tagger.tag(body.voter)
            let token = try VotingToken.generate()
            let reissue = try await server.read {
                try VoterTokens.reissue(in: $0, place: place, voterTag: tag, newTokenHash: token.hash)
            }
            let recorded = try await server.writer.submit(reissue)
            return try JSONBody.response(
                VoterAuthorizedJSON(place: place, token: token.display, recorded: RecordedJSON(recorded)),
                status: .created)
        }
        admin.post("places/:place/voters/withdraw") { request, context in
            // A correction to the roll: the voter's token stops voting and the voter leaves the electorate.
            let place = try context.parameters.id("place", what: "place")
            let body = try await JSONBody.decode(WithdrawRequest.self, from: request)
            let tag = try server.tagger.tag(body.identity)
            let withdrawal = try await server.read {
                try VoterTokens.withdrawal(in: $0, place: place, voterTag: tag)
            }
            let recorded = try await server.writer.submit(withdrawal, receipt: false)
            guard case .voterWithdrawn(_, _, _, let weight) = recorded.event.event else {
                throw APIError(.internalServerError, "internal_error", "the withdrawal recorded another event")
            }
            let authorized = server.view().state.place(place)?.authorized ?? 0
            return try JSONBody.response(
                VoterWithdrawnJSON(
                    place: place, weight: weight, authorized: authorized, recorded: RecordedJSON(recorded.event)))
        }
        admin.post("places/:place/certify") { _, context in
            let place = try context.parameters.id("place", what: "place")
            let recorded = try await server.writer.certifyResults(place: place)
            guard let certified = ResultsCertifiedJSON(recorded, state: server.view().state) else {
                throw APIError(CancellationError())
            }
            return try JSONBody.response(certified)
        }
        DeskRoutes(server: server).add(to: admin)
    }

    private func window(_ window: WindowRequest, field: String, now: Int64) throws -> TimeWindow {
        guard let start = Timestamp.parse(window.start, now: now), let end = Timestamp.parse(window.end, now: now)
        else {
            throw APIError(
                .badRequest, "bad_request",
                "\(field) start and end must be ISO 8601 times with an offset (2026-12-01T09:00:00+09:00)")
        }
        return TimeWindow(start: start, end: end)
    }

    /// A CSV of identities, one per line: every well-formed identity is authorised (`VoterList.authorize`,
    /// as `vote voter authorize --from`: a block's worth at a time through the writer, one batch per block),
    /// each with a new token returned here once; the first `listedRejections` rejected lines are listed with
    /// their code, and `rejected_total` counts them all. The tokens exist
    /// only in this response: a client that loses it retries with the same `Idempotency-Key`, or re-issues
    /// the voters' tokens (`voters/reissue`).
    ///
    /// With `?identity_column=C` (and `&weight_column=W`) the body is a table as the organisation keeps it, its
    /// first line a header, C and W a header name or a number from 1 (`VoterList.Columns`). A body of which no
    /// line is authorised is refused (422 `nothing_authorized`, the first refusal named): nothing was recorded.
    /// With `&name_column=`, `&email_column=`, `&language_column=`, `&address_column=` or `&time_zone_column=` each
    /// member's contact goes
    /// to the officer's sealed contact book in the key directory (`ContactBook`), as `vote voter authorize` keeps it.
    private func authorizeCSV(_ request: Request, place: UInt32) async throws -> Response {
        let query = request.uri.queryParameters
        let columns = query.get("identity_column").map {
            VoterList.Columns(
                identity: $0, weight: query.get("weight_column"), name: query.get("name_column"),
                email: query.get("email_column"), language: query.get("language_column"),
                address: query.get("address_column"), timeZone: query.get("time_zone_column"))
        }
        let others = [
            "weight_column", "name_column", "email_column", "language_column", "address_column", "time_zone_column",
        ]
        if columns == nil, let other = others.first(where: { query.get($0) != nil }) {
            throw APIError(.badRequest, "bad_request", "\(other) goes with identity_column")
        }
        // Contact columns fill the officer's contact book beside the keys, batch by batch with the tokens, as
        // `vote voter authorize --email-column …` does; a server without a key directory keeps none.
        var book: ContactBook?
        if columns?.hasContact == true {
            guard let keys = server.keys else {
                throw APIError(
                    .conflict, "no_contact_book",
                    "this server keeps no contact book (it has no key directory): leave out the contact columns")
            }
            book = officerRecords(keys: keys, ledgerID: server.genesis.ledgerID, secret: server.tagger).0
        }
        let contacts = book
        let bookSize = Locked<Int?>(nil)
        let buffer = try await JSONBody.bytes(request, limit: AdminRoutes.csvLimit)
        let bytes = Array(buffer.readableBytesView)
        guard String(validating: bytes, as: UTF8.self) != nil else {
            throw APIError(.badRequest, "bad_request", "the CSV body is not valid UTF-8")
        }
        var lines = LineReader(bytes: bytes)
        var rejected = Rejections(limit: AdminRoutes.listedRejections)
        var issued: [VotersJSON.Issued] = []
        var skippedHeader: Int?
        do {
            // A block's worth at a time, so a large file never fills the writer's queue (which would refuse
            // lines as overloaded) and shares it fairly with voters.
            _ = try await VoterList.authorize(
                &lines, place: place, writer: server.writer,
                batchSize: max(1, min(LedgerWriter.maxCommandsPerBlock, server.capacity / 2)), columns: columns,
                skippedHeader: { skippedHeader = $0 },
                rejected: { rejection in
                    rejected.add(line: rejection.line) {
                        .init(
                            line: rejection.line, code: rejection.violation.map(APIError.code) ?? "bad_request",
                            message: rejection.reason)
                    }
                },
                beforeWriting: { voters in
                    guard let contacts else { return }
                    bookSize.withLock { $0 = nil }
                    let size = try contacts.size()
                    bookSize.withLock { $0 = size }
                    try contacts.add(voters, place: place)
                },
                afterWriting: { voters in issued += voters.map { .init(voter: $0.identity, token: $0.token.display) } })
        } catch let stop as BulkStop {
            // The book loses the batch that was not recorded.
            if let contacts, let size = bookSize.withLock({ $0 }) { try? contacts.truncate(to: size) }
            // Nothing recorded: the failure is the answer. Else the voters recorded keep their tokens, and
            // every line from the failed batch on is listed as not authorised, with the failure.
            guard stop.accepted > 0 else { throw stop.error }
            let failure = APIError(stop.error)
            var later = LineReader(bytes: bytes)
            while let blank = try later.withNextLine({ line -> Bool in
                guard case .bytes(let text) = line else { return false }
                return String(decoding: text, as: UTF8.self).trimmingCharacters(in: .whitespaces).isEmpty
            }) {
                let number = later.lineNumber
                guard number >= stop.first, !blank, !rejected.lines.contains(number) else { continue }
                rejected.add(line: number) { .init(line: number, code: failure.code, message: failure.message) }
            }
        }
        if issued.isEmpty {
            let first = rejected.listed.first.map { ": line \($0.line): \($0.message)" } ?? ""
            throw APIError(
                .unprocessableContent, "nothing_authorized",
                rejected.lines.isEmpty
                    ? "the list names no voter" : "no voter was authorised, every line was refused\(first)")
        }
        return try JSONBody.response(
            VotersJSON(
                place: place, tokens: issued, rejected: rejected.listed, rejectedTotal: rejected.lines.count,
                skippedHeader: skippedHeader),
            status: .created)
    }
}

/// A CSV's refused lines: every line number, and the `limit` lowest-numbered refusals in full (each made only
/// if it may be listed), so the answer stays small however many lines are refused.
private struct Rejections {
    let limit: Int
    private(set) var lines: Set<Int> = []
    private var kept: [AdminRoutes.VotersJSON.Rejected] = []
    private var highestKept = Int.max

    init(limit: Int) { self.limit = limit }

    mutating func add(line: Int, _ make: () -> AdminRoutes.VotersJSON.Rejected) {
        lines.insert(line)
        guard kept.count < limit || line < highestKept else { return }
        kept.append(make())
        if kept.count >= 2 * limit { trim() }
    }

    /// The listed refusals, by line number.
    var listed: [AdminRoutes.VotersJSON.Rejected] {
        var copy = self
        copy.trim()
        return copy.kept
    }

    private mutating func trim() {
        kept.sort { $0.line < $1.line }
        if kept.count > limit { kept.removeLast(kept.count - limit) }
        highestKept = kept.count < limit ? Int.max : kept.last?.line ?? Int.max
    }
}

/// Admits only requests carrying the admin token (401 without, 403 wrong; a wrong one counts as a failed
/// attempt of the client's address, which is answered 429 beyond the limit).
struct AdminAuthMiddleware: RouterMiddleware {
    let adminToken: AdminTokenHash
    let failures: FailureLimiter
    func handle(
        _ request: Request, context: ServerContext, next: (Request, ServerContext) async throws -> Response
    ) async throws -> Response {
        try await failures.guarding(request, context) { try AdminToken.authorize(request, hash: adminToken) }
        return try await next(request, context)
    }
}
