import Election
import Foundation
public import Hummingbird
import JSONViews
import Ledger
import NIOHTTP1
import VoteLedger

/// An error answered to an HTTP client: a status and `{"error": {"code", "message"}}`. The code is stable
/// (clients switch over it); the message is one line for a person and never holds a token or a secret.
/// Every failure is mapped to one of these here, in one place (`init(_:)`), as the CLI maps them to exit codes.
public struct APIError: Error, HTTPResponseError {
    public let status: HTTPResponse.Status
    public let code: String
    public let message: String
    /// Extra headers (Retry-After for a busy writer or a full disk, WWW-Authenticate for a missing token).
    public var headers: HTTPFields = [:]

    public init(_ status: HTTPResponse.Status, _ code: String, _ message: String, headers: HTTPFields = [:]) {
        self.status = status
        self.code = code
        self.message = message
        self.headers = headers
    }

    /// Any error as the answer a client gets: a rule's violation by its case, a service or store error by its
    /// reason (a damaged ledger is `integrity_failure`), Hummingbird's own errors (no route, body too large) by their status, a body that breaks HTTP's
    /// framing (malformed chunks, or the connection ending before the body did) as a 400. Anything else is
    /// the server's fault, a 500 that says nothing about its internals.
    public init(_ error: any Error) {
        switch error {
        case let error as APIError: self = error
        case let violation as Violation: self = APIError(violation: violation)
        case let error as VoteError: self = APIError(vote: error)
        case let error as LedgerError: self = APIError(vote: VoteError(ledger: error))
        case let refusal as QuestionsRefusal: self = APIError(.badRequest, "invalid_questions", refusal.description)
        case let error as HTTPError:
            let code: String
            switch error.status {
            case .notFound: code = "not_found"
            case .contentTooLarge: code = "body_too_large"
            case .methodNotAllowed: code = "method_not_allowed"
            case .unsupportedMediaType: code = "unsupported_media_type"
            default: code = error.status.code < 500 ? "bad_request" : "internal_error"
            }
            let message = error.body ?? (error.status == .notFound ? "no such route" : error.status.reasonPhrase)
            self.init(error.status, code, message)
        case is HTTPParserError:
            // Raised while a route reads the body; a malformed request line or header never reaches a route
            // (Hummingbird answers those 400 itself).
            self.init(
                .badRequest, "bad_request", "the request body is not valid HTTP/1.1 (broken chunks, or cut short)")
        case let error as any HTTPResponseError where error.status.code < 500:
            // Hummingbird's other client errors (a body over its own limit: NIOTooManyBytesError).
            self.init(
                error.status, error.status == .contentTooLarge ? "body_too_large" : "bad_request",
                error.status.reasonPhrase)
        default:
            self.init(
                .internalServerError, "internal_error",
                "the server failed to answer; nothing was recorded unless a receipt says so")
        }
    }

    init(vote error: VoteError) {
        switch error.reason {
        case .violation(let violation): self.init(violation: violation)
        case .notFound: self.init(.notFound, "not_found", error.message)
        case .usage: self.init(.badRequest, "bad_request", error.message)
        case .refused: self.init(.badRequest, "refused", error.message)
        case .overloaded, .busy:
            self.init(.serviceUnavailable, "overloaded", error.message, headers: [.retryAfter: "1"])
        case .integrity: self.init(.internalServerError, "integrity_failure", error.message)
        case .noSpace:
            // The message names files on the server: it goes to the server's log, never to the client.
            self.init(
                .serviceUnavailable, "storage_full", "the server's disk is full; nothing was recorded, try again later",
                headers: [.retryAfter: "30"])
        case .io:
            // The store failed (a disk error, a database that is down or restarting): the message names files or
            // hosts, so it goes to the server's log; the client is told nothing was recorded and to retry.
            self.init(
                .serviceUnavailable, "storage_unavailable",
                "the ledger's store failed to answer; nothing was recorded unless a receipt says so, try again later",
                headers: [.retryAfter: "5"])
        case .passphraseRequired, .output: self.init(.internalServerError, "internal_error", error.message)
        }
    }

