import Election
import Foundation
import Ledger
import LedgerCrypto
import TestSupport
import VoteLedger

/// The JSON indexes of the election vectors (`election.json`, `cases.json`; FORMAT.md §10 describes them),
/// the signed heads and receipts under `audit/`, and the generator that writes it all and asks the built
/// `vote` binary what each vector gives.
extension ElectionVectors {
    // MARK: - Index schema

    /// What `vote verify --json --ledger PATH` reports, run in `Ledger/vectors/` with PATH relative to it.
    struct VerifyOutcome: Codable, Equatable {
        var ok: Bool
        /// Exit status: 0 verified, 1 not a ledger, 3 integrity failure.
        var exit: Int32
        /// Failures: the one line `vote` prints on stderr, without its "vote: " prefix.
        var message: String?
        /// Failures: "damage" (§7: block, segment, offset), "rule" (an event breaks an election rule, §11),
        /// "event" (an event does not decode as an election event, §11) or "not-a-ledger" (§7 opening).
        var failure: String?
        /// Failures: the block that fails. Success: the last block.
        var height: UInt64?
        /// "rule" and "event": the event's position in its block, from 0.
        var event: Int?
        /// "damage": the segment file and the byte offset of the failing block's frame in it.
        var segment: String?
        var offset: UInt64?
        /// Failures: the reason alone, without the location.
        var reason: String?
        /// Success: the summary of §7 (and the number of places).
        var blocks: UInt64?
        var events: UInt64?
        var bytes: UInt64?
        var headHash: String?
        var treeRoot: String?
        var tornTailBytes: UInt64?
        var places: Int?
    }

    /// What `vote audit` reports, run in `Ledger/vectors/`.
    struct AuditOutcome: Codable, Equatable {
        var ok: Bool
        /// Exit status: 0 checked, 1 rejected (a malformed receipt), 3 integrity failure.
        var exit: Int32
        /// Success: what it prints on stdout.
        var output: String?
        /// Failure: the line it prints on stderr, without "vote: ".
        var message: String?
    }

    /// A ledger directory under `Ledger/vectors/` and what `vote verify` reports on it.
    struct LedgerVector: Codable {
        var name: String
        /// Directory, relative to `Ledger/vectors/`.
        var path: String
        /// place, candidate, name, withdrawal, authorisation, vote, results, encoding (§11); format, layout
        /// (§5-§7); valid, torn-tail (must verify); trust (verify, though they should not be believed, §12).
        var group: String
        /// What the ledger breaks, in words.
        var breaks: String
        var expect: VerifyOutcome
    }

    /// A `vote audit` invocation on the files under `audit/` and what it reports. The command line is
    /// `vote audit [RECEIPT] [--head HEAD] [--key KEY] [--ledger LEDGER]`, paths relative to `Ledger/vectors/`.
    struct AuditVector: Codable {
        var name: String
        /// What the invocation checks, in words.
        var checks: String
        var receipt: String?
        var head: String?
        /// A file holding the verifier key line (an offline audit, without a ledger).
        var key: String?
        /// The same key as 64 hex digits (what `Tools/verify_ledger.py --key` takes).
        var keyHex: String?
        var ledger: String?
        var expect: AuditOutcome

        /// The arguments after `vote audit`.
        var arguments: [String] {
            [receipt].compactMap { $0 } + (head.map { ["--head", $0] } ?? []) + (key.map { ["--key", $0] } ?? [])
                + (ledger.map { ["--ledger", $0] } ?? [])
        }
    }

    /// `cases.json`.
    struct CaseIndex: Codable {
        var description: String
        var ledgers: [LedgerVector]
        var audits: [AuditVector]
    }

    /// One candidate's line of a place's tally.
    struct CandidateTally: Codable, Equatable {
        var candidate: UInt32
        var name: String
        var votes: UInt64
        var withdrawn: Bool
    }

