import Ballots
import Election
public import Ledger
import LedgerCrypto
import VoteLedger

/// How the CLI and the server show an event, written once: a sentence for a person (`vote log`) and flat
/// string fields with stable keys for programs (`vote export --events`). Any event the ledger can hold is
/// shown, including the genesis event and event types this version does not know.
public enum EventDescription {
    /// One line for a person.
    public static func sentence(_ event: LedgerEvent) -> String {
        switch decode(event) {
        case .genesis(let genesis):
            return
                "ledger \"\(genesis.name)\" created (id \(genesis.ledgerID), authority key \(Hex.encode(genesis.authorityKey).prefix(16))…)"
        case .unknown:
            return "unknown event type \(event.type)"
        case .withheld(let withheld):
            return
                "\(kindName(withheld.type).split(separator: "_").joined(separator: " ")) in place \(Embargo.place(of: withheld).map(String.init) ?? "?") withheld until voting ends (leaf hash \(withheld.leaf.hex.prefix(12))…)"
        case .election(let decoded):
            switch decoded {
            case .placeCreated(let place):
                return
                    "place \(place.id) created: \(place.name); registration \(Timestamp.format(place.registration.start)) to \(Timestamp.format(place.registration.end)), voting \(Timestamp.format(place.voting.start)) to \(Timestamp.format(place.voting.end))"
                    + (place.ballotKey.map { "; anonymous ballots (ballot key \(SHA256.hash($0).hex.prefix(16))…)" }
                        ?? "")
                    + (place.ballot.map {
                        "; a ballot of \($0.questions.count) question\($0.questions.count == 1 ? "" : "s")"
                    } ?? "")
            case .candidateRegistered(let place, let candidate, let name, _):
                return "candidate \(candidate) registered in place \(place): \(name)"
            case .candidateWithdrawn(let place, let candidate):
                return "candidate \(candidate) of place \(place) withdrawn"
            case .placeAmended(let place, let name, _, let voting):
                return
                    "place \(place) amended: \(name); voting \(Timestamp.format(voting.start)) to \(Timestamp.format(voting.end))"
            case .placeCancelled(let place, let reason):
                return "place \(place) cancelled before its voting opened" + (reason.isEmpty ? "" : ": \(reason)")
            case .voterWithdrawn(let place, let tag, let token, let weight):
                return
                    "voter withdrawn in place \(place) (voter tag \(tag.hex.prefix(12))…): token hash \(token.hex.prefix(12))… no longer votes"
                    + (weight == 1 ? "" : ", weight \(weight) leaves the electorate")
            case .voterAuthorized(let place, let tag, _, let weight):
                return "voter authorised in place \(place) (voter tag \(tag.hex.prefix(12))…)"
                    + (weight == 1 ? "" : ", weight \(weight)")
            case .voterTokenReissued(let place, let tag, let old, let new):
                return
                    "voter token reissued in place \(place) (voter tag \(tag.hex.prefix(12))…): token hash \(old.hex.prefix(12))… replaced by \(new.hex.prefix(12))…"
            case .voteCast(let place, let candidate, let token):
                return "vote cast in place \(place) for candidate \(candidate) (token hash \(token.hex.prefix(12))…)"
            case .resultsCertified(let results):
                let votes = results.votes.map { "\($0.candidate): \($0.votes)" }.joined(separator: ", ")
                return
                    "results of place \(results.place) certified over \(results.treeSize) events: \(votes); \(results.voted) of \(results.authorized) voted"
            case .voterSecretCommitment(let commitment):
                return "voter secret bound to this ledger (commitment \(commitment.hex.prefix(12))…)"
            case .credentialIssued(let place, let code, let blinded):
                return
                    "ballot credential issued in place \(place) (issuance code hash \(code.hex.prefix(12))…, blinded message hash \(blinded.hex.prefix(12))…)"
            case .anonymousVoteCast(let place, let candidate, let credential, _):
                return
                    "anonymous vote cast in place \(place) for candidate \(candidate) (credential hash \(SHA256.hash(credential).hex.prefix(12))…)"
            case .ballotCast(let place, let token, let answers):
                return
                    "ballot cast in place \(place): \(Ballot.plainText(answers)) (token hash \(token.hex.prefix(12))…)"
            case .anonymousBallotCast(let place, let credential, _, let answers):
                return
                    "anonymous ballot cast in place \(place): \(Ballot.plainText(answers)) (credential hash \(SHA256.hash(credential).hex.prefix(12))…)"
            case .ballotResultsCertified(let results):
                let outcomes = results.questions.enumerated().map { index, result in
                    let outcome =
                        result.passed.map { $0 ? "passed" : "not passed" }
                        ?? "elected \(result.elected.map { String($0 + 1) }.joined(separator: ","))"
                    return "question \(index + 1) \(outcome)"
                }
                return
                    "ballot results of place \(results.place) certified over \(results.treeSize) events: \(outcomes.joined(separator: "; ")); \(results.voted.members) of \(results.electorate.members) voted"
            case .ballotReplaced(let place, let token, let answers):
                return
                    "ballot cast again in place \(place), replacing the token's earlier one: \(Ballot.plainText(answers)) (token hash \(token.hex.prefix(12))…)"
            }
        }
    }