    /// A rule's violation: 404 for an unknown place or candidate, 400 for input no election accepts
    /// (names, windows, identities), 409 for a rule that refused it in the ledger's current state.
    init(violation: Violation) {
        let status: HTTPResponse.Status
        switch violation {
        case .placeNotFound, .candidateNotFound: status = .notFound
        case .invalidText, .invalidWindows, .invalidIdentity, .invalidBallotKey, .invalidBallot, .invalidAnswer,
            .anonymousRevoting, .duplicateOption, .revotingWithoutBallot, .invalidWeight, .invalidBatching:
            status = .badRequest
        case .voterRollDisagrees: status = .serviceUnavailable  // the store's fault, not the request's
        default: status = .conflict
        }
        self.init(status, APIError.code(violation), violation.description)
    }

    /// The stable code of each violation: its case name in snake_case.
    static func code(_ violation: Violation) -> String {
        switch violation {
        case .invalidText: "invalid_text"
        case .invalidWindows: "invalid_windows"
        case .votingMustStartInFuture: "voting_must_start_in_future"
        case .placeNotFound: "place_not_found"
        case .candidateNotFound: "candidate_not_found"
        case .registrationClosed: "registration_closed"
        case .duplicateCandidateName: "duplicate_candidate_name"
        case .candidateLimitReached: "candidate_limit_reached"
        case .withdrawalClosed: "withdrawal_closed"
        case .alreadyWithdrawn: "already_withdrawn"
        case .authorizationClosed: "authorization_closed"
        case .voterAlreadyAuthorized: "voter_already_authorized"
        case .tokenAlreadyIssued: "token_already_issued"
        case .reissueClosed: "reissue_closed"
        case .voterNotAuthorized: "voter_not_authorized"
        case .notCurrentToken: "not_current_token"
        case .voterAlreadyVoted: "voter_already_voted"
        case .invalidIdentity: "invalid_identity"
        case .amendmentRefused: "amendment_refused"
        case .withdrawalRefused: "withdrawal_refused"
        case .cancellationRefused: "cancellation_refused"
        case .placeCancelled: "place_cancelled"
        case .votingClosed(_, let status): status == .ended ? "voting_closed" : "voting_not_open"
        case .tokenNotAuthorized: "token_not_authorized"
        case .alreadyVoted: "already_voted"
        case .candidateWithdrawn: "candidate_withdrawn"
        case .resultsBeforeClose: "results_before_close"
        case .resultsAlreadyCertified: "results_already_certified"
        case .resultsDiffer: "results_differ"
        case .misplacedSecretCommitment: "misplaced_secret_commitment"
        case .secretCommitmentNotAtCreation: "secret_commitment_not_at_creation"
        case .invalidBallotKey: "invalid_ballot_key"
        case .notAnonymous: "not_anonymous"
        case .onlyAnonymousBallots: "only_anonymous_ballots"
        case .issuanceClosed: "issuance_closed"
        case .codeNotAuthorized: "code_not_authorized"
        case .credentialAlreadyIssued: "credential_already_issued"
        case .invalidBallotSignature: "invalid_ballot_signature"
        case .credentialAlreadyVoted: "credential_already_voted"
        case .noCredentialLeft: "no_credential_left"
        case .voterRollDisagrees: "voter_roll_disagrees"
        case .invalidBallot: "invalid_ballot"
        case .duplicateOption: "duplicate_option"
        case .anonymousRevoting: "anonymous_revoting"
        case .placeAsksQuestions: "place_asks_questions"
        case .placeHasNoBallot: "place_has_no_ballot"
        case .invalidAnswer: "invalid_answer"
        case .ballotNotCertifiable: "ballot_not_certifiable"
        case .revotingWithoutBallot: "revoting_without_ballot"
        case .invalidWeight: "invalid_weight"
        case .invalidBatching: "invalid_batching"
        }
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        var response = try JSONBody.response(ErrorBody(error: .init(code: code, message: message)), status: status)
        for field in headers { response.headers.append(field) }
        return response
    }
}

/// `{"error": {"code", "message"}}`.
struct ErrorBody: Encodable {
    struct Detail: Encodable {
        var code: String
        var message: String
    }
    var error: Detail
}

extension HTTPFields.Element.Name {
    static let retryAfter = HTTPFields.Element.Name("Retry-After")!
}
