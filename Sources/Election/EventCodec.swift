import Ballots
public import Ledger
import LedgerCrypto

/// The ledger encoding of election events (FORMAT.md leaves payloads to applications; this is ours):
/// a type tag per event and a big-endian payload; strings are a u32 byte length and UTF-8.
extension ElectionEvent {
    /// Ledger event type tags.
    public enum Tag: UInt16, CaseIterable, Sendable {
        case placeCreated = 0x0101
        case candidateRegistered = 0x0102
        case candidateWithdrawn = 0x0103
        case voterAuthorized = 0x0104
        case voteCast = 0x0105
        case resultsCertified = 0x0106
        case voterSecretCommitment = 0x0107
        case voterTokenReissued = 0x0108
        case credentialIssued = 0x0109
        case anonymousVoteCast = 0x010A
        case ballotCast = 0x010B
        case ballotReplaced = 0x010C
        case weightedVoterAuthorized = 0x010D
        case ballotResultsCertified = 0x010E
        case anonymousBallotCast = 0x010F
        case placeAmended = 0x0110
        case voterWithdrawn = 0x0111
        case placeCancelled = 0x0112

        /// The event's name in FORMAT.md §11, which decoding failures start with.
        public var name: String {
            switch self {
            case .placeCreated: "place created"
            case .candidateRegistered: "candidate registered"
            case .candidateWithdrawn: "candidate withdrawn"
            case .voterAuthorized: "voter authorised"
            case .voteCast: "vote cast"
            case .resultsCertified: "results certified"
            case .voterSecretCommitment: "voter secret commitment"
            case .voterTokenReissued: "voter token reissued"
            case .credentialIssued: "credential issued"
            case .anonymousVoteCast: "anonymous vote cast"
            case .ballotCast: "ballot cast"
            case .ballotReplaced: "ballot replaced"
            case .weightedVoterAuthorized: "voter authorised with a weight"
            case .ballotResultsCertified: "ballot results certified"
            case .anonymousBallotCast: "anonymous ballot cast"
            case .placeAmended: "place amended"
            case .voterWithdrawn: "voter withdrawn"
            case .placeCancelled: "place cancelled"
            }
        }
    }

