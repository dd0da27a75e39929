import Election
import Foundation
import Hummingbird
import JSONViews
import Ledger
import VoteLedger

/// The routes of BVC, the system VoteLedger replaces, so its unmodified phone client keeps working
/// (`docs/bvc-api.md` is the contract). They exist for old clients only: new clients use `/api/v1`.
///
/// - Transport: each route answers GET with URL query parameters and POST with an
///   `application/x-www-form-urlencoded` body. Every answer is HTTP 200 with `{"code", "message", "data"}`:
///   `code` 200 on success; otherwise 400 (BVC's failure code), 401 already voted, 413 too large,
///   429 too many failed token attempts and 503 busy (both with Retry-After), 500 the server's fault.
/// - `message` is English, or Korean when the client's most preferred `Accept-Language` is `ko` (`ko-KR`).
/// - `data` has the success shape even on failure, empty: the list routes an array of one-row arrays
///   (BVC's row set per place or candidate), `/setVote` a String (the vote's event hash, lowercase hex,
///   the receipt id), the credential routes an empty String.
/// - Dates are strings: `start_regist_period`, `end_regist_period`, `start_vote_time`, `end_vote_time` are
///   ISO 8601 instants in UTC with milliseconds (`2026-12-01T09:00:00.000Z`); `votedate` is the UTC date
///   voting opens (`2026-12-01`). `isStarted` is 0 before voting, 1 during, 3 after.
/// - The credential is the voting token, as `token` or as `phone` (where BVC's client puts it). A phone
///   number is not a token: it is refused as an invalid credential and never reaches the ledger (only a
///   token's hash does, and only inside a vote). `/setAuth`, which BVC never answered, registers nothing
///   (the authority authorises voters): it answers as `/isAuth` does.
/// - These routes carry the credential in the URL, where proxies log it. The server's own access log
///   records the path only, never a query string.
struct BVCRoutes {
    let server: LedgerServer
    /// Malformed and unknown credentials count against the client's address.
    let failures: FailureLimiter

    func add(to router: Router<ServerContext>) {
        route(router, "getStartedPlace", empty: .places([])) { _ in try places(.voting) }
        route(router, "getEndedPlace", empty: .places([])) { _ in try places(.ended) }
        route(router, "getBookedCandidate", empty: .candidates([])) { parameters in
            let place = try server.view().place(try parameters.place())
            return .candidates(
                place.candidates.filter { !$0.withdrawn }.map { [CandidateRow($0, place: place.place.id)] })
        }
        route(router, "getCounting", empty: .counts([])) { parameters in
            let place = try server.view().place(try parameters.place())
            if place.countsHidden(at: server.clock()) { return .counts([]) }  // results embargoed until the close
            return .counts(place.candidates.filter { !$0.withdrawn }.map { [CountRow($0, place: place.place.id)] })
        }
        route(router, "setVote", empty: .text(""), credential: true, countsVotes: true) { parameters in
            let place = try parameters.place()
            let candidate = try parameters.candidate()
            let token = try VoterRoutes.token(try parameters.credential())
            let recorded = try await server.writer.submit(
                .castVote(place: place, candidate: candidate, tokenHash: token.hash))
            return .text(recorded.eventHash.hex)
        }
        route(router, "isAuth", empty: .text(""), credential: true) { parameters in
            _ = try await voted(parameters)
            return .text("")
        }
        route(router, "isAction", empty: .text(""), credential: true) { parameters in
            guard try await voted(parameters) == false else { throw Violation.alreadyVoted }
            return .text("")
        }
        route(router, "setAuth", empty: .text(""), credential: true) { parameters in
            _ = try await voted(parameters)
            return .text("")
        }
    }

    /// The places in `status` (voting or ended), one row set each.
    private func places(_ status: PlaceStatus) throws -> BVCData {
        let now = server.clock()
        return .places(
            server.view().state.places.filter { $0.status(at: now) == status }.map { [PlaceRow($0, at: now)] })
    }

