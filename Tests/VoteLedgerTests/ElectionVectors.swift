import Election
import FileStore
import Foundation
import Ledger
import LedgerCrypto

@testable import VoteLedger

/// The election vectors of `Ledger/vectors/` (FORMAT.md §10): a golden election with its tallies, small
/// ledgers that each break one rule or one format check, and signed heads and receipts, good and tampered.
/// Everything is built deterministically (a published key, a fixed ledger id, fixed times), and every
/// expected outcome is what the built `vote` binary reports on the vector at generation time, so a change
/// to the rules or the messages is taken into the vectors by regenerating them, never by hand.
enum ElectionVectors {
    // MARK: - Fixed inputs

    /// RFC 8032 §7.1 TEST 1: the authority of every vector. A published key: never use it for a real ledger.
    static let seed = Hex.decode("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")!
    static let key = try! Ed25519PrivateKey(seed: seed)
    /// RFC 8032 §7.1 TEST 2: a stranger's key, for the forged ledger and for blocks re-signed by someone else.
    static let strangerKey = try! Ed25519PrivateKey(
        seed: Hex.decode("4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb")!)
    static let ledgerID = LedgerID(bytes: Array(16..<32))!
    /// 2026-01-01T00:00:00Z in ms: the genesis time; every other time is an offset from it.
    static let epoch: Int64 = 1_767_225_600_000
    static let ledgerName = "VoteLedger election vectors"
    /// The voter secret the voter tags are keyed with (a real ledger draws it at random).
    static let voterSecret = [UInt8](repeating: 0x5a, count: 32)
    /// The entries of `Ledger/vectors/` this generator owns.
    static let entries = ["election", "cases", "audit", "election.json", "cases.json", "anonymous", "anonymous.json"]

    /// The voter tag of member `n`: HMAC-SHA256 under the voter secret of "member-n" (§11).
    static func tag(_ n: Int) -> Digest { try! VoterIdentity.tag("member-\(n)", secret: voterSecret) }

    /// The token hash of voter `n`: SHA-256 of a fixed canonical token (31 × "T" and one base32 letter).
    static func token(_ n: Int) -> Digest {
        let letter = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")[n % 32]
        return VotingToken(typed: String(repeating: "T", count: 31) + String(letter))!.hash
    }

    /// A time window `[start, end)` given as offsets from the epoch.
    static func window(_ start: Int64, _ end: Int64) -> TimeWindow {
        TimeWindow(start: epoch + start, end: epoch + end)
    }

    // MARK: - Scripts: blocks of events at chosen times

    /// A ledger to write, block by block. Blocks added with `decide` go through the contract at their
    /// time, so they are valid by construction; `raw` blocks are written as given (the rule-breaking ones).
    struct Script {
        var blocks: [(time: Int64, events: [LedgerEvent])] = []
        var state = ElectionState()
        /// Events so far, genesis included: the leaf index of the next event.
        var treeSize: UInt64 = 1

        /// A block at `time` (ms after the epoch) of the events the contract decides for `commands`; a
        /// certification covers exactly the events before it.
        mutating func decide(_ time: Int64, _ commands: [Command]) throws {
            var events: [LedgerEvent] = []
            for var command in commands {
                if case .certifyResults(let place, _) = command {
                    command = .certifyResults(place: place, treeSize: treeSize + UInt64(events.count))
                }
                if case .certifyBallotResults(let place, _, let votedWeight, let questions) = command {
                    command = .certifyBallotResults(
                        place: place, treeSize: treeSize + UInt64(events.count), votedWeight: votedWeight,
                        questions: questions)
                }
                let event = try Contract.decide(command, state: state, at: epoch + time)
                state.apply(event)
                events.append(event.ledgerEvent)
            }
            append(time, events)
        }

        /// A block at `time` of `events` exactly as given, unchecked.
        mutating func raw(_ time: Int64, _ events: [LedgerEvent]) {
            append(time, events)
        }

        private mutating func append(_ time: Int64, _ events: [LedgerEvent]) {
            blocks.append((time, events))
            treeSize += UInt64(events.count)
        }
    }