    /// The event as the ledger stores it.
    public var ledgerEvent: LedgerEvent {
        // Room for the largest fixed-size event (a re-issue: 100 bytes) from the start: a bulk job
        // encodes millions of votes or authorisations, and growing the buffer was a third of each.
        var writer = ByteWriter(capacity: 100)
        let tag: Tag
        switch self {
        case .placeCreated(let place):
            tag = .placeCreated
            writer.write(place.id)
            writer.writeString(place.name)
            writer.writeString(place.description)
            writer.write(UInt64(bitPattern: place.registration.start))
            writer.write(UInt64(bitPattern: place.registration.end))
            writer.write(UInt64(bitPattern: place.voting.start))
            writer.write(UInt64(bitPattern: place.voting.end))
            writer.write(place.maxCandidates ?? 0)
            // Optional, and absent when 0: a place without flags is encoded as before them, byte for byte.
            if place.flags != 0 { writer.write(place.flags) }
            // Flag bit 1: the ballot key follows the flags.
            if let ballotKey = place.ballotKey { writer.writeBytes(ballotKey) }
            // Flag bit 2: the ballot follows (after the key, if any).
            place.ballot?.write(to: &writer)
            // Flag bit 4: the batch rule follows (after the ballot, if any); 0 for a part not set.
            place.batching?.write(to: &writer)
        case .candidateRegistered(let place, let candidate, let name, let pledge):
            tag = .candidateRegistered
            writer.write(place)
            writer.write(candidate)
            writer.writeString(name)
            writer.writeString(pledge)
        case .candidateWithdrawn(let place, let candidate):
            tag = .candidateWithdrawn
            writer.write(place)
            writer.write(candidate)
        case .placeAmended(let place, let name, let description, let voting):
            tag = .placeAmended
            writer.write(place)
            writer.writeString(name)
            writer.writeString(description)
            writer.write(UInt64(bitPattern: voting.start))
            writer.write(UInt64(bitPattern: voting.end))
        case .placeCancelled(let place, let reason):
            tag = .placeCancelled
            writer.write(place)
            writer.writeString(reason)
        case .voterWithdrawn(let place, let voterTag, let tokenHash, let weight):
            tag = .voterWithdrawn
            writer.write(place)
            writer.write(voterTag)
            writer.write(tokenHash)
            writer.write(weight)
        case .voterAuthorized(let place, let voterTag, let tokenHash, let weight):
            tag = weight == 1 ? .voterAuthorized : .weightedVoterAuthorized
            writer.write(place)
            writer.write(voterTag)
            writer.write(tokenHash)
            if weight != 1 { writer.write(weight) }
        case .voterTokenReissued(let place, let voterTag, let oldTokenHash, let newTokenHash):
            tag = .voterTokenReissued
            writer.write(place)
            writer.write(voterTag)
            writer.write(oldTokenHash)
            writer.write(newTokenHash)
        case .voteCast(let place, let candidate, let tokenHash):
            tag = .voteCast
            writer.write(place)
            writer.write(candidate)
            writer.write(tokenHash)
        case .resultsCertified(let results):
            tag = .resultsCertified
            writer.write(results.place)
            writer.write(results.treeSize)
            writer.write(results.authorized)
            writer.write(results.voted)
            writer.write(UInt32(results.votes.count))
            for entry in results.votes {
                writer.write(entry.candidate)
                writer.write(entry.votes)
            }
        case .voterSecretCommitment(let commitment):
            tag = .voterSecretCommitment
            writer.write(commitment)
        case .credentialIssued(let place, let tokenHash, let blindedMessageHash):
            tag = .credentialIssued
            writer.write(place)
            writer.write(tokenHash)
            writer.write(blindedMessageHash)
        case .anonymousVoteCast(let place, let candidate, let credential, let signature):
            tag = .anonymousVoteCast
            writer.write(place)
            writer.write(candidate)
            writer.writeBytes(credential)
            writer.writeBytes(signature)
        case .ballotCast(let place, let tokenHash, let answers), .ballotReplaced(let place, let tokenHash, let answers):
            if case .ballotCast = self { tag = .ballotCast } else { tag = .ballotReplaced }
            writer.write(place)
            writer.write(tokenHash)
            Ballot.write(answers: answers, to: &writer)
        case .ballotResultsCertified(let results):
            tag = .ballotResultsCertified
            writer.write(results.place)
            writer.write(results.treeSize)
            for total in [results.electorate, results.voted] {
                writer.write(total.members)
                writer.write(total.weight)
            }
            writer.write(UInt8(results.questions.count))
            for question in results.questions { question.write(to: &writer) }
        case .anonymousBallotCast(let place, let credential, let signature, let answers):
            tag = .anonymousBallotCast
            writer.write(place)
            writer.writeBytes(credential)
            writer.writeBytes(signature)
            Ballot.write(answers: answers, to: &writer)
        }
        return LedgerEvent(type: tag.rawValue, payload: writer.bytes)
    }

    /// Decodes a ledger event; fails on an unknown type or a malformed payload.
    public init(_ event: LedgerEvent) throws(DecodeError) {
        try self.init(type: event.type, payload: event.payload[...])
    }

