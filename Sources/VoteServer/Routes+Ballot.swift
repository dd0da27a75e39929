import Election
import Foundation
import Hummingbird
import JSONViews
import Ledger
import VoteLedger

/// The routes of an anonymous place (RFC 9474 blind-signed credentials). Issuance takes the voter's issuance code
/// and a blinded message and answers the blind signature once the issuance is durable on the ledger; casting
/// takes a credential, its signature and a candidate, and nothing that names the voter. The casting route is
/// kept apart from everything that could tie a ballot to the request that got its credential: it is not
/// behind the per-address failure limiter (a forged signature is hopeless anyway), and the access log writes its
/// line without the request id, the duration or a time finer than the minute (`AccessLog.isAnonymousCast`).
struct BallotRoutes {
    let server: LedgerServer
    /// Malformed and unknown issuance codes count against the client's address (429 beyond the limit), as
    /// tokens do: the issuance request names its voter anyway.
    let failures: FailureLimiter
    /// The answers kept for retried ballots that carry an `Idempotency-Key`.
    let idempotency: IdempotencyStore
    /// Writes each ballot's receipt (`ReceiptJSON`'s bytes), as for a token vote.
    let receipts = ReceiptEncoder()
    /// Finding a ballot by its credential, or a place's creation, reads the log from the start: one such read at
    /// a time.
    private let scans = Gate(1)
    /// Each place's place-created event once found: it never moves.
    private let creations = Locked([UInt32: EventReceipt]())

    init(server: LedgerServer, failures: FailureLimiter, idempotency: IdempotencyStore) {
        self.server = server
        self.failures = failures
        self.idempotency = idempotency
    }

    struct CredentialRequest: Decodable {
        var code: String
        var blindedMessage: String
        enum CodingKeys: String, CodingKey {
            case code
            case blindedMessage = "blinded_message"
        }
    }

    /// A ballot, read exactly: a field it does not have is refused (a field meant under another name must not
    /// be dropped unseen), and a candidate beyond a 32-bit number is named as such. It names a candidate (a place
    /// with candidates) or gives answers in their text form (a place that asks questions), not both.
    struct BallotRequest: Decodable {
        var credential: String
        var signature: String
        var candidate: UInt32?
        var answers: String?

        private enum CodingKeys: String, CodingKey { case credential, signature, candidate, answers }

        /// Any key of an object, to list them all.
        private struct AnyKey: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }

        init(from decoder: any Decoder) throws {
            for key in try decoder.container(keyedBy: AnyKey.self).allKeys
            where CodingKeys(stringValue: key.stringValue) == nil {
                throw APIError(.badRequest, "malformed_json", "a ballot has no field \"\(key.stringValue)\"")
            }
            let fields = try decoder.container(keyedBy: CodingKeys.self)
            credential = try fields.decode(String.self, forKey: .credential)
            signature = try fields.decode(String.self, forKey: .signature)
            answers = try fields.decodeIfPresent(String.self, forKey: .answers)
            if let number = try fields.decodeIfPresent(Int64.self, forKey: .candidate) {
                guard let candidate = UInt32(exactly: number) else {
                    throw APIError(
                        .badRequest, "malformed_json",
                        "field \"candidate\" must be a candidate's number (0 to 4294967295)")
                }
                self.candidate = candidate
            }
            guard (candidate == nil) != (answers == nil) else {
                throw APIError(
                    .badRequest, "malformed_json",
                    "give either candidate (a place with candidates) or answers (a place that asks questions)")
            }
        }
    }

    struct BallotReceiptRequest: Decodable {
        var credential: String
    }

    /// The issuance's answer: the blind signature, whether it was signed before (a retry), and the receipt of
    /// the credential-issued event (absent for a retry, which records nothing).
    struct CredentialJSON: Encodable {
        var place: UInt32
        var blindSignature: String
        var repeated: Bool
        var receipt: ReceiptJSON?
        enum CodingKeys: String, CodingKey {
            case place, repeated, receipt
            case blindSignature = "blind_signature"
        }
    }

    func add(to api: RouterGroup<ServerContext>) {
        api.post("places/:place/credentials") { request, context in
            try await failures.guarding(request, context) { try await issue(request, context: context) }
        }
        let retried = api.group().add(
            middleware: IdempotencyMiddleware(store: idempotency, clock: server.clock, limit: JSONBody.defaultLimit))
        retried.post("places/:place/ballots") { request, context in
            try await ServerMetrics.countingVote { try await cast(request, context: context) }
        }
        api.post("places/:place/ballots/receipt") { request, context in
            try await ballotReceipt(request, context: context)
        }
        api.get("places/:place/created") { _, context in try await creation(context) }
    }

    /// The receipt of the place's place-created event, under the head of the block that holds it: the voter's
    /// client (`vote ballot`, the booth) audits it and reads the ballot key from the event, so it never blinds
    /// under, or casts a credential of, a key the server chose for that voter alone.
    private func creation(_ context: ServerContext) async throws -> Response {
        let place = try context.parameters.id("place", what: "place")
        let view = server.view()
        _ = try view.place(place)
        let event: EventReceipt
        if let known = creations.withLock({ $0[place] }) {
            event = known
        } else {
            let read = try await scans.run { try await server.read { try view.placeCreation($0, place: place) } }
            guard let read else { throw VoteError(.placeNotFound(place)) }
            creations.withLock { $0[place] = read }
            event = read
        }
        return try JSONBody.response(
            ReceiptJSON(place: place, candidate: nil, receipt: event, proof: try await server.receipt(of: event)))
    }

    /// The receipt of the ballot cast with the credential, under the head of the block that holds it: what the
    /// ballot was answered with. The credential is on the public ledger once cast, so this tells no one
    /// anything the events do not; it is not behind the failure limiter, as casting is not.
    private func ballotReceipt(_ request: Request, context: ServerContext) async throws -> Response {
        let place = try context.parameters.id("place", what: "place")
        let body = try await JSONBody.decode(BallotReceiptRequest.self, from: request)
        let credential = try BallotRoutes.bytes(body.credential, field: "credential")
        let view = server.view()
        let created = try view.place(place).place
        guard created.isAnonymous else { throw VoteError(.notAnonymous(place: place)) }
        if let due = server.batches.due(credential: credential, place: created) {
            return try JSONBody.response(HeldJSON(place: created, due: due), status: .accepted)
        }
        let found = try await scans.run {
            try await server.read { try view.castBallot($0, place: place, credential: credential) }
        }
        let candidate: UInt32?
        switch found?.event {
        case .anonymousVoteCast(_, let chosen, _, _): candidate = chosen
        case .anonymousBallotCast: candidate = nil
        default:
            throw APIError(.notFound, "ballot_not_found", "no ballot was cast with this credential in place \(place)")
        }
        guard let cast = found else { throw CancellationError() }
        return receipts.response(
            place: place, candidate: candidate, receipt: cast, proof: try await server.receipt(of: cast), status: .ok)
    }

    private func issue(_ request: Request, context: ServerContext) async throws -> Response {
        let place = try context.parameters.id("place", what: "place")
        let body = try await JSONBody.decode(CredentialRequest.self, from: request)
        let code = try VoterRoutes.token(body.code)
        let blinded = try BallotRoutes.bytes(body.blindedMessage, field: "blinded_message")
        let issued = try await server.writer.issueCredential(place: place, code: code, blindedMessage: blinded)
        var receipt: ReceiptJSON?
        if let recorded = issued.recorded {
            receipt = ReceiptJSON(
                place: place, candidate: nil, receipt: recorded.event, proof: try await server.receipt(for: recorded))
        }
        var response = try JSONBody.response(
            CredentialJSON(
                place: place, blindSignature: Base64URL.encode(issued.blindSignature), repeated: issued.repeated,
                receipt: receipt))
        // The connection that carried the issuance code ends with its answer: a ballot cast later on the same
        // connection would be tied to the code by anyone who sees connections (a relay's log, a capture).
        response.headers[.connection] = "close"
        return response
    }

    private func cast(_ request: Request, context: ServerContext) async throws -> Response {
        let place = try context.parameters.id("place", what: "place")
        let body = try await JSONBody.decode(BallotRequest.self, from: request)
        let credential = try BallotRoutes.bytes(body.credential, field: "credential")
        let signature = try BallotRoutes.bytes(body.signature, field: "signature")
        let choice: LedgerWriter.AnonymousChoice
        if let candidate = body.candidate {
            choice = .candidate(candidate)
        } else {
            guard let ballot = try server.view().place(place).place.ballot else {
                throw VoteError(.placeHasNoBallot(place: place))
            }
            switch ballot.answers(parsing: body.answers ?? "") {
            case .success(let answers): choice = .answers(answers)
            case .failure(let error): throw APIError(.badRequest, "malformed_answers", error.description)
            }
        }
        let created = try server.view().place(place).place
        if BallotBatches.holds(created, at: server.clock()) {
            let due = try await server.batches.hold(
                choice.command(place: place, credential: credential, signature: signature), credential: credential,
                place: created)
            return try JSONBody.response(HeldJSON(place: created, due: due), status: .accepted)
        }
        let recorded = try await server.writer.castAnonymousBallot(
            place: place, choice: choice, credential: credential, signature: signature)
        return receipts.response(
            place: place, candidate: body.candidate, receipt: recorded.event,
            proof: try await server.receipt(for: recorded))
    }

    /// The answer to a ballot held for its batch (202): when the batch is due at the earliest (`null` for a rule of
    /// size alone), and the place's rule. Its receipt is fetched with `POST …/ballots/receipt` once it is written.
    struct HeldJSON: Encodable {
        var place: UInt32
        var held = true
        var batchDue: String?
        var batches: BatchesJSON

        init(place: Place, due: BallotBatches.Due) {
            self.place = place.id
            batchDue = due.time.map { Timestamp.format($0) }
            batches = BatchesJSON(due.batching)
        }

        enum CodingKeys: String, CodingKey {
            case place, held, batches
            case batchDue = "batch_due"
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(place, forKey: .place)
            try container.encode(held, forKey: .held)
            try container.encode(batchDue, forKey: .batchDue)
            try container.encode(batches, forKey: .batches)
        }
    }

    /// A binary field as sent (base64url, no padding), or a 400 naming the field.
    static func bytes(_ text: String, field: String) throws -> [UInt8] {
        guard let bytes = Base64URL.decode(text), !bytes.isEmpty else {
            throw APIError(.badRequest, "bad_request", "\(field) must be base64url without padding")
        }
        return bytes
    }
}