    /// The event's fields, keyed by stable snake_case names; "kind" names the event.
    public static func fields(_ event: LedgerEvent) -> [String: String] {
        switch decode(event) {
        case .genesis(let genesis):
            return [
                "kind": "ledger_created", "name": genesis.name, "ledger_id": genesis.ledgerID.description,
                "authority_key": Hex.encode(genesis.authorityKey),
            ]
        case .unknown:
            return ["kind": "unknown", "payload": Hex.encode(event.payload)]
        case .withheld(let withheld):
            // The type and place only: the rest is withheld until voting ends (FORMAT.md §11.20).
            return [
                "kind": "withheld", "withheld_kind": kindName(withheld.type),
                "place": Embargo.place(of: withheld).map(String.init) ?? "",
            ]
        case .election(let decoded):
            switch decoded {
            case .placeCreated(let place):
                var fields = [
                    "kind": "place_created", "place": String(place.id), "name": place.name,
                    "description": place.description,
                    "registration_start": Timestamp.format(place.registration.start),
                    "registration_end": Timestamp.format(place.registration.end),
                    "voting_start": Timestamp.format(place.voting.start),
                    "voting_end": Timestamp.format(place.voting.end),
                    "max_candidates": place.maxCandidates.map(String.init) ?? "",
                ]
                // Only anonymous places have the field, so other places' fields are as they were.
                if let ballotKey = place.ballotKey { fields["ballot_key"] = Hex.encode(ballotKey) }
                if let ballot = place.ballot {
                    fields["questions"] = ballot.questions.map(\.title).joined(separator: "\n")
                }
                return fields
            case .candidateRegistered(let place, let candidate, let name, let pledge):
                return [
                    "kind": "candidate_registered", "place": String(place), "candidate": String(candidate),
                    "name": name, "pledge": pledge,
                ]
            case .candidateWithdrawn(let place, let candidate):
                return ["kind": "candidate_withdrawn", "place": String(place), "candidate": String(candidate)]
            case .placeAmended(let place, let name, let description, let voting):
                return [
                    "kind": "place_amended", "place": String(place), "name": name, "description": description,
                    "voting_start": Timestamp.format(voting.start), "voting_end": Timestamp.format(voting.end),
                ]
            case .placeCancelled(let place, let reason):
                return ["kind": "place_cancelled", "place": String(place), "reason": reason]
            case .voterWithdrawn(let place, let tag, let token, let weight):
                return [
                    "kind": "voter_withdrawn", "place": String(place), "voter_tag": tag.hex, "token_hash": token.hex,
                    "weight": String(weight),
                ]
            case .voterAuthorized(let place, let tag, let token, let weight):
                var fields = [
                    "kind": "voter_authorized", "place": String(place), "voter_tag": tag.hex, "token_hash": token.hex,
                ]
                if weight != 1 { fields["weight"] = String(weight) }
                return fields
            case .voterTokenReissued(let place, let tag, let old, let new):
                return [
                    "kind": "voter_token_reissued", "place": String(place), "voter_tag": tag.hex,
                    "old_token_hash": old.hex, "token_hash": new.hex,
                ]
            case .voteCast(let place, let candidate, let token):
                return [
                    "kind": "vote_cast", "place": String(place), "candidate": String(candidate),
                    "token_hash": token.hex,
                ]
            case .resultsCertified(let results):
                return [
                    "kind": "results_certified", "place": String(results.place), "tree_size": String(results.treeSize),
                    "authorized": String(results.authorized), "voted": String(results.voted),
                    "votes": results.votes.map { "\($0.candidate):\($0.votes)" }.joined(separator: ","),
                ]
            case .anonymousBallotCast(let place, let credential, let signature, let answers):
                return [
                    "kind": "anonymous_ballot_cast", "place": String(place), "credential": Hex.encode(credential),
                    "signature": Hex.encode(signature), "answers": Ballot.plainText(answers),
                ]
            case .ballotResultsCertified(let results):
                return [
                    "kind": "ballot_results_certified", "place": String(results.place),
                    "tree_size": String(results.treeSize), "authorized": String(results.electorate.members),
                    "authorized_weight": String(results.electorate.weight), "voted": String(results.voted.members),
                    "voted_weight": String(results.voted.weight),
                    "outcomes": results.questions.map { result in
                        result.passed.map { $0 ? "passed" : "not-passed" }
                            ?? result.elected.map { String($0 + 1) }.joined(separator: ",")
                    }.joined(separator: ";"),
                ]
            case .voterSecretCommitment(let commitment):
                return ["kind": "voter_secret_commitment", "commitment": commitment.hex]
            case .credentialIssued(let place, let code, let blinded):
                return [
                    "kind": "credential_issued", "place": String(place), "token_hash": code.hex,
                    "blinded_message_hash": blinded.hex,
                ]
            case .ballotCast(let place, let token, let answers):
                return [
                    "kind": "ballot_cast", "place": String(place), "token_hash": token.hex,
                    "answers": Ballot.plainText(answers),
                ]
            case .ballotReplaced(let place, let token, let answers):
                return [
                    "kind": "ballot_replaced", "place": String(place), "token_hash": token.hex,
                    "answers": Ballot.plainText(answers),
                ]
            case .anonymousVoteCast(let place, let candidate, let credential, let signature):
                return [
                    "kind": "anonymous_vote_cast", "place": String(place), "candidate": String(candidate),
                    "credential": Hex.encode(credential), "signature": Hex.encode(signature),
                ]
            }
        }
    }