    /// Decodes an event from its type and its payload where it lies (in a verified block, say). The
    /// failures are those of FORMAT.md §11.2, each naming the event type, not the field.
    public init(type: UInt16, payload: ArraySlice<UInt8>) throws(DecodeError) {
        guard let tag = Tag(rawValue: type) else { throw DecodeError("unknown election event type \(type)") }
        let what = tag.name
        self = try ByteReader.reading(payload) { (reader) throws(DecodeError) -> ElectionEvent in
            let decoded: ElectionEvent
            switch tag {
            case .placeCreated:
                let id = try reader.read(UInt32.self, what)
                let name = try reader.readString(what)
                let description = try reader.readString(what)
                let times = try (0..<4).map { (_) throws(DecodeError) in
                    Int64(bitPattern: try reader.read(UInt64.self, what))
                }
                let max = try reader.read(UInt32.self, what)
                // §11.1: `flags u32` follows only when not 0, with no bit set but those defined (checked as read).
                var flags: UInt32 = 0
                var ballotKey: [UInt8]?
                var ballot: Ballot?
                var batching: BallotBatching?
                if reader.remaining > 0 {
                    flags = try reader.read(UInt32.self, what)
                    guard flags != 0 else { throw DecodeError("\(what): flags must be left out when 0") }
                    guard flags & ~Place.knownFlags == 0 else {
                        throw DecodeError("\(what): unknown flags \(flags)")
                    }
                    if flags & Place.anonymousBallotFlag != 0 { ballotKey = try reader.readBytes(what) }
                    if flags & Place.ballotFlag != 0 { ballot = try Ballot.read(from: &reader, what) }
                    if flags & Place.batchingFlag != 0 { batching = try BallotBatching.read(from: &reader, what) }
                }
                decoded = .placeCreated(
                    Place(
                        id: id, name: name, description: description,
                        registration: TimeWindow(start: times[0], end: times[1]),
                        voting: TimeWindow(start: times[2], end: times[3]), maxCandidates: max == 0 ? nil : max,
                        resultsAfterClose: flags & Place.resultsAfterCloseFlag != 0, ballotKey: ballotKey,
                        ballot: ballot, revoting: flags & Place.revotingFlag != 0, batching: batching))
            case .candidateRegistered:
                decoded = .candidateRegistered(
                    place: try reader.read(UInt32.self, what), candidate: try reader.read(UInt32.self, what),
                    name: try reader.readString(what), pledge: try reader.readString(what))
            case .candidateWithdrawn:
                decoded = .candidateWithdrawn(
                    place: try reader.read(UInt32.self, what), candidate: try reader.read(UInt32.self, what))
            case .placeAmended:
                decoded = .placeAmended(
                    place: try reader.read(UInt32.self, what), name: try reader.readString(what),
                    description: try reader.readString(what),
                    voting: TimeWindow(
                        start: Int64(bitPattern: try reader.read(UInt64.self, what)),
                        end: Int64(bitPattern: try reader.read(UInt64.self, what))))
            case .placeCancelled:
                decoded = .placeCancelled(
                    place: try reader.read(UInt32.self, what), reason: try reader.readString(what))
            case .voterWithdrawn:
                decoded = .voterWithdrawn(
                    place: try reader.read(UInt32.self, what), voterTag: try reader.readDigest(what),
                    tokenHash: try reader.readDigest(what), weight: try reader.read(UInt64.self, what))
            case .voterAuthorized, .weightedVoterAuthorized:
                let (place, voterTag, tokenHash) = (
                    try reader.read(UInt32.self, what), try reader.readDigest(what), try reader.readDigest(what)
                )
                let weight = tag == .weightedVoterAuthorized ? try reader.read(UInt64.self, what) : 1
                // A weight of 1 has one encoding, the plain authorisation (FORMAT.md §11.25).
                guard tag == .voterAuthorized || weight != 1 else { throw DecodeError("\(what): a weight of 1") }
                decoded = .voterAuthorized(place: place, voterTag: voterTag, tokenHash: tokenHash, weight: weight)
            case .voteCast:
                decoded = .voteCast(
                    place: try reader.read(UInt32.self, what), candidate: try reader.read(UInt32.self, what),
                    tokenHash: try reader.readDigest(what))
            case .resultsCertified:
                let place = try reader.read(UInt32.self, what)
                let treeSize = try reader.read(UInt64.self, what)
                let authorized = try reader.read(UInt64.self, what)
                let voted = try reader.read(UInt64.self, what)
                let count = try reader.read(UInt32.self, what)
                guard Int(count) <= reader.remaining / 12 else {
                    throw DecodeError("\(what): truncated (needs \(12 * UInt64(count)) bytes, has \(reader.remaining))")
                }
                var votes: [(candidate: UInt32, votes: UInt64)] = []
                for _ in 0..<count {
                    votes.append((try reader.read(UInt32.self, what), try reader.read(UInt64.self, what)))
                }
                decoded = .resultsCertified(
                    CertifiedResults(
                        place: place, treeSize: treeSize, authorized: authorized, voted: voted, votes: votes))
            case .ballotResultsCertified:
                let (place, treeSize) = (try reader.read(UInt32.self, what), try reader.read(UInt64.self, what))
                var totals: [Weighed] = []
                for _ in 0..<2 {
                    totals.append(
                        Weighed(members: try reader.read(UInt64.self, what), weight: try reader.read(UInt64.self, what))
                    )
                }
                let count = try reader.read(UInt8.self, what)
                var questions: [QuestionResult] = []
                for _ in 0..<count { questions.append(try QuestionResult.read(from: &reader, what)) }
                decoded = .ballotResultsCertified(
                    BallotResults(
                        place: place, treeSize: treeSize, electorate: totals[0], voted: totals[1],
                        questions: questions))
            case .anonymousBallotCast:
                decoded = .anonymousBallotCast(
                    place: try reader.read(UInt32.self, what), credential: try reader.readBytes(what),
                    signature: try reader.readBytes(what), answers: try Ballot.readAnswers(from: &reader, what))
            case .voterSecretCommitment:
                decoded = .voterSecretCommitment(try reader.readDigest(what))
            case .voterTokenReissued:
                decoded = .voterTokenReissued(
                    place: try reader.read(UInt32.self, what), voterTag: try reader.readDigest(what),
                    oldTokenHash: try reader.readDigest(what), newTokenHash: try reader.readDigest(what))
            case .credentialIssued:
                decoded = .credentialIssued(
                    place: try reader.read(UInt32.self, what), tokenHash: try reader.readDigest(what),
                    blindedMessageHash: try reader.readDigest(what))
            case .anonymousVoteCast:
                decoded = .anonymousVoteCast(
                    place: try reader.read(UInt32.self, what), candidate: try reader.read(UInt32.self, what),
                    credential: try reader.readBytes(what), signature: try reader.readBytes(what))
            case .ballotCast, .ballotReplaced:
                let place = try reader.read(UInt32.self, what)
                let tokenHash = try reader.readDigest(what)
                let answers = try Ballot.readAnswers(from: &reader, what)
                decoded =
                    tag == .ballotCast
                    ? .ballotCast(place: place, tokenHash: tokenHash, answers: answers)
                    : .ballotReplaced(place: place, tokenHash: tokenHash, answers: answers)
            }
            guard reader.remaining == 0 else { throw DecodeError("\(what): \(reader.remaining) trailing bytes") }
            return decoded
        }
    }
}

extension BallotBatching {
    /// `interval i64` (ms) and `size u32`, each 0 when not set (FORMAT.md §11.1, flag bit 4): in the place-created
    /// event and in the snapshot.
    func write(to writer: inout ByteWriter) {
        writer.write(UInt64(bitPattern: interval ?? 0))
        writer.write(size ?? 0)
    }

    static func read(from reader: inout ByteReader, _ what: String) throws(DecodeError) -> BallotBatching {
        let interval = Int64(bitPattern: try reader.read(UInt64.self, what))
        let size = try reader.read(UInt32.self, what)
        return BallotBatching(interval: interval == 0 ? nil : interval, size: size == 0 ? nil : size)
    }
}