    /// Whether the credential has voted: in `placeid` if given, else in any place that authorised it
    /// (false if it may still vote somewhere). Unknown anywhere: `token_not_authorized`.
    private func voted(_ parameters: BVCParameters) async throws -> Bool {
        let token = try VoterRoutes.token(try parameters.credential())
        let view = server.view()
        let places = parameters.has("placeid") ? [try view.place(try parameters.place())] : view.state.places
        let derived = server.derived
        let found = try await server.read { source in
            try places.compactMap {
                try view.hasVoted(source, place: $0.place.id, tokenHash: token.hash, derived: derived)
            }
        }
        guard !found.isEmpty else { throw Violation.tokenNotAuthorized(place: places.first?.place.id ?? 0) }
        return !found.contains(false)
    }

    /// Serves `name` by GET and POST: the parameters are read, `body` answers, and any failure becomes an
    /// envelope with `empty` data. Routes that take a credential are refused (429) for an address that has
    /// failed too often, and count a wrong credential against it. A route that `countsVotes` counts each answer
    /// in the vote metrics (`ServerMetrics.countVote`).
    private func route(
        _ router: Router<ServerContext>, _ name: String, empty: BVCData, credential: Bool = false,
        countsVotes: Bool = false, _ body: @escaping @Sendable (BVCParameters) async throws -> BVCData
    ) {
        let failures = failures
        let handler: @Sendable (Request, ServerContext) async throws -> Response = { request, context in
            let korean = BVCMessage.prefersKorean(request.headers[.acceptLanguage])
            do {
                let parameters = try await BVCParameters(request)
                let data =
                    credential
                    ? try await failures.guarding(request, context) { try await body(parameters) }
                    : try await body(parameters)
                let response = try BVCRoutes.envelope(
                    code: 200, message: BVCMessage.ok.text(korean: korean), data: data)
                if countsVotes { ServerMetrics.countVote(refusedWith: nil) }
                return response
            } catch {
                if countsVotes { ServerMetrics.countVote(refusedWith: error) }
                let answer = APIError(error)
                if answer.status == .internalServerError {
                    context.logger.error(
                        "request failed",
                        metadata: ["path": .string(request.uri.path), "error": .string(answer.message)])
                }
                let (code, message) = BVCMessage.failure(answer)
                var response = try BVCRoutes.envelope(code: code, message: message.text(korean: korean), data: empty)
                if let retry = answer.headers[.retryAfter] { response.headers[.retryAfter] = retry }
                return response
            }
        }
        router.get(RouterPath(name), use: handler)
        router.post(RouterPath(name), use: handler)
    }

    static func envelope(code: Int, message: String, data: BVCData) throws -> Response {
        try JSONBody.response(BVCEnvelope(code: code, message: message, data: data))
    }
}

// MARK: - Parameters

/// A BVC request's parameters: the URL query and (for POST) the form body. A name given twice (twice in the
/// query, or in both the query and the body) is refused (`repeated_parameter`): which of two candidates a
/// vote is for must never depend on which copy a server or a proxy reads.
struct BVCParameters: Sendable {
    private var values: [String: String] = [:]

    init(_ request: Request) async throws {
        try add(request.uri.query ?? "")
        guard request.method == .post else { return }
        let body = try await JSONBody.bytes(request)
        guard body.readableBytes > 0 else { return }
        guard let type = request.headers[.contentType], JSONBody.mediaType(type) == "application/x-www-form-urlencoded"
        else {
            throw APIError(
                .unsupportedMediaType, "unsupported_media_type",
                "send the parameters as application/x-www-form-urlencoded")
        }
        guard let text = String(validating: body.readableBytesView, as: UTF8.self) else {
            throw BVCParameters.malformed
        }
        try add(text)
    }

    private static let malformed = APIError(.badRequest, "bad_request", "the parameters are not valid URL encoding")
    private static let repeated = APIError(
        .badRequest, "repeated_parameter",
        "a parameter is given more than once (twice in the URL, or in both the URL and the form): give each once")