    private enum Decoded {
        case genesis(Genesis)
        case election(ElectionEvent)
        case withheld(WithheldEvent)
        case unknown
    }

    /// The `kind` an event of `type` has in `fields`.
    private static func kindName(_ type: UInt16) -> String {
        switch ElectionEvent.Tag(rawValue: type) {
        case .placeCreated: "place_created"
        case .candidateRegistered: "candidate_registered"
        case .candidateWithdrawn: "candidate_withdrawn"
        case .placeAmended: "place_amended"
        case .voterWithdrawn: "voter_withdrawn"
        case .placeCancelled: "place_cancelled"
        case .voterAuthorized, .weightedVoterAuthorized: "voter_authorized"
        case .ballotResultsCertified: "ballot_results_certified"
        case .anonymousBallotCast: "anonymous_ballot_cast"
        case .voteCast: "vote_cast"
        case .resultsCertified: "results_certified"
        case .voterSecretCommitment: "voter_secret_commitment"
        case .voterTokenReissued: "voter_token_reissued"
        case .credentialIssued: "credential_issued"
        case .anonymousVoteCast: "anonymous_vote_cast"
        case .ballotCast: "ballot_cast"
        case .ballotReplaced: "ballot_replaced"
        case nil: "unknown"
        }
    }

    private static func decode(_ event: LedgerEvent) -> Decoded {
        if event.type == Genesis.eventType, let genesis = try? Genesis(decoding: event) { return .genesis(genesis) }
        if let withheld = WithheldEvent(event) { return .withheld(withheld) }
        guard let decoded = try? ElectionEvent(event) else { return .unknown }
        return .election(decoded)
    }
}