    /// A place of the golden election and its tally.
    struct PlaceTally: Codable {
        var place: UInt32
        var name: String
        var authorized: UInt64
        var voted: UInt64
        /// Credentials issued: anonymous places only.
        var issued: UInt64?
        /// The leaf index of the place's results-certified event.
        var certifiedAt: UInt64?
        var tally: [CandidateTally]
    }

    /// `anonymous.json`: the golden anonymous election (§11.18, §11.19).
    struct AnonymousSummary: Codable {
        var description: String
        var path: String
        /// The ballot key of place 1: its DER SubjectPublicKeyInfo, and its private half (PKCS #1 DER), a
        /// published test key.
        var ballotKeySpkiHex: String
        var ballotPrivateKeyHex: String
        var verify: VerifyOutcome
        var places: [PlaceTally]
    }

    /// `election.json`.
    struct ElectionSummary: Codable {
        var description: String
        var path: String
        var ledgerId: String
        var authoritySeedHex: String
        var authorityPublicKeyHex: String
        /// The voter secret the tags are keyed with, and its commitment in block 1 (§11.16).
        var voterSecretHex: String
        var voterSecretCommitmentHex: String
        /// The verifier key line (§12) of the authority under the ledger's origin.
        var verifierKey: String
        var verify: VerifyOutcome
        var places: [PlaceTally]
    }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.keyEncodingStrategy = .convertToSnakeCase
        return encoder
    }()

    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        return decoder
    }()

    static func json(_ value: some Encodable) throws -> [UInt8] { Array(try encoder.encode(value)) + [0x0A] }

    // MARK: - Asking the built `vote`

    /// Runs `vote arguments` in `directory` with a state directory of its own, so that no head remembered
    /// from another vector of the same ledger id changes the verdict.
    static func vote(_ arguments: [String], in directory: String) throws -> VoteCLI.Result {
        let state = NSTemporaryDirectory() + "vote-vectors-state-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: state) }
        return try VoteCLI.run(arguments, environment: ["VOTE_STATE_DIR": state], directory: directory)
    }

    /// The line a failed `vote` printed, without "vote: ".
    static func message(_ result: VoteCLI.Result) -> String {
        var line = result.err.trimmingCharacters(in: .newlines)
        if line.hasPrefix("vote: ") { line.removeFirst(6) }
        return line
    }

    /// What `vote verify` reports on the ledger at `path` (relative to `root`).
    static func verify(_ path: String, in root: String) throws -> VerifyOutcome {
        let result = try vote(["verify", "--json", "--ledger", path], in: root)
        var outcome = VerifyOutcome(ok: result.status == 0, exit: result.status)
        guard result.status == 0 else {
            let message = message(result)
            outcome.message = message
            outcome.reason = message
            func match(_ pattern: String) -> [String]? {
                guard let found = try? Regex(pattern).wholeMatch(in: message) else { return nil }
                return (1..<found.output.count).map { found.output[$0].substring.map(String.init) ?? "" }
            }
            if let parts = match(#"integrity failure: block (\d+): (.*) \((segment-\d{8}\.vlseg), byte offset (\d+)\)"#)
            {
                (outcome.failure, outcome.height, outcome.reason) = ("damage", UInt64(parts[0]), parts[1])
                (outcome.segment, outcome.offset) = (parts[2], UInt64(parts[3]))
            } else if let parts = match(#"integrity failure: block (\d+), event (\d+) breaks the rules: (.*)"#) {
                (outcome.failure, outcome.height, outcome.event, outcome.reason) = (
                    "rule", UInt64(parts[0]), Int(parts[1]), parts[2]
                )
            } else if let parts = match(#"integrity failure: block (\d+), event (\d+): (.*)"#) {
                (outcome.failure, outcome.height, outcome.event, outcome.reason) = (
                    "event", UInt64(parts[0]), Int(parts[1]), parts[2]
                )
            } else if let parts = match(#".*?: not a ledger: (.*)"#) {
                (outcome.failure, outcome.reason) = ("not-a-ledger", parts[0])
            }
            return outcome
        }
        let summary = try JSONSerialization.jsonObject(with: Data(result.out.utf8)) as? [String: Any] ?? [:]
        outcome.blocks = (summary["blocks"] as? NSNumber)?.uint64Value
        outcome.events = (summary["events"] as? NSNumber)?.uint64Value
        outcome.bytes = (summary["bytes"] as? NSNumber)?.uint64Value
        outcome.height = (summary["height"] as? NSNumber)?.uint64Value
        outcome.headHash = summary["head_hash"] as? String
        outcome.treeRoot = summary["tree_root"] as? String
        outcome.tornTailBytes = (summary["torn_tail_bytes"] as? NSNumber)?.uint64Value
        outcome.places = (summary["places"] as? NSNumber)?.intValue
        return outcome
    }

    /// What `vote audit arguments` reports, run in `root`.
    static func audit(_ arguments: [String], in root: String) throws -> AuditOutcome {
        let result = try vote(["audit"] + arguments, in: root)
        return result.status == 0
            ? AuditOutcome(ok: true, exit: 0, output: result.out.trimmingCharacters(in: .newlines))
            : AuditOutcome(ok: false, exit: result.status, message: message(result))
    }

    // MARK: - Signed heads and receipts

    /// The leaf hashes of a ledger written from `script` under `authority` (the genesis names the key).
    static func leaves(_ script: Script, authority: Ed25519PrivateKey = key) -> [Digest] {
        let genesis = Genesis(
            ledgerID: ledgerID, createdAt: epoch, authorityKey: authority.publicKey.rawRepresentation, name: ledgerName)
        return [genesis.event.leafHash] + script.blocks.flatMap { $0.events.map(\.leafHash) }
    }

    /// The head after `header`, signed by `authority` (FORMAT.md §12).
    static func signedHead(_ header: BlockHeader, authority: Ed25519PrivateKey = key) throws -> SignedNote {
        try SignedNote.sign(SignedHead.checkpoint(header).text, name: SignedHead.origin(ledgerID), key: authority)
    }

    /// The receipt of voter 2's vote in `script`'s ledger under the head after `header`.
    static func receipt(
        _ script: Script, under header: BlockHeader, authority: Ed25519PrivateKey = key
    ) throws
        -> TlogProof
    {
        let (index, event) = receiptEvent(in: script)
        let leaves = leaves(script, authority: authority)
        return TlogProof(
            extra: event.encoded, index: index,
            proof: try Merkle.inclusionProof(index: index, size: header.treeSize) { leaves[Int($0)] },
            checkpoint: try signedHead(header, authority: authority))
    }

    /// Writes `audit/`: the authority's and a stranger's verifier keys, signed heads and receipts of the
    /// golden election (good and tampered), and two ledgers that verify on their own although they should
    /// not be believed: `rewritten` (the authority's own key changed voter 2's vote and the result) and
    /// `forged` (the same events under a stranger's key). Returns the audit invocations, outcomes empty.
    static func writeAudit(_ root: String, election script: Script, headers: [BlockHeader]) throws -> [AuditVector] {
        let directory = root + "/audit"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let rewritten = try election(rewritten: true)
        let rewrittenHeaders = try write(rewritten, to: directory + "/rewritten", keepIndexes: true)
        let forgedHeaders = try write(script, to: directory + "/forged", authority: strangerKey, keepIndexes: true)
        let origin = SignedHead.origin(ledgerID)
        let early = headers.first { $0.timestamp == epoch + 30_000 }!

        let good = try receipt(script, under: headers.last!)
        var flippedProof = good
        var proofHash = flippedProof.proof[0].bytes
        proofHash[0] ^= 0x01
        flippedProof.proof[0] = Digest(bytes: proofHash)!
        var wrongIndex = good
        wrongIndex.index += 1
        var badSignature = good
        badSignature.checkpoint.signatures[0].payload[10] ^= 0x01
        var alteredEvent = good
        alteredEvent.extra = vote(2, for: 1).encoded
        var noExtra = good
        noExtra.extra = nil
        let files: [(String, String)] = [
            ("verifier.key", SignedNote.verifierKey(name: origin, key: key.publicKey) + "\n"),
            ("stranger.key", SignedNote.verifierKey(name: origin, key: strangerKey.publicKey) + "\n"),
            ("head-final.txt", try signedHead(headers.last!).serialized),
            ("head-early.txt", try signedHead(early).serialized),
            ("head-rewritten.txt", try signedHead(rewrittenHeaders.last!).serialized),
            ("head-forged.txt", try signedHead(forgedHeaders.last!, authority: strangerKey).serialized),
            ("receipt.tlog-proof", good.serialized),
            ("receipt-early.tlog-proof", try receipt(script, under: early).serialized),
            ("receipt-flipped-proof.tlog-proof", flippedProof.serialized),
            ("receipt-wrong-index.tlog-proof", wrongIndex.serialized),
            ("receipt-bad-signature.tlog-proof", badSignature.serialized),
            ("receipt-altered-event.tlog-proof", alteredEvent.serialized),
            ("receipt-no-extra.tlog-proof", noExtra.serialized),
            ("receipt-rewritten.tlog-proof", try receipt(rewritten, under: rewrittenHeaders.last!).serialized),
            (
                "receipt-forged.tlog-proof",
                try receipt(script, under: forgedHeaders.last!, authority: strangerKey).serialized
            ),
        ]
        for (name, text) in files + (try malformedHeads(headers.last!)) {
            try store(Array(text.utf8), at: directory + "/" + name)
        }

        let keyHex = Hex.encode(key.publicKey.rawRepresentation)
        let strangerHex = Hex.encode(strangerKey.publicKey.rawRepresentation)
        let pending = AuditOutcome(ok: false, exit: -1)
        func audit(
            _ name: String, _ checks: String, receipt: String? = nil, head: String? = nil, key: String? = nil,
            ledger: String? = nil
        ) -> AuditVector {
            AuditVector(
                name: name, checks: checks, receipt: receipt.map { "audit/\($0).tlog-proof" },
                head: head.map { "audit/\($0).txt" },
                key: key.map { "audit/\($0).key" }, keyHex: key.map { $0 == "verifier" ? keyHex : strangerHex },
                ledger: ledger,
                expect: pending)
        }
        return [
            audit(
                "receipt-with-ledger",
                "a vote's receipt against the ledger: signature, inclusion, consistency with the ledger",
                receipt: "receipt", ledger: "election"),
            audit(
                "receipt-offline",
                "the receipt offline with the authority's verifier key: signature and inclusion only",
                receipt: "receipt", key: "verifier"),
            audit(
                "receipt-early-with-ledger",
                "a receipt under an earlier head: consistency from that head to the ledger",
                receipt: "receipt-early", ledger: "election"),
            audit(
                "receipt-and-head-with-ledger", "the receipt and the published final head against the ledger",
                receipt: "receipt", head: "head-final", ledger: "election"),
            audit(
                "head-early-with-ledger", "the ledger extends a head published earlier", head: "head-early",
                ledger: "election"),
            audit(
                "head-final-with-ledger", "the ledger extends the published final head", head: "head-final",
                ledger: "election"),
            audit(
                "receipt-early-and-head-offline",
                "an early receipt and a later head offline (no consistency proof without a ledger)",
                receipt: "receipt-early", head: "head-final", key: "verifier"),
            audit(
                "receipt-flipped-proof", "one bit of the first inclusion-proof hash flipped",
                receipt: "receipt-flipped-proof",
                ledger: "election"),
            audit(
                "receipt-wrong-index", "the index line one too large", receipt: "receipt-wrong-index",
                ledger: "election"),
            audit(
                "receipt-bad-signature", "one bit of the head's signature flipped", receipt: "receipt-bad-signature",
                ledger: "election"),
            audit(
                "receipt-altered-event", "the extra line holds a vote for another candidate",
                receipt: "receipt-altered-event",
                ledger: "election"),
            audit(
                "receipt-no-extra", "a receipt without its extra line (the event)", receipt: "receipt-no-extra",
                ledger: "election"),
            audit(
                "head-rewritten-with-ledger",
                "a head signed by the authority over a rewritten history: not a prefix of the ledger",
                head: "head-rewritten", ledger: "election"),
            audit(
                "receipt-rewritten-with-ledger", "a receipt from the rewritten history against the real ledger",
                receipt: "receipt-rewritten", ledger: "election"),
            audit(
                "receipt-rewritten-offline",
                "a receipt from the rewritten history offline: validly signed, so it checks",
                receipt: "receipt-rewritten", key: "verifier"),
            audit(
                "receipt-against-rewritten-ledger",
                "the voter's genuine receipt against the rewritten ledger: the rewrite is caught",
                receipt: "receipt", ledger: "audit/rewritten"),
            audit(
                "receipt-and-rewritten-head-offline",
                "the genuine receipt with the rewritten head of the same size: a fork",
                receipt: "receipt", head: "head-rewritten", key: "verifier"),
            audit(
                "receipt-forged-offline", "a receipt signed by a stranger, checked with the authority's key",
                receipt: "receipt-forged", key: "verifier"),
            audit(
                "receipt-forged-with-forged-ledger",
                "the forged receipt against the forged ledger, whose genesis names the stranger",
                receipt: "receipt-forged", ledger: "audit/forged"),
            audit(
                "receipt-against-forged-ledger", "the genuine receipt against the forged ledger", receipt: "receipt",
                ledger: "audit/forged"),
            audit(
                "receipt-with-stranger-key", "the genuine receipt offline with the stranger's key", receipt: "receipt",
                key: "stranger"),
            audit(
                "head-forged-with-ledger", "the forged ledger's head against the real ledger", head: "head-forged",
                ledger: "election"),
        ] + malformedHeadAudits.map { audit($0.name, $0.checks, head: $0.head, ledger: "election") }
    }

    /// Heads §12.1 rejects although the authority signed them, each the final head of the golden election
    /// with its extension lines changed: (file name, the lines after the root).
    static func malformedHeads(_ last: BlockHeader) throws -> [(String, String)] {
        let (height, time) = ("height \(last.height)", "time \(last.timestamp)")
        return try [
            ("head-no-height.txt", [time]), ("head-no-time.txt", [height]),
            ("head-height-twice.txt", [height, height, time]),
            ("head-wrong-height.txt", ["height \(last.height - 1)", time]),
            ("head-wrong-time.txt", [height, "time \(last.timestamp + 1)"]),
        ].map { name, extensions in
            var checkpoint = SignedHead.checkpoint(last)
            checkpoint.extensions = extensions
            return (name, try SignedNote.sign(checkpoint.text, name: SignedHead.origin(ledgerID), key: key).serialized)
        }
    }

    /// The `vote audit --head` invocations of `malformedHeads` against the golden election.
    static let malformedHeadAudits: [(name: String, checks: String, head: String)] = [
        ("head-no-height-with-ledger", "a signed head without its height line", "head-no-height"),
        ("head-no-time-with-ledger", "a signed head without its time line", "head-no-time"),
        ("head-height-twice-with-ledger", "a signed head with its height line twice", "head-height-twice"),
        (
            "head-wrong-height-with-ledger",
            "the final head (29 events) naming the block before the last, which holds fewer events",
            "head-wrong-height"
        ),
        ("head-wrong-time-with-ledger", "the final head naming its block's time plus 1 ms", "head-wrong-time"),
    ]

    // MARK: - Generating everything

    /// What `build` produced besides the files: each rule case's intended failing block.
    struct Built {
        /// Rule and encoding cases: the height of the block that breaks the rule (the last block).
        var targets: [String: UInt64] = [:]
    }

    /// Writes every entry of `entries` into `root` and returns what the cases intend.
    @discardableResult
    static func build(at root: String) throws -> Built {
        var built = Built()
        for directory in ["cases", "audit"] {
            try FileManager.default.createDirectory(atPath: root + "/" + directory, withIntermediateDirectories: true)
        }
        let script = try election()
        let headers = try write(script, to: root + "/election", keepIndexes: true)
        var ledgers: [LedgerVector] = []
        for vector in cases {
            if let target = try vector.build(root + "/cases/" + vector.name) { built.targets[vector.name] = target }
            ledgers.append(
                LedgerVector(
                    name: vector.name, path: "cases/" + vector.name, group: vector.group, breaks: vector.breaks,
                    expect: try verify("cases/" + vector.name, in: root)))
        }
        let anonymous = try anonymousElection()
        try write(anonymous, to: root + "/anonymous", keepIndexes: true)
        ledgers.append(
            LedgerVector(
                name: "anonymous-election", path: "anonymous", group: "valid",
                breaks: "nothing: the golden anonymous election (anonymous.json), which must verify",
                expect: try verify("anonymous", in: root)))
        var audits = try writeAudit(root, election: script, headers: headers)
        for (name, path, breaks) in [
            (
                "rewritten", "audit/rewritten",
                "nothing it can see alone: the authority changed voter 2's vote and the certified result together (§12)"
            ),
            (
                "forged", "audit/forged",
                "nothing it can see alone: the whole election re-signed under a stranger's key named in its own genesis (§12)"
            ),
        ] {
            ledgers.append(
                LedgerVector(name: name, path: path, group: "trust", breaks: breaks, expect: try verify(path, in: root))
            )
        }
        for index in audits.indices { audits[index].expect = try audit(audits[index].arguments, in: root) }
        try store(
            try json(
                CaseIndex(
                    description:
                        "Ledger vectors that must be rejected or accepted, and vote audit checks. See Ledger/FORMAT.md §10.",
                    ledgers: ledgers, audits: audits)),
            at: root + "/cases.json")

        func tallies(_ script: Script) -> [PlaceTally] {
            script.state.places.map { place in
                PlaceTally(
                    place: place.place.id, name: place.place.name, authorized: place.authorized, voted: place.voted,
                    issued: place.place.isAnonymous ? place.issued : nil, certifiedAt: place.certified?.treeSize,
                    tally: place.candidates.map {
                        CandidateTally(candidate: $0.id, name: $0.name, votes: $0.votes, withdrawn: $0.withdrawn)
                    })
            }
        }
        let places = tallies(script)
        try store(
            try json(
                AnonymousSummary(
                    description:
                        "Golden VoteLedger election with an anonymous place (blind-signed ballot credentials). See Ledger/FORMAT.md §10 and §11.18-11.19.",
                    path: "anonymous", ballotKeySpkiHex: Hex.encode(ballotKeyDER),
                    ballotPrivateKeyHex: Hex.encode(ballotKey.derRepresentation),
                    verify: try verify("anonymous", in: root), places: tallies(anonymous))),
            at: root + "/anonymous.json")
        try store(
            try json(
                ElectionSummary(
                    description: "Golden VoteLedger election (format version 1). See Ledger/FORMAT.md §10.",
                    path: "election", ledgerId: ledgerID.description, authoritySeedHex: Hex.encode(seed),
                    authorityPublicKeyHex: Hex.encode(key.publicKey.rawRepresentation),
                    voterSecretHex: Hex.encode(voterSecret),
                    voterSecretCommitmentHex: VoterSecret.commitment(voterSecret, ledgerID: ledgerID).hex,
                    verifierKey: SignedNote.verifierKey(name: SignedHead.origin(ledgerID), key: key.publicKey),
                    verify: try verify("election", in: root), places: places)),
            at: root + "/election.json")
        return built
    }
}