    /// Adds `name=value&…` (`+` is a space, `%XX` a UTF-8 byte).
    private mutating func add(_ encoded: String) throws {
        for pair in encoded.split(separator: "&") where !pair.isEmpty {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ part: Substring) throws -> String {
                guard let text = part.replacingOccurrences(of: "+", with: " ").removingPercentEncoding else {
                    throw BVCParameters.malformed
                }
                return text
            }
            let name = try decode(parts[0])
            guard values[name] == nil else { throw BVCParameters.repeated }
            values[name] = try decode(parts.count > 1 ? parts[1] : "")
        }
    }

    func has(_ name: String) -> Bool { values[name] != nil }

    /// `placeid` as a place id (a number that names no place is an unknown place).
    func place() throws -> UInt32 {
        guard let text = values["placeid"]?.trimmingCharacters(in: .whitespaces), !text.isEmpty,
            text.allSatisfy(\.isASCII),
            text.allSatisfy(\.isNumber)
        else { throw APIError(.badRequest, "placeid_required", "placeid is required: a place number") }
        guard let id = UInt32(text), id > 0 else { throw Violation.placeNotFound(0) }
        return id
    }

    /// `candidateid` as a candidate id.
    func candidate() throws -> UInt32 {
        guard let text = values["candidateid"]?.trimmingCharacters(in: .whitespaces), !text.isEmpty,
            text.allSatisfy(\.isASCII),
            text.allSatisfy(\.isNumber)
        else { throw APIError(.badRequest, "candidateid_required", "candidateid is required: a candidate number") }
        guard let id = UInt32(text), id > 0 else { throw Violation.candidateNotFound(place: 0, candidate: 0) }
        return id
    }

    /// The voting token, as `token` or (BVC's client) `phone`.
    func credential() throws -> String {
        guard let text = values["token"] ?? values["phone"], !text.isEmpty else {
            throw APIError(.badRequest, "token_required", "the voting token is required (as token or phone)")
        }
        return text
    }
}

// MARK: - Answers

/// `{"code", "message", "data"}`, the envelope BVC's client reads.
struct BVCEnvelope: Encodable {
    var code: Int
    var message: String
    var data: BVCData
}

/// What `data` holds: one-row arrays per place or candidate, or a string.
enum BVCData: Encodable, Sendable {
    case places([[PlaceRow]])
    case candidates([[CandidateRow]])
    case counts([[CountRow]])
    case text(String)

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .places(let rows): try container.encode(rows)
        case .candidates(let rows): try container.encode(rows)
        case .counts(let rows): try container.encode(rows)
        case .text(let text): try container.encode(text)
        }
    }
}

/// A place as BVC's client parses it: `placeid` and `isStarted` numbers, everything else strings.
struct PlaceRow: Encodable, Sendable {
    var placeid: UInt32
    var name: String
    var start_regist_period: String
    var end_regist_period: String
    var votedate: String
    var start_vote_time: String
    var end_vote_time: String
    var contents: String
    var isStarted: Int

    init(_ state: PlaceState, at time: Int64) {
        let place = state.place
        placeid = place.id
        name = place.name
        start_regist_period = Timestamp.format(place.registration.start)
        end_regist_period = Timestamp.format(place.registration.end)
        start_vote_time = Timestamp.format(place.voting.start)
        end_vote_time = Timestamp.format(place.voting.end)
        votedate = String(start_vote_time.prefix(10))
        contents = place.description
        switch state.status(at: time) {
        case .voting: isStarted = 1
        case .ended: isStarted = 3
        default: isStarted = 0
        }
    }
}

/// A candidate as BVC's client parses it: every field a string, the place id (`wantvote`) included.
struct CandidateRow: Encodable, Sendable {
    var candidateid: String
    var name: String
    var candidateurl: String
    /// BVC's website login; here a stable identifier of the candidate, never a voter's data.
    var candidatelogin: String
    var wantvote: String

    init(_ candidate: Candidate, place: UInt32) {
        candidateid = String(candidate.id)
        name = candidate.name
        candidateurl = ""
        candidatelogin = "place-\(place)-candidate-\(candidate.id)"
        wantvote = String(place)
    }
}

/// A candidate's count as BVC's client parses it (`candidateresult` a number).
struct CountRow: Encodable, Sendable {
    var candidateid: String
    var name: String
    var wantvote: String
    var candidateurl: String
    var candidateresult: UInt64