    /// Writes `script` as a ledger at `path` signed by `authority`; keeps only the segment files unless
    /// `keepIndexes` (then also the derived indexes and `authority.pub`). Returns each block's header.
    @discardableResult
    static func write(
        _ script: Script, to path: String, authority: Ed25519PrivateKey = key, segmentLimit: UInt64 = 1 << 20,
        keepIndexes: Bool = false
    ) throws -> [BlockHeader] {
        let ledger = try FileBlockStore.create(
            at: path, name: ledgerName, authority: authority, ledgerID: ledgerID, timestamp: epoch,
            segmentLimit: segmentLimit, log: { _ in })
        var headers = [ledger.head]
        for block in script.blocks { headers.append(try ledger.append(block.events, timestamp: epoch + block.time)) }
        ledger.close()
        try FileManager.default.removeItem(atPath: KeyDirectory(defaultFor: path).path)
        let kept = keepIndexes ? ["authority.pub", "blocks.idx", "leaves.idx", "nodes.idx", "frontier.idx"] : []
        for name in try FileManager.default.contentsOfDirectory(atPath: path)
        where !name.hasSuffix(".vlseg") && !kept.contains(name) {
            try FileManager.default.removeItem(atPath: path + "/" + name)
        }
        return headers
    }

    // MARK: - The golden election

    /// A 200-character candidate name (the longest allowed), plain ASCII so every way of counting agrees.
    static let longName: String = {
        let text = String(
            String(repeating: "Independent List for Open Books, Member-Led Governance and Fair Elections ", count: 4)
                .prefix(200))
        precondition(text.count == 200 && text.last != " ")
        return text
    }()

    /// The golden election: the voter secret commitment, two places, seven candidates with hard-case names, a withdrawal, eight
    /// authorisations (one token used in both places), seven votes and both results certified. Every event
    /// is decided by the contract at its block time; `rewritten` changes voter 2's vote from candidate 2 to
    /// candidate 1 (and so the certified counts): what an insider holding the key could do.
    static func election(rewritten: Bool = false) throws -> Script {
        var script = Script()
        // Block 1 binds the voter secret to the ledger, as `vote init` does (FORMAT.md §11.16).
        script.raw(
            0,
            [ElectionEvent.voterSecretCommitment(VoterSecret.commitment(voterSecret, ledgerID: ledgerID)).ledgerEvent])
        try script.decide(
            1_000,
            [
                .createPlace(
                    name: "Board of Directors 2026", description: "Two seats.\nOne vote per member.",
                    registration: window(10_000, 20_000), voting: window(30_000, 40_000), maxCandidates: 4),
                .createPlace(
                    name: "Comité d’entreprise", description: "Élection du comité",
                    registration: window(10_000, 20_000),
                    voting: window(30_000, 50_000), maxCandidates: nil),
            ])
        // Registration opens at 10 s (start included).
        try script.decide(
            10_000,
            [
                .registerCandidate(place: 1, name: "Zoë Ångström", pledge: "Open books.\nQuarterly reports."),
                .registerCandidate(place: 1, name: "Σίσυφος", pledge: "Keep pushing."),
                .registerCandidate(place: 1, name: "李小龍", pledge: ""),
                .registerCandidate(place: 2, name: "İlker Çelik", pledge: "Plus de transparence"),
                .registerCandidate(place: 2, name: "Jose\u{301} Nu\u{301}n\u{303}ez", pledge: "Name stored in NFD"),
            ])
        // Authorisations are allowed any time before voting ends; voter 1's token is used in both places.
        try script.decide(
            15_000,
            (1...5).map { .authorizeVoter(place: 1, voterTag: tag($0), tokenHash: token($0)) }
                + [
                    .authorizeVoter(place: 2, voterTag: tag(1), tokenHash: token(1)),
                    .authorizeVoter(place: 2, voterTag: tag(6), tokenHash: token(6)),
                ])
        // The last millisecond of registration: place 1 reaches its limit of four.
        try script.decide(
            19_999,
            [
                .registerCandidate(place: 1, name: longName, pledge: ""),
                .registerCandidate(place: 2, name: "ＢＯＢ", pledge: "Fullwidth letters"),
            ])
        // Registration has ended (end excluded), voting has not started: withdrawal still allowed.
        try script.decide(20_000, [.withdrawCandidate(place: 1, candidate: 3)])
        // Voting opens at 30 s (start included).
        try script.decide(
            30_000,
            [
                .castVote(place: 1, candidate: 1, tokenHash: token(1)),
                .castVote(place: 1, candidate: rewritten ? 1 : 2, tokenHash: token(2)),
                .castVote(place: 1, candidate: 1, tokenHash: token(3)),
                .castVote(place: 2, candidate: 2, tokenHash: token(1)),
                .castVote(place: 2, candidate: 1, tokenHash: token(6)),
            ])
        // The last millisecond of place 1's voting window; voter 5 abstains.
        try script.decide(39_999, [.castVote(place: 1, candidate: 4, tokenHash: token(4))])
        // Place 1 closes at 40 s (end excluded): certify it; place 2 still authorises.
        try script.decide(
            40_000,
            [
                .certifyResults(place: 1, treeSize: 0),
                .authorizeVoter(place: 2, voterTag: tag(7), tokenHash: token(7)),
            ])
        try script.decide(45_000, [.castVote(place: 2, candidate: 3, tokenHash: token(7))])
        try script.decide(50_000, [.certifyResults(place: 2, treeSize: 0)])
        return script
    }

