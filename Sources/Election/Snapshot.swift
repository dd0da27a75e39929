import Ballots
public import Ledger
public import LedgerCrypto

/// The election state saved at a block, so opening a large ledger replays only the blocks after it.
/// It holds the places, candidates and counters, not the voter roll (the writer keeps that in its own
/// index), so it stays a few kilobytes however large the electorate. Its encoding is deterministic.
/// Used only if `headerHash` still matches the chain at `height`; otherwise the state is rebuilt.
public struct Snapshot: Equatable, Sendable {
    static let magic = Array("VLSNAP09".utf8)

    /// Height of the last block folded into `state`.
    public var height: UInt64
    /// Header hash of that block.
    public var headerHash: Digest
    /// The state, counts only (its `roll` is `nil`).
    public var state: ElectionState

    /// The layout `stored` (a saved snapshot, sealed or not) names if it is a snapshot of an earlier layout
    /// than this version writes ("VLSNAP05"): what an upgrade finds until the writer saves a new one. nil for
    /// this layout, a later one, and bytes that are no snapshot.
    public static func earlierLayout(of stored: [UInt8]) -> String? {
        let named = stored.prefix(magic.count)
        guard named.count == magic.count, named.starts(with: magic.prefix(6)), named.lexicographicallyPrecedes(magic)
        else { return nil }
        return String(decoding: named, as: UTF8.self)
    }

    /// A snapshot of `state` (its roll is left out).
    public init(height: UInt64, headerHash: Digest, state: ElectionState) {
        self.height = height
        self.headerHash = headerHash
        self.state = state
        self.state.roll = nil
    }

    /// The snapshot's bytes.
    public var encoded: [UInt8] {
        var writer = ByteWriter()
        writer.write(bytes: Snapshot.magic)
        writer.write(height)
        writer.write(headerHash)
        writer.write(UInt32(state.places.count))
        for place in state.places {
            // The place-created payload without its optional flags, then the flags always and the ballot key
            // when flag bit 1 says there is one, so the fields are read back one by one.
            var unflagged = place.place
            unflagged.resultsAfterClose = false
            unflagged.ballotKey = nil
            unflagged.ballot = nil
            unflagged.revoting = false
            unflagged.batching = nil
            writer.write(bytes: ElectionEvent.placeCreated(unflagged).ledgerEvent.payload)
            writer.write(place.place.flags)
            if let ballotKey = place.place.ballotKey { writer.writeBytes(ballotKey) }
            place.place.ballot?.write(to: &writer)
            place.place.batching?.write(to: &writer)
            writer.write(UInt32(place.candidates.count))
            for candidate in place.candidates {
                writer.writeString(candidate.name)
                writer.writeString(candidate.pledge)
                writer.write(UInt8(candidate.withdrawn ? 1 : 0))
                writer.write(candidate.votes)
            }
            writer.write(place.authorized)
            writer.write(place.authorizedWeight)
            writer.write(place.voted)
            writer.write(place.issued)
            writer.write(place.amendments)
            writer.write(place.withdrawn)
            writer.write(UInt32(place.weights.count))
            for (tag, weight) in place.weights.sorted(by: { $0.key < $1.key }) {
                writer.write(tag)
                writer.write(weight)
            }
            if let reason = place.cancellation {
                writer.write(UInt8(1))
                writer.writeString(reason)
            } else {
                writer.write(UInt8(0))
            }
            if let certified = place.certified {
                writer.write(UInt8(1))
                writer.write(bytes: ElectionEvent.resultsCertified(certified).ledgerEvent.payload)
            } else if let results = place.ballotResults {
                writer.write(UInt8(2))
                let payload = ElectionEvent.ballotResultsCertified(results).ledgerEvent.payload
                writer.write(UInt32(payload.count))
                writer.write(bytes: payload)
            } else {
                writer.write(UInt8(0))
            }
        }
        return writer.bytes
    }

