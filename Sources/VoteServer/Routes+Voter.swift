import Ballots
import Election
import Foundation
import Hummingbird
import JSONViews
import Ledger
import VoteLedger

/// The voter's routes. The token travels only in the POST body (never in a URL, so never in a log line)
/// and is hashed at once; a vote is answered only once the block holding it is durable. A vote retried with
/// the same `Idempotency-Key` gets the first answer again; a voter whose answer was lost anyway gets the
/// receipt again from `POST places/:place/receipt` with the token.
struct VoterRoutes {
    let server: LedgerServer
    /// Malformed and unknown tokens count against the client's address (429 beyond the limit).
    let failures: FailureLimiter
    /// The answers kept for retried votes that carry an `Idempotency-Key`.
    let idempotency: IdempotencyStore
    /// Writes each vote's receipt (`ReceiptJSON`'s bytes) without JSONEncoder.
    let receipts = ReceiptEncoder()

    struct VoteRequest: Decodable {
        /// The candidate, in a place with candidates.
        var candidate: UInt32?
        /// The answers in their text form (`Ballot.answers(parsing:)`: "1,3;yes;2>1;blank"), in a place that asks
        /// questions.
        var answers: String?
        var token: String

        /// `{"candidate": N, "token": "…"}` or `{"answers": "…", "token": "…"}` as clients send it, read without
        /// Foundation; `nil` otherwise.
        init?(_ object: FlatJSONObject) {
            guard object.members.count == 2, case .string(let token)? = object["token"] else { return nil }
            if case .number(let number)? = object["candidate"], let candidate = UInt32(exactly: number) {
                self.candidate = candidate
            } else if case .string(let answers)? = object["answers"] {
                self.answers = answers
            } else {
                return nil
            }
            self.token = token
        }
    }

    struct StatusRequest: Decodable {
        var token: String

        /// `{"token": "…"}` as clients send it, read without Foundation; `nil` otherwise.
        init?(_ object: FlatJSONObject) {
            guard object.members.count == 1, case .string(let token)? = object["token"] else { return nil }
            self.token = token
        }
    }

    /// A token's state: `voted` for an ordinary place; for an anonymous place, where the token is an issuance code,
    /// `credential_issued` instead (the ballot cast with that credential cannot be told from any other).
    struct StatusJSON: Encodable {
        var place: UInt32
        var voted: Bool?
        var credentialIssued: Bool?
        enum CodingKeys: String, CodingKey {
            case place, voted
            case credentialIssued = "credential_issued"
        }
    }

    func add(to api: RouterGroup<ServerContext>) {
        let retried = api.group().add(
            middleware: IdempotencyMiddleware(store: idempotency, clock: server.clock, limit: JSONBody.defaultLimit))
        retried.post("places/:place/votes") { request, context in
            try await ServerMetrics.countingVote {
                try await failures.guarding(request, context) { try await vote(request, context: context) }
            }
        }
        api.post("places/:place/status") { request, context in
            try await failures.guarding(request, context) { try await status(request, context: context) }
        }
        api.post("places/:place/receipt") { request, context in
            try await failures.guarding(request, context) { try await receipt(request, context: context) }
        }
    }

    /// The receipt of the vote cast with the token, under the head of the block that holds it: what the vote
    /// was answered with. A token not authorised in the place (unknown, of another place, or replaced) gets
    /// the vote route's answer, `token_not_authorized`, and counts as a failed attempt, so the route tells a
    /// guesser nothing the vote route would not; a good token that has not voted is told there is no receipt
    /// (404 `not_voted`), as the status route would tell its holder.
    private func receipt(_ request: Request, context: ServerContext) async throws -> Response {
        let place = try context.parameters.id("place", what: "place")
        let token = try VoterRoutes.token(
            try await JSONBody.decode(StatusRequest.self, from: request, flat: StatusRequest.init).token)
        let view = server.view()
        guard !(try view.place(place).place.isAnonymous) else { throw VoteError(.onlyAnonymousBallots(place: place)) }
        let derived = server.derived
        let (voted, found) = try await server.read { source in
            let voted = try view.hasVoted(source, place: place, tokenHash: token.hash, derived: derived)
            return (
                voted,
                voted == true ? try view.castVote(source, place: place, tokenHash: token.hash, derived: derived) : nil
            )
        }
        guard let voted else { throw VoteError(.tokenNotAuthorized(place: place)) }
        guard voted, let cast = found else {
            throw APIError(.notFound, "not_voted", "this token has cast no vote in place \(place): there is no receipt")
        }
        let candidate: UInt32? = if case .voteCast(_, let candidate, _) = cast.event { candidate } else { nil }
        return receipts.response(
            place: place, candidate: candidate, receipt: cast, proof: try await server.receipt(of: cast), status: .ok)
    }

    private func vote(_ request: Request, context: ServerContext) async throws -> Response {
        let place = try context.parameters.id("place", what: "place")
        let body = try await JSONBody.decode(VoteRequest.self, from: request, flat: VoteRequest.init)
        guard (body.candidate == nil) != (body.answers == nil) else {
            throw APIError(
                .badRequest, "malformed_json",
                "give either candidate (a place with candidates) or answers (a place that asks questions)")
        }
        let token = try VoterRoutes.token(body.token)
        let command: Command
        if let candidate = body.candidate {
            command = .castVote(place: place, candidate: candidate, tokenHash: token.hash)
        } else {
            guard let ballot = try server.view().place(place).place.ballot else {
                throw VoteError(.placeHasNoBallot(place: place))
            }
            switch ballot.answers(parsing: body.answers ?? "") {
            case .success(let answers): command = .castBallot(place: place, answers: answers, tokenHash: token.hash)
            case .failure(let error): throw APIError(.badRequest, "malformed_answers", error.description)
            }
        }
        let recorded = try await server.writer.submit(command, receipt: true)
        return receipts.response(
            place: place, candidate: body.candidate, receipt: recorded.event,
            proof: try await server.receipt(for: recorded))
    }

    private func status(_ request: Request, context: ServerContext) async throws -> Response {
        let place = try context.parameters.id("place", what: "place")
        let token = try VoterRoutes.token(
            try await JSONBody.decode(StatusRequest.self, from: request, flat: StatusRequest.init).token)
        let view = server.view()
        let anonymous = try view.place(place).place.isAnonymous
        let derived = server.derived
        guard
            let used = try await server.read({
                try view.hasVoted($0, place: place, tokenHash: token.hash, derived: derived)
            })
        else {
            throw VoteError(anonymous ? Violation.codeNotAuthorized(place: place) : .tokenNotAuthorized(place: place))
        }
        return try JSONBody.response(
            anonymous
                ? StatusJSON(place: place, credentialIssued: used) : StatusJSON(place: place, voted: used))
    }

    /// A token as typed, or a 400 that does not echo it: `token_mistyped` when its check character does not
    /// match (a typo), `malformed_token` when it cannot be a token at all.
    static func token(_ text: String) throws -> VotingToken {
        switch VotingToken.parse(text) {
        case .success(let token): return token
        case .failure(.mistyped):
            throw APIError(
                .badRequest, "token_mistyped",
                "the token is mistyped: its check character does not match (compare it with the letter)")
        case .failure(.malformed):
            throw APIError(
                .badRequest, "malformed_token",
                "the token is malformed (expected 33 letters A-Z and digits 2-7, dashes optional)")
        }
    }
}