    /// The leaf index of voter 2's vote in place 1 (the receipt vectors' event): in the block at 30 s.
    static func receiptEvent(in script: Script) -> (index: UInt64, event: LedgerEvent) {
        var index: UInt64 = 1
        for block in script.blocks {
            for event in block.events {
                if case .voteCast(1, _, token(2)) = try? ElectionEvent(event) { return (index, event) }
                index += 1
            }
        }
        preconditionFailure("the election has voter 2's vote")
    }

    // MARK: - The small election every case starts from

    /// How far the base election of the cases has got.
    enum Stage: Int, Comparable {
        case empty, created, registered, authorized, voted, certified
        static func < (a: Stage, b: Stage) -> Bool { a.rawValue < b.rawValue }
    }

    /// Place 1 "Board" (registration 10-20 s, voting 30-40 s, at most 3 candidates), created at 1 s;
    /// candidates 1 "Alice" and 2 "Bob" at 10 s; voters 1-3 authorised at 15 s; voter 1 votes for Alice
    /// at 30 s; results certified at 40 s. The script stops after `stage`.
    static func base(_ stage: Stage) throws -> Script {
        var script = Script()
        if stage >= .created {
            try script.decide(
                1_000,
                [
                    .createPlace(
                        name: "Board", description: "Annual board election", registration: window(10_000, 20_000),
                        voting: window(30_000, 40_000), maxCandidates: 3)
                ])
        }
        if stage >= .registered {
            try script.decide(
                10_000,
                [
                    .registerCandidate(place: 1, name: "Alice", pledge: ""),
                    .registerCandidate(place: 1, name: "Bob", pledge: ""),
                ])
        }
        if stage >= .authorized {
            try script.decide(
                15_000, (1...3).map { .authorizeVoter(place: 1, voterTag: tag($0), tokenHash: token($0)) })
        }
        if stage >= .voted { try script.decide(30_000, [.castVote(place: 1, candidate: 1, tokenHash: token(1))]) }
        if stage >= .certified { try script.decide(40_000, [.certifyResults(place: 1, treeSize: 0)]) }
        return script
    }

    /// A place-created event as recorded, by default the base election's place 1.
    static func place(
        id: UInt32 = 1, name: String = "Board", description: String = "Annual board election",
        registration: TimeWindow = window(10_000, 20_000), voting: TimeWindow = window(30_000, 40_000)
    ) -> LedgerEvent {
        ElectionEvent.placeCreated(
            Place(
                id: id, name: name, description: description, registration: registration, voting: voting,
                maxCandidates: 3)
        ).ledgerEvent
    }

    static func candidate(_ id: UInt32, _ name: String, pledge: String = "", place: UInt32 = 1) -> LedgerEvent {
        ElectionEvent.candidateRegistered(place: place, candidate: id, name: name, pledge: pledge).ledgerEvent
    }

    static func withdraw(_ id: UInt32, place: UInt32 = 1) -> LedgerEvent {
        ElectionEvent.candidateWithdrawn(place: place, candidate: id).ledgerEvent
    }