    /// Decodes a snapshot; fails on anything malformed (the caller then rebuilds from the log).
    public init(decoding bytes: [UInt8]) throws(DecodeError) {
        self = try ByteReader.reading(bytes) { (reader) throws(DecodeError) -> Snapshot in
            guard try reader.readBytes(8, "snapshot") == Snapshot.magic else { throw DecodeError("not a snapshot") }
            let height = try reader.read(UInt64.self, "snapshot")
            let hash = try reader.readDigest("snapshot")
            var state = ElectionState(roll: nil)
            let placeCount = try reader.read(UInt32.self, "snapshot")
            for _ in 0..<placeCount {
                let id = try reader.read(UInt32.self, "place id")
                guard Int(id) == state.places.count + 1 else { throw DecodeError("snapshot: place \(id) out of order") }
                let name = try reader.readString("place name")
                let description = try reader.readString("place description")
                var times: [Int64] = []
                for _ in 0..<4 { times.append(Int64(bitPattern: try reader.read(UInt64.self, "place window"))) }
                let max = try reader.read(UInt32.self, "candidate limit")
                let flags = try reader.read(UInt32.self, "place flags")
                guard flags & ~Place.knownFlags == 0 else { throw DecodeError("snapshot: unknown flags") }
                let ballotKey = flags & Place.anonymousBallotFlag != 0 ? try reader.readBytes("ballot key") : nil
                let ballot = flags & Place.ballotFlag != 0 ? try Ballot.read(from: &reader, "snapshot") : nil
                let batching =
                    flags & Place.batchingFlag != 0 ? try BallotBatching.read(from: &reader, "batch rule") : nil
                var place = PlaceState(
                    place: Place(
                        id: id, name: name, description: description,
                        registration: TimeWindow(start: times[0], end: times[1]),
                        voting: TimeWindow(start: times[2], end: times[3]), maxCandidates: max == 0 ? nil : max,
                        resultsAfterClose: flags & Place.resultsAfterCloseFlag != 0, ballotKey: ballotKey,
                        ballot: ballot, revoting: flags & Place.revotingFlag != 0, batching: batching))
                guard ballotKey == nil || place.ballotKey != nil else { throw DecodeError("snapshot: bad ballot key") }
                let candidateCount = try reader.read(UInt32.self, "snapshot")
                for index in 0..<candidateCount {
                    let name = try reader.readString("candidate name")
                    let pledge = try reader.readString("pledge")
                    let withdrawn = try reader.read(UInt8.self, "snapshot") == 1
                    let votes = try reader.read(UInt64.self, "snapshot")
                    place.candidates.append(
                        Candidate(id: index + 1, name: name, pledge: pledge, withdrawn: withdrawn, votes: votes))
                    place.nameKeys.insert(NameKey.of(name))
                }
                place.authorized = try reader.read(UInt64.self, "snapshot")
                place.authorizedWeight = try reader.read(UInt64.self, "snapshot")
                place.voted = try reader.read(UInt64.self, "snapshot")
                place.issued = try reader.read(UInt64.self, "snapshot")
                place.amendments = try reader.read(UInt32.self, "snapshot")
                place.withdrawn = try reader.read(UInt64.self, "snapshot")
                let weighted = try reader.read(UInt32.self, "snapshot")
                guard Int(weighted) <= reader.remaining / 40 else { throw DecodeError("snapshot: bad weights") }
                for _ in 0..<weighted {
                    place.weights[try reader.readDigest("voter tag")] = try reader.read(UInt64.self, "snapshot")
                }
                switch try reader.read(UInt8.self, "snapshot") {
                case 0: break
                case 1: place.cancellation = try reader.readString("cancellation reason")
                default: throw DecodeError("snapshot: bad cancellation")
                }
                let certification = try reader.read(UInt8.self, "snapshot")
                if certification == 2 {
                    let payload = try reader.readBytes(Int(try reader.read(UInt32.self, "snapshot")), "snapshot")
                    guard
                        case .ballotResultsCertified(let results) = try ElectionEvent(
                            type: ElectionEvent.Tag.ballotResultsCertified.rawValue, payload: payload[...])
                    else { throw DecodeError("snapshot: bad ballot results") }
                    place.ballotResults = results
                } else if certification == 1 {
                    _ = try reader.read(UInt32.self, "place id")
                    let treeSize = try reader.read(UInt64.self, "tree size")
                    let authorized = try reader.read(UInt64.self, "snapshot")
                    let voted = try reader.read(UInt64.self, "snapshot")
                    let count = try reader.read(UInt32.self, "snapshot")
                    guard Int(count) <= reader.remaining / 12 else { throw DecodeError("snapshot: bad results") }
                    var votes: [(candidate: UInt32, votes: UInt64)] = []
                    for _ in 0..<count {
                        votes.append(
                            (try reader.read(UInt32.self, "snapshot"), try reader.read(UInt64.self, "snapshot")))
                    }
                    place.certified = CertifiedResults(
                        place: id, treeSize: treeSize, authorized: authorized, voted: voted, votes: votes)
                }
                state.places.append(place)
            }
            guard reader.remaining == 0 else { throw DecodeError("snapshot: trailing bytes") }
            return Snapshot(height: height, headerHash: hash, state: state)
        }
    }
}