    init(_ candidate: Candidate, place: UInt32) {
        candidateid = String(candidate.id)
        name = candidate.name
        wantvote = String(place)
        candidateurl = ""
        candidateresult = candidate.votes
    }
}

/// The messages BVC routes show to the person, in English and Korean.
enum BVCMessage {
    case ok, placeRequired, placeNotFound, candidateRequired, candidateNotFound, candidateWithdrawn
    case tokenRequired, tokenInvalid, alreadyVoted, votingClosed, badRequest, tooLarge, rateLimited, busy, failed
    case repeatedParameter

    func text(korean: Bool) -> String {
        switch self {
        case .ok: korean ? "성공" : "OK"
        case .placeRequired: korean ? "투표 번호(placeid)가 필요합니다." : "placeid is required: a place number."
        case .placeNotFound: korean ? "해당 투표가 없습니다." : "That place does not exist."
        case .candidateRequired: korean ? "후보 번호(candidateid)가 필요합니다." : "candidateid is required: a candidate number."
        case .candidateNotFound: korean ? "해당 후보가 없습니다." : "That candidate does not exist in this place."
        case .candidateWithdrawn: korean ? "사퇴한 후보입니다." : "That candidate has withdrawn."
        case .tokenRequired: korean ? "투표 토큰이 필요합니다." : "The voting token is required."
        case .tokenInvalid: korean ? "유효하지 않은 투표 토큰입니다." : "The voting token is not valid."
        case .alreadyVoted: korean ? "이미 투표하셨습니다." : "This token has already voted."
        case .votingClosed: korean ? "투표 기간이 아닙니다." : "Voting is not open in this place."
        case .badRequest: korean ? "잘못된 요청입니다." : "The request is malformed."
        case .tooLarge: korean ? "요청이 너무 큽니다." : "The request is too large."
        case .rateLimited: korean ? "실패한 시도가 너무 많습니다. 잠시 후 다시 시도하세요." : "Too many failed attempts; try again later."
        case .busy: korean ? "서버가 바쁩니다. 잠시 후 다시 시도하세요." : "The server is busy; try again."
        case .failed: korean ? "요청을 처리하지 못했습니다." : "The server failed to answer; nothing was recorded."
        case .repeatedParameter:
            korean
                ? "같은 매개변수가 두 번 있습니다 (URL에 두 번, 또는 URL과 양식 모두에). 각 매개변수는 한 번만 보내세요."
                : "A parameter is given twice (twice in the URL, or in both the URL and the form); give each once."
        }
    }

    /// The envelope code and message of a failure (by the API's stable error code).
    static func failure(_ answer: APIError) -> (Int, BVCMessage) {
        switch answer.code {
        case "already_voted": (401, .alreadyVoted)
        case "placeid_required": (400, .placeRequired)
        case "place_not_found": (400, .placeNotFound)
        case "candidateid_required": (400, .candidateRequired)
        case "candidate_not_found": (400, .candidateNotFound)
        case "candidate_withdrawn": (400, .candidateWithdrawn)
        case "token_required": (400, .tokenRequired)
        case "malformed_token", "token_mistyped", "token_not_authorized": (400, .tokenInvalid)
        case "voting_closed", "voting_not_open": (400, .votingClosed)
        case "body_too_large": (413, .tooLarge)
        case "repeated_parameter": (400, .repeatedParameter)
        case "rate_limited": (429, .rateLimited)
        case "overloaded", "storage_full", "storage_unavailable": (503, .busy)
        default: answer.status.code >= 500 ? (500, .failed) : (400, .badRequest)
        }
    }

    /// Whether the client's most preferred language (highest `q`, first on a tie) is Korean.
    static func prefersKorean(_ header: String?) -> Bool {
        guard let header else { return false }
        var best: (q: Double, korean: Bool)?
        for range in header.split(separator: ",") {
            let parts = range.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard let tag = parts.first, !tag.isEmpty else { continue }
            let q = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            if best == nil || q > best!.q { best = (q, tag == "ko" || tag.hasPrefix("ko-")) }
        }
        return best?.korean ?? false
    }
}
