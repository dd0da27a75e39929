public import Ballots
public import Election
import LedgerCrypto

/// Anonymous places (RFC 9474 blind-signed ballot credentials): creating one with its ballot key, issuing a
/// credential for an issuance code, and casting an anonymous ballot. The HTTP routes and the CLI call only these.
extension LedgerWriter {
    /// What an issuance answers: the blind signature of the voter's blinded message, and the receipt of the
    /// credential-issued event that recorded it.
    public struct IssuedCredential: Sendable {
        /// The blind signature, as long as the place key's modulus; the voter's device finalizes it.
        public var blindSignature: [UInt8]
        /// The credential-issued event and its receipt; `nil` when the request repeats one already recorded
        /// (the same code and blinded message), which is answered again without a new event.
        public var recorded: Recorded?
        /// Whether this answers a repeat of a request already recorded.
        public var repeated: Bool { recorded == nil }
    }

    /// Creates a place (`command` is a `.createPlace`); with `anonymous`, first a new ballot key in the key
    /// directory, whose public half the place records. If the place is refused, the key is removed again.
    public nonisolated func createPlace(
        _ command: Command, anonymous: Bool, receipt: Bool = false
    ) async throws
        -> Recorded
    {
        guard anonymous else { return try await submit(command, receipt: receipt) }
        let (keyed, ballotKey) = try command.withNewBallotKey(ballotKeys)
        do { return try await submit(keyed, receipt: receipt) } catch {
            ballotKeys.remove(ballotKey)
            throw error
        }
    }

    /// Issues a ballot credential: checks the issuance `code` against the roll, blind-signs `blindedMessage` with
    /// the place's key (which checks its own signature, RFC 9474 §4.3), records the credential-issued event,
    /// and only once that is durable returns the blind signature: a refused or failed write never releases it.
    /// A repeat of a recorded request (same code, same blinded message) is answered without a new event, signed
    /// again the first time and from memory after that (the same bytes: RSA blind signatures are deterministic),
    /// so repeats cost one RSA signature per code, not one each; the same code with another blinded message is
    /// refused. A blinded message that is not exactly
    /// the modulus' length and below it is refused (`.usage`), nothing written.
    public nonisolated func issueCredential(
        place: UInt32, code: VotingToken, blindedMessage: [UInt8]
    ) async throws -> IssuedCredential {
        let tokenHash = code.hash
        let blindedMessageHash = SHA256.hash(blindedMessage)
        let command = Command.issueCredential(
            place: place, tokenHash: tokenHash, blindedMessageHash: blindedMessageHash)
        let now = clock()
        let (ballotKey, repeated) = try await onLedger { ledger in
            try LedgerWriter.precheck(command, ledger: ledger, at: now)
        }
        let issuance = VoterRoll.Key.issuance(
            tokenHash: tokenHash, blindedMessageHash: blindedMessageHash, place: place)
        if repeated, let known = ballotKeys.repeatedAnswer(issuance) {
            return IssuedCredential(blindSignature: known, recorded: nil)
        }
        let key = try ballotKeys.privateKey(for: ballotKey)
        let blindSignature: [UInt8]
        do { blindSignature = try ballotKeys.blindSign(blindedMessage, with: key) } catch {
            throw VoteError(error.kind == .invalidInput ? .usage : .io, error.message)
        }
        if repeated {
            ballotKeys.remember(blindSignature, repeating: issuance)
            return IssuedCredential(blindSignature: blindSignature, recorded: nil)
        }
        do {
            return IssuedCredential(blindSignature: blindSignature, recorded: try await submit(command, receipt: true))
        } catch let error as VoteError where error.reason == .violation(.credentialAlreadyIssued) {
            // The same request may have been recorded meanwhile (a client that retried at once).
            guard try await onLedger({ try LedgerWriter.precheck(command, ledger: $0, at: now).repeated }) else {
                throw error
            }
            ballotKeys.remember(blindSignature, repeating: issuance)
            return IssuedCredential(blindSignature: blindSignature, recorded: nil)
        }
    }

    /// Casts an anonymous ballot: `credential` (the 64-byte prepared message) and its finalized `signature` under
    /// the place's ballot key, for a candidate or with the answers to the place's questions. Returns the event and
    /// its receipt once durable.
    public func castAnonymousBallot(
        place: UInt32, choice: AnonymousChoice, credential: [UInt8], signature: [UInt8]
    ) async throws -> Recorded {
        try await submit(choice.command(place: place, credential: credential, signature: signature), receipt: true)
    }

    /// Decides an anonymous ballot's command against the durable ledger at the writer's time without recording it
    /// (a place that writes its ballots in batches holds a ballot only if it would be recorded now): throws the
    /// rule it breaks, as `submit` would.
    public func check(_ ballot: Command) async throws {
        let now = clock()
        try await onLedger { ledger in
            do {
                _ = try Contract.decide(ballot, state: ledger.state, committed: ledger.voterRoll, at: now)
            } catch { throw VoteError(error) }
        }
    }

    /// What an anonymous ballot chooses: a candidate, or the answers to a place's questions.
    public enum AnonymousChoice: Sendable {
        case candidate(UInt32)
        case answers([Answer])

        /// The command that casts this choice with `credential` and its `signature` in `place`.
        public func command(place: UInt32, credential: [UInt8], signature: [UInt8]) -> Command {
            switch self {
            case .candidate(let candidate):
                .castAnonymousVote(place: place, candidate: candidate, credential: credential, signature: signature)
            case .answers(let answers):
                .castAnonymousBallot(place: place, answers: answers, credential: credential, signature: signature)
            }
        }
    }

    /// An issuance decided against the durable ledger, without recording it: the place's ballot key and whether
    /// the request repeats one already recorded; the rule it breaks otherwise.
    private static func precheck(
        _ command: Command, ledger: ElectionLedger, at now: Int64
    ) throws -> (ballotKey: [UInt8], repeated: Bool) {
        guard case .issueCredential(let place, let tokenHash, let blindedMessageHash) = command else {
            preconditionFailure("an issuance command")
        }
        var repeated = false
        do {
            _ = try Contract.decide(command, state: ledger.state, committed: ledger.voterRoll, at: now)
        } catch .credentialAlreadyIssued {
            let key = VoterRoll.Key.issuance(tokenHash: tokenHash, blindedMessageHash: blindedMessageHash, place: place)
            guard ledger.voterRoll.entry(key) != nil else { throw VoteError(.credentialAlreadyIssued) }
            repeated = true
        } catch { throw VoteError(error) }
        guard let ballotKey = ledger.state.place(place)?.place.ballotKey else {
            throw VoteError(.notAnonymous(place: place))
        }
        return (ballotKey, repeated)
    }
}