    static func authorize(_ voter: Int, token: Int? = nil, place: UInt32 = 1) -> LedgerEvent {
        ElectionEvent.voterAuthorized(place: place, voterTag: tag(voter), tokenHash: self.token(token ?? voter))
            .ledgerEvent
    }

    static func vote(_ voter: Int, for candidate: UInt32, place: UInt32 = 1) -> LedgerEvent {
        ElectionEvent.voteCast(place: place, candidate: candidate, tokenHash: token(voter)).ledgerEvent
    }

    /// A results-certified event as recorded: by default the true results of the base election after
    /// `.voted`, for the event at leaf index `index`.
    static func results(
        _ index: UInt64, place: UInt32 = 1, authorized: UInt64 = 3, voted: UInt64 = 1,
        votes: [(UInt32, UInt64)] = [(1, 1), (2, 0)]
    ) -> LedgerEvent {
        ElectionEvent.resultsCertified(
            CertifiedResults(
                place: place, treeSize: index, authorized: authorized, voted: voted,
                votes: votes.map { (candidate: $0.0, votes: $0.1) })
        ).ledgerEvent
    }

    // MARK: - Byte surgery on a written ledger

    /// The frames of a segment file: the range of each, walking 12 + B bytes at a time from offset 32.
    static func frames(_ segment: [UInt8]) -> [Range<Int>] {
        var ranges: [Range<Int>] = []
        var offset = 32
        while offset + 12 <= segment.count {
            let length = segment[offset + 4..<offset + 8].reduce(0) { $0 << 8 | Int($1) }
            guard offset + 12 + length <= segment.count else { break }
            ranges.append(offset..<offset + 12 + length)
            offset += 12 + length
        }
        return ranges
    }

    static func bigEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }

    static func read(_ path: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else { throw CocoaError(.fileReadNoSuchFile) }
        return Array(data)
    }

    static func store(_ bytes: [UInt8], at path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    /// Rewrites the block in frame `index` of segment `segment` of the ledger at `path`: `edit` changes the
    /// block's bytes; then, unless `signer` is nil, the header hash is signed again by `signer`, and the
    /// frame's length and CRC are made to fit, so that only what `edit` broke is wrong.
    static func editBlock(
        _ path: String, segment: Int = 0, frame index: Int, signer: Ed25519PrivateKey? = key,
        _ edit: (inout [UInt8]) throws -> Void
    ) throws {
        let file = path + "/" + LedgerDirectory.segmentName(segment)
        var bytes = try read(file)
        let range = frames(bytes)[index]
        var block = Array(bytes[range.lowerBound + 12..<range.upperBound])
        try edit(&block)
        if let signer {
            block.replaceSubrange(112..<176, with: try signer.signature(for: SHA256.hash(Array(block[0..<112])).bytes))
        }
        let frame = Array("VLBK".utf8) + bigEndian(UInt32(block.count)) + bigEndian(CRC32C.checksum(block)) + block
        bytes.replaceSubrange(range, with: frame)
        try store(bytes, at: file)
    }

    /// The tree head over every event of the single-segment ledger at `path` up to frame `index`, with that
    /// frame's block taken as `block` (whose events an edit may have changed).
    static func treeRoot(_ path: String, through index: Int, block: [UInt8]) throws -> Digest {
        let bytes = try read(path + "/" + LedgerDirectory.segmentName(0))
        var frontier = MerkleFrontier()
        for range in frames(bytes).prefix(index) {
            for event in try Block(decoding: Array(bytes[range.lowerBound + 12..<range.upperBound])).events {
                frontier.append(event.leafHash)
            }
        }
        for event in try Block(decoding: block).events { frontier.append(event.leafHash) }
        return frontier.root
    }

    /// XORs byte `offset` of `bytes` with `mask`.
    static func flip(_ bytes: inout [UInt8], _ offset: Int, _ mask: UInt8 = 0x01) { bytes[offset] ^= mask }

    /// Sets the big-endian integer at `offset` of `bytes`.
    static func set<T: FixedWidthInteger>(_ bytes: inout [UInt8], _ offset: Int, _ value: T) {
        bytes.replaceSubrange(offset..<offset + MemoryLayout<T>.size, with: bigEndian(value))
    }
}
