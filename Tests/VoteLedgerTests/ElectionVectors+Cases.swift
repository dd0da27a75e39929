import Election
import FileStore
import Foundation
import Ledger
import LedgerCrypto

/// The ledger vectors under `Ledger/vectors/cases/`: each a small ledger that breaks one election rule,
/// one event encoding or one format check, or a valid layout a verifier must accept (several segments, an
/// empty segment, a torn tail). What each should give is not written here: the generator asks `vote verify`.
extension ElectionVectors {
    /// One ledger vector: its directory name, the group it belongs to, what it breaks, and how to write it
    /// (returning, for a rule case, the height of the block meant to break the rule).
    struct Case {
        var name: String
        var group: String
        var breaks: String
        var build: (_ path: String) throws -> UInt64?
    }

    // MARK: - Election rules (§11), one case per rule of the contract

    /// A case whose ledger is the base election up to `stage`, then `setup`'s valid blocks, then one block at
    /// `time` of `events` as recorded (given the leaf index of the block's first event).
    static func rule(
        _ name: String, _ group: String, _ breaks: String, from stage: Stage,
        setup: @escaping (inout Script) throws -> Void = { _ in }, at time: Int64,
        _ events: @escaping (_ firstIndex: UInt64) -> [LedgerEvent]
    ) -> Case {
        Case(name: name, group: group, breaks: breaks) { path in
            var script = try base(stage)
            try setup(&script)
            script.raw(time, events(script.treeSize))
            try write(script, to: path)
            return UInt64(script.blocks.count)
        }
    }

    static var ruleCases: [Case] {
        let long = String(repeating: "n", count: 201)
        let longText = String(repeating: "t", count: 2001)
        return [
            // Places.
            rule("place-name-empty", "place", "a place with an empty name", from: .empty, at: 1_000) { _ in
                [place(name: "")]
            },
            rule(
                "place-name-untrimmed", "place",
                "a place name recorded with surrounding spaces (names are stored trimmed)",
                from: .empty, at: 1_000
            ) { _ in [place(name: " Board ")] },
            rule(
                "place-name-too-long", "place", "a place name of 201 characters (at most 200)", from: .empty, at: 1_000
            ) { _ in
                [place(name: long)]
            },
            rule(
                "place-name-with-tab", "place", "a place name holding a tab (a control character)", from: .empty,
                at: 1_000
            ) { _ in
                [place(name: "Board\t2026")]
            },
            rule(
                "place-name-with-bidi-override", "place", "a place name holding U+202E RIGHT-TO-LEFT OVERRIDE",
                from: .empty, at: 1_000
            ) { _ in [place(name: "Board \u{202E}6202")] },
            rule(
                "place-description-too-long", "place", "a description of 2001 characters (at most 2000)",
                from: .empty, at: 1_000
            ) { _ in [place(description: longText)] },
            rule(
                "place-description-with-tab", "place", "a description holding a tab (only line feeds are allowed)",
                from: .empty, at: 1_000
            ) { _ in [place(description: "Annual\telection")] },
            rule(
                "registration-window-empty", "place", "registration starts when it ends (10 s to 10 s)",
                from: .empty, at: 1_000
            ) { _ in [place(registration: window(10_000, 10_000))] },
            rule(
                "registration-ends-after-voting-starts", "place",
                "registration ends at 30.001 s, voting starts at 30 s",
                from: .empty, at: 1_000
            ) { _ in [place(registration: window(10_000, 30_001))] },
            rule("voting-window-empty", "place", "voting starts when it ends (30 s to 30 s)", from: .empty, at: 1_000) {
                _ in
                [place(voting: window(30_000, 30_000))]
            },
            rule(
                "place-created-as-voting-starts", "place",
                "a place created at 30 s whose voting starts at 30 s (must start later)",
                from: .empty, at: 30_000
            ) { _ in [place()] },
            rule(
                "place-id-not-next", "place", "the first place recorded with id 2 (places are numbered 1, 2, …)",
                from: .empty, at: 1_000
            ) { _ in [place(id: 2)] },
            rule(
                "place-negative-time", "place", "registration starts at −5 ms, before 1970 (times lie in 0…2⁶³−1)",
                from: .empty, at: 1_000
            ) { _ in [place(registration: TimeWindow(start: -5, end: epoch + 20_000))] },

            // Candidates.
            rule(
                "candidate-before-registration", "candidate",
                "a candidate registered at 9.999 s, before registration opens at 10 s",
                from: .created, at: 9_999
            ) { _ in [candidate(1, "Alice")] },
            rule(
                "candidate-at-registration-end", "candidate", "a candidate registered at 20 s, when registration ends",
                from: .created, at: 20_000
            ) { _ in [candidate(1, "Alice")] },
            rule(
                "candidate-unknown-place", "candidate", "a candidate registered in place 2, which does not exist",
                from: .created, at: 10_000
            ) { _ in [candidate(1, "Alice", place: 2)] },
            rule("candidate-name-empty", "candidate", "a candidate with an empty name", from: .created, at: 10_000) {
                _ in
                [candidate(1, "")]
            },
            rule(
                "candidate-name-only-spaces", "candidate",
                "a name of a space, a no-break space and a space (empty once trimmed)",
                from: .created, at: 10_000
            ) { _ in [candidate(1, " \u{A0} ")] },
            rule(
                "candidate-name-untrimmed", "candidate",
                "a name recorded with a trailing U+00A0 NO-BREAK SPACE (stored trimmed)",
                from: .created, at: 10_000
            ) { _ in [candidate(1, "Alice\u{A0}")] },
            rule(
                "candidate-name-too-long", "candidate", "a candidate name of 201 characters (at most 200)",
                from: .created, at: 10_000
            ) { _ in [candidate(1, long)] },
            rule("candidate-name-with-tab", "candidate", "a candidate name holding a tab", from: .created, at: 10_000) {
                _ in
                [candidate(1, "Alice\tSmith")]
            },
            rule(
                "candidate-name-with-bidi-isolate", "candidate",
                "a candidate name holding U+2066 LEFT-TO-RIGHT ISOLATE",
                from: .created, at: 10_000
            ) { _ in [candidate(1, "Alice \u{2066}Smith")] },
            rule(
                "candidate-pledge-too-long", "candidate", "a pledge of 2001 characters (at most 2000)",
                from: .created, at: 10_000
            ) { _ in [candidate(1, "Alice", pledge: longText)] },
            rule(
                "candidate-pledge-with-escape", "candidate", "a pledge holding U+001B ESCAPE", from: .created,
                at: 10_000
            ) { _ in
                [candidate(1, "Alice", pledge: "Vote \u{1B}[1mAlice")]
            },
            rule(
                "candidate-duplicate-name", "candidate", "a second candidate named \"Alice\"", from: .registered,
                at: 12_000
            ) {
                _ in [candidate(3, "Alice")]
            },
            rule(
                "candidate-duplicate-name-case", "candidate",
                "\"ALICE\" after \"Alice\" (names are compared case-folded)",
                from: .registered, at: 12_000
            ) { _ in [candidate(3, "ALICE")] },
            rule(
                "candidate-duplicate-of-withdrawn", "candidate",
                "\"bob\" after \"Bob\" withdrew (withdrawn names stay taken)",
                from: .registered, setup: { try $0.decide(11_000, [.withdrawCandidate(place: 1, candidate: 2)]) },
                at: 12_000
            ) { _ in [candidate(3, "bob")] },
            rule(
                "candidate-over-limit", "candidate", "a fourth candidate in a place limited to three",
                from: .registered,
                setup: { try $0.decide(11_000, [.registerCandidate(place: 1, name: "Carol", pledge: "")]) },
                at: 12_000
            ) { _ in [candidate(4, "Dave")] },
            rule(
                "candidate-over-limit-withdrawn-count", "candidate",
                "a fourth candidate after one of three withdrew (the limit counts withdrawn candidates)",
                from: .registered,
                setup: {
                    try $0.decide(11_000, [.registerCandidate(place: 1, name: "Carol", pledge: "")])
                    try $0.decide(11_500, [.withdrawCandidate(place: 1, candidate: 3)])
                }, at: 12_000
            ) { _ in [candidate(4, "Dave")] },
            rule(
                "candidate-id-not-next", "candidate",
                "the third candidate recorded with id 5 (candidates are numbered 1, 2, … per place)",
                from: .registered, at: 12_000
            ) { _ in [candidate(5, "Carol")] },

            // Candidate names under the comparison: each registers two names in one block, the second at event 1.
            nameCase("name-sharp-s", "Straße", "STRASSE", "\"STRASSE\" after \"Straße\" (full case folding: ß is ss)"),
            nameCase(
                "name-nfc-nfd", "José", "Jose\u{301}",
                "\"José\" in NFD after the same name in NFC (canonically equivalent)"),
            nameCase(
                "name-ligature", "ﬁnn", "Finn",
                "\"Finn\" after \"ﬁnn\" with U+FB01 LATIN SMALL LIGATURE FI (folds to fi)"),
            nameCase(
                "name-final-sigma", "Σίσυφος", "ΣΊΣΥΦΟΣ", "\"ΣΊΣΥΦΟΣ\" after \"Σίσυφος\" (final sigma folds to σ)"),
            nameCase(
                "name-kelvin-sign", "\u{212A}elvin", "kelvin",
                "\"kelvin\" after \"Kelvin\" spelt with U+212A KELVIN SIGN"),
            nameCase(
                "name-fullwidth", "ＢＯＢ", "Bob",
                "\"Bob\" after fullwidth \"ＢＯＢ\" (equal only under compatibility folding)"),
            nameCase("name-zero-width-space", "Bob", "Bob\u{200B}", "\"Bob\" + U+200B ZERO WIDTH SPACE after \"Bob\""),
            nameCase(
                "name-dotted-capital-i", "İlker", "ilker", "\"ilker\" after \"İlker\" (İ folds to i + U+0307, not to i)"
            ),
            rule(
                "name-200-nfd-characters", "name", "a name of 200 \"é\" in NFD: 200 characters, 400 scalars, 600 bytes",
                from: .created, at: 10_000
            ) { _ in [candidate(1, String(repeating: "e\u{301}", count: 200))] },

            // Withdrawals.
            rule(
                "withdraw-at-voting-start", "withdrawal", "a withdrawal at 30 s, when voting starts", from: .registered,
                at: 30_000
            ) { _ in [withdraw(2)] },
            rule(
                "withdraw-twice", "withdrawal", "candidate 2 withdrawn a second time", from: .registered,
                setup: { try $0.decide(21_000, [.withdrawCandidate(place: 1, candidate: 2)]) }, at: 22_000
            ) { _ in [withdraw(2)] },
            rule(
                "withdraw-unknown-candidate", "withdrawal", "candidate 3 withdrawn, who does not exist",
                from: .registered,
                at: 21_000
            ) { _ in [withdraw(3)] },
            rule(
                "withdraw-unknown-place", "withdrawal", "a withdrawal in place 2, which does not exist",
                from: .registered,
                at: 21_000
            ) { _ in [withdraw(1, place: 2)] },

            // Authorisations.
            rule(
                "authorize-at-voting-end", "authorisation", "a voter authorised at 40 s, when voting ends",
                from: .authorized,
                at: 40_000
            ) { _ in [authorize(4)] },
            rule(
                "voter-authorised-twice", "authorisation", "voter 1's tag authorised again with a new token",
                from: .authorized,
                at: 16_000
            ) { _ in [authorize(1, token: 4)] },
            rule(
                "token-issued-twice", "authorisation", "voter 1's token issued again to voter 4 in the same place",
                from: .authorized, at: 16_000
            ) { _ in [authorize(4, token: 1)] },
            rule(
                "authorize-unknown-place", "authorisation", "a voter authorised in place 2, which does not exist",
                from: .authorized, at: 16_000
            ) { _ in [authorize(4, place: 2)] },

            // Votes.
            rule(
                "vote-before-voting-opens", "vote", "a vote at 29.999 s, before voting opens at 30 s",
                from: .authorized,
                at: 29_999
            ) { _ in [vote(1, for: 1)] },
            rule("vote-at-voting-end", "vote", "a vote at 40 s, when voting ends", from: .authorized, at: 40_000) { _ in
                [vote(1, for: 1)]
            },
            rule(
                "vote-unknown-token", "vote", "a vote with a token that was never authorised", from: .authorized,
                at: 30_000
            ) { _ in [vote(9, for: 1)] },
            rule(
                "vote-with-token-of-other-place", "vote",
                "a vote in place 1 with a token authorised only in place 2 (tokens are per place)",
                from: .authorized,
                setup: {
                    try $0.decide(
                        16_000,
                        [
                            .createPlace(
                                name: "Audit committee", description: "", registration: window(17_000, 20_000),
                                voting: window(30_000, 40_000), maxCandidates: nil)
                        ])
                    try $0.decide(17_000, [.authorizeVoter(place: 2, voterTag: tag(4), tokenHash: token(4))])
                }, at: 30_000
            ) { _ in [vote(4, for: 1)] },
            rule("double-vote", "vote", "voter 1 votes again in a later block", from: .voted, at: 31_000) { _ in
                [vote(1, for: 2)]
            },
            rule(
                "double-vote-in-one-block", "vote", "voter 2 votes twice in one block (the second is event 1)",
                from: .authorized, at: 30_000
            ) { _ in [vote(2, for: 1), vote(2, for: 2)] },
            rule(
                "vote-for-withdrawn-candidate", "vote", "a vote for candidate 2, who withdrew", from: .authorized,
                setup: { try $0.decide(21_000, [.withdrawCandidate(place: 1, candidate: 2)]) }, at: 30_000
            ) { _ in
                [vote(1, for: 2)]
            },
            rule(
                "vote-for-unknown-candidate", "vote", "a vote for candidate 3, who does not exist", from: .authorized,
                at: 30_000
            ) { _ in [vote(1, for: 3)] },
            rule("vote-unknown-place", "vote", "a vote in place 2, which does not exist", from: .authorized, at: 30_000)
            { _ in
                [vote(1, for: 1, place: 2)]
            },

            // Certified results.
            rule(
                "results-before-voting-ends", "results", "results certified at 39.999 s, before voting ends at 40 s",
                from: .voted, at: 39_999
            ) { [results($0)] },
            rule("results-twice", "results", "place 1's results certified a second time", from: .certified, at: 41_000)
            {
                [results($0)]
            },
            rule(
                "results-wrong-votes", "results", "results giving Bob the vote Alice received", from: .voted, at: 40_000
            ) {
                [results($0, votes: [(1, 0), (2, 1)])]
            },
            rule(
                "results-wrong-turnout", "results", "results saying 2 voters were authorised (there are 3)",
                from: .voted,
                at: 40_000
            ) { [results($0, authorized: 2)] },
            rule(
                "results-wrong-tree-size", "results", "results claiming to cover one event fewer than precede them",
                from: .voted, at: 40_000
            ) { [results($0 - 1)] },
            rule(
                "results-missing-candidate", "results",
                "results listing candidate 1 only (every candidate must be listed)",
                from: .voted, at: 40_000
            ) { [results($0, votes: [(1, 1)])] },
            rule(
                "results-unknown-place", "results", "results for place 2, which does not exist", from: .voted,
                at: 40_000
            ) {
                [results($0, place: 2)]
            },

            // Event encodings.
            rule(
                "unknown-event-type", "encoding", "an event of type 0x0113, which §11 does not define",
                from: .authorized,
                at: 30_000
            ) { _ in [LedgerEvent(type: 0x0113, payload: vote(1, for: 1).payload)] },
            rule(
                "secret-commitment-misplaced", "encoding",
                "a voter secret commitment after other election events (only leaf 1 may hold one, §11.16)",
                from: .authorized,
                at: 30_000
            ) { _ in [LedgerEvent(type: 0x0107, payload: [UInt8](repeating: 0x5a, count: 32))] },
            rule(
                "application-event-type-0x0100", "encoding",
                "an event of type 0x0100 (valid for the ledger, not an election event)",
                from: .created, at: 2_000
            ) { _ in [LedgerEvent(type: 0x0100, payload: Array("note".utf8))] },
            rule(
                "trailing-payload-bytes", "encoding", "a vote-cast payload with one extra zero byte", from: .authorized,
                at: 30_000
            ) { _ in [LedgerEvent(type: 0x0105, payload: vote(1, for: 1).payload + [0])] },
            rule(
                "truncated-payload", "encoding", "a vote-cast payload missing its last byte", from: .authorized,
                at: 30_000
            ) { _ in [LedgerEvent(type: 0x0105, payload: Array(vote(1, for: 1).payload.dropLast()))] },
            rule(
                "name-invalid-utf8", "encoding", "a candidate name whose bytes C3 28 are not UTF-8", from: .created,
                at: 10_000
            ) { _ in
                [LedgerEvent(type: 0x0102, payload: [0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 2, 0xC3, 0x28, 0, 0, 0, 0])]
            },
            rule(
                "results-count-too-large", "encoding", "results whose candidate count says 1000 with 2 entries present",
                from: .voted, at: 40_000
            ) { index in
                var event = results(index)
                set(&event.payload, 28, UInt32(1000))
                return [event]
            },
        ]
    }

    /// Two names registered in place 1 in one block at 10 s: `first` at event 0, `second` at event 1.
    static func nameCase(_ name: String, _ first: String, _ second: String, _ breaks: String) -> Case {
        rule(name, "name", breaks, from: .created, at: 10_000) { _ in [candidate(1, first), candidate(2, second)] }
    }

    // MARK: - Format damage (§5-§7) on the base election

    /// The base election, certified: blocks 0 (genesis) to 5 in one segment. Damage goes into block 3.
    static func damage(
        _ name: String, group: String = "format", _ breaks: String, _ edit: @escaping (_ path: String) throws -> Void
    ) -> Case {
        Case(name: name, group: group, breaks: breaks) { path in
            try write(try base(.certified), to: path)
            try edit(path)
            return nil
        }
    }

    /// Applies `edit` to segment `number`'s bytes, given its frames.
    static func editSegment(
        _ path: String, _ number: Int = 0, _ edit: (inout [UInt8], [Range<Int>]) throws -> Void
    )
        throws
    {
        let file = path + "/" + LedgerDirectory.segmentName(number)
        var bytes = try read(file)
        try edit(&bytes, frames(bytes))
        try store(bytes, at: file)
    }

    static var formatCases: [Case] {
        [
            damage(
                "frame-flipped-byte", "one bit of block 3's first event flipped (its frame checksum no longer matches)"
            ) {
                try editSegment($0) { bytes, frames in flip(&bytes, frames[3].lowerBound + 12 + 200) }
            },
            damage("frame-bad-checksum", "block 3's frame CRC-32C field off by one bit") {
                try editSegment($0) { bytes, frames in flip(&bytes, frames[3].lowerBound + 11) }
            },
            damage("frame-marker-missing", "block 3's frame marker \"VLBK\" changed to \"VLBX\"") {
                try editSegment($0) { bytes, frames in bytes[frames[3].lowerBound + 3] = UInt8(ascii: "X") }
            },
            damage("frame-length-out-of-range", "block 3's frame length set to 181 (blocks are at least 182 bytes)") {
                try editSegment($0) { bytes, frames in set(&bytes, frames[3].lowerBound + 4, UInt32(181)) }
            },
            damage("frame-runs-past-end", "block 3's frame length set to 64 MiB, past the end of the file") {
                try editSegment($0) { bytes, frames in set(&bytes, frames[3].lowerBound + 4, UInt32(64 << 20)) }
            },
            damage("garbage-between-frames", "7 bytes \"garbage\" inserted before block 3's frame") {
                try editSegment($0) { bytes, frames in
                    bytes.insert(contentsOf: Array("garbage".utf8), at: frames[3].lowerBound)
                }
            },
            damage("block-cut-out", "block 3's frame removed") {
                try editSegment($0) { bytes, frames in bytes.removeSubrange(frames[3]) }
            },
            damage("blocks-swapped", "blocks 3 and 4 stored in the wrong order") {
                try editSegment($0) { bytes, frames in
                    bytes.replaceSubrange(
                        frames[3].lowerBound..<frames[4].upperBound, with: bytes[frames[4]] + bytes[frames[3]])
                }
            },
            damage("signature-flipped", "one bit of block 3's signature flipped (frame checksum fixed)") {
                try editBlock($0, frame: 3, signer: nil) { flip(&$0, 150) }
            },
            damage(
                "signed-by-another-key", "block 3 signed by another key (RFC 8032 TEST 2), not the genesis authority"
            ) {
                try editBlock($0, frame: 3, signer: strangerKey) { _ in }
            },
            damage("previous-hash-wrong", "block 3's previousHash altered, block re-signed") {
                try editBlock($0, frame: 3) { flip(&$0, 60) }
            },
            damage("tree-root-wrong", "block 3's treeRoot altered, block re-signed") {
                try editBlock($0, frame: 3) { flip(&$0, 100) }
            },
            damage("height-wrong", "block 3's header says height 7, block re-signed") {
                try editBlock($0, frame: 3) { set(&$0, 8, UInt64(7)) }
            },
            damage("another-ledger-id", "block 3's ledgerID altered, block re-signed") {
                try editBlock($0, frame: 3) { flip(&$0, 40) }
            },
            damage("timestamp-before-previous", "block 3's time set to 9.999 s, before block 2's 10 s, block re-signed")
            {
                try editBlock($0, frame: 3) { set(&$0, 16, UInt64(epoch + 9_999)) }
            },
            damage("tree-size-wrong", "block 3's treeSize one too large, block re-signed") {
                try editBlock($0, frame: 3) { block in
                    set(&block, 24, block[24..<32].reduce(UInt64(0)) { $0 << 8 | UInt64($1) } + 1)
                }
            },
            damage(
                "reserved-event-type",
                "block 3's first event has type 0x00FF (reserved for the ledger); tree root fixed, re-signed"
            ) { path in
                try editBlock(path, frame: 3) { block in
                    set(&block, 180, UInt16(0x00FF))
                    block.replaceSubrange(80..<112, with: try treeRoot(path, through: 3, block: block).bytes)
                }
            },
            damage("header-version-2", "block 3's header version set to 2, block re-signed") {
                try editBlock($0, frame: 3) { set(&$0, 0, UInt16(2)) }
            },
            damage("header-reserved-nonzero", "block 3's reserved header field set to 1, block re-signed") {
                try editBlock($0, frame: 3) { set(&$0, 2, UInt16(1)) }
            },
            damage("timestamp-top-bit", "block 3's time with its top bit set (a negative i64), block re-signed") {
                try editBlock($0, frame: 3) { set(&$0, 16, UInt64(1) << 63 | UInt64(epoch + 15_000)) }
            },
            damage("block-no-events", "block 3's eventCount set to 0, block re-signed") {
                try editBlock($0, frame: 3) { set(&$0, 4, UInt32(0)) }
            },
            damage("bytes-after-last-event", "block 3's eventCount one too small, block re-signed") {
                try editBlock($0, frame: 3) { block in set(&block, 4, UInt32(block[7]) - 1) }
            },
            damage("event-length-out-of-range", "block 3's first event length field set to 1 (at least 2)") {
                try editBlock($0, frame: 3, signer: nil) { set(&$0, 176, UInt32(1)) }
            },
            damage(
                "genesis-flipped-byte",
                "one bit of the genesis name flipped (block 0's frame checksum no longer matches)"
            ) {
                try editSegment($0) { bytes, frames in flip(&bytes, frames[0].lowerBound + 12 + 245) }
            },
            damage("genesis-signed-by-another-key", "the genesis block signed by another key than the one it names") {
                try editBlock($0, frame: 0, signer: strangerKey) { _ in }
            },
            damage(
                "genesis-key-replaced",
                "the genesis names another key and is signed by it; block 1 links to it but is signed by the first key"
            ) { path in
                try editBlock(path, frame: 0, signer: strangerKey) { block in
                    block.replaceSubrange(208..<240, with: strangerKey.publicKey.rawRepresentation)
                    block.replaceSubrange(80..<112, with: try treeRoot(path, through: 0, block: block).bytes)
                }
                let genesis = try read(path + "/segment-00000000.vlseg")[44..<156]
                try editBlock(path, frame: 1) { block in
                    block.replaceSubrange(48..<80, with: SHA256.hash(Array(genesis)).bytes)
                    block.replaceSubrange(80..<112, with: try treeRoot(path, through: 1, block: block).bytes)
                }
            },
            damage(
                "no-segment-files", group: "layout",
                "the only segment is misnamed segment-0.vlseg (not the 8-digit pattern)"
            ) {
                try FileManager.default.moveItem(
                    atPath: $0 + "/segment-00000000.vlseg", toPath: $0 + "/segment-0.vlseg")
            },
            damage("segment-0-bad-magic", group: "layout", "segment 0 starts \"WOTELEDG\", not \"VOTELEDG\"") {
                try editSegment($0) { bytes, _ in bytes[0] = UInt8(ascii: "W") }
            },
        ]
    }

    // MARK: - Layout: several segments, empty segments, torn tails (§5-§6)

    /// The base election written with a segment limit of 500 bytes, so the writer rotates before every
    /// block: blocks 0 to 5 in segments 0 to 5.
    static func multiSegment(
        _ name: String, _ group: String, _ breaks: String, _ edit: @escaping (_ path: String) throws -> Void = { _ in }
    ) -> Case {
        Case(name: name, group: group, breaks: breaks) { path in
            try write(try base(.certified), to: path, segmentLimit: 500)
            try edit(path)
            return nil
        }
    }

    /// Stores the frames of the single-segment ledger at `path` as segments holding `groups` of frame
    /// indexes (an empty group is an empty segment, whose header names the next block).
    static func resegment(_ path: String, _ groups: [Range<Int>]) throws {
        let file = path + "/" + LedgerDirectory.segmentName(0)
        let bytes = try read(file)
        let frames = frames(bytes)
        for (number, group) in groups.enumerated() {
            let header =
                Array("VOTELEDG".utf8) + [0, 1, 0, 0] + bigEndian(UInt32(number)) + bigEndian(UInt64(group.lowerBound))
                + [UInt8](repeating: 0, count: 8)
            let body = group.flatMap { bytes[frames[$0]] }
            try store(header + body, at: path + "/" + LedgerDirectory.segmentName(number))
        }
    }

    /// Cuts segment `segment` of the ledger at `path` to `size(frames, bytes)` bytes.
    static func cut(_ path: String, segment: Int = 0, to size: ([Range<Int>], [UInt8]) -> Int) throws {
        try editSegment(path, segment) { bytes, frames in bytes = Array(bytes.prefix(size(frames, bytes))) }
    }

    static var layoutCases: [Case] {
        [
            multiSegment(
                "multi-segment", "valid", "nothing: six segments of one block each, written by the writer's rotation"),
            multiSegment("segment-missing", "layout", "segment-00000002.vlseg of six is missing") {
                try FileManager.default.removeItem(atPath: $0 + "/segment-00000002.vlseg")
            },
            multiSegment("segment-header-wrong-number", "layout", "segment 2's header says it is segment 3") {
                try editSegment($0, 2) { bytes, _ in set(&bytes, 12, UInt32(3)) }
            },
            multiSegment(
                "segment-header-wrong-first-height", "layout", "segment 2's header says it starts at block 3, not 2"
            ) {
                try editSegment($0, 2) { bytes, _ in set(&bytes, 16, UInt64(3)) }
            },
            multiSegment("segment-header-reserved-nonzero", "layout", "segment 2's last reserved header byte set to 1")
            {
                try editSegment($0, 2) { bytes, _ in bytes[31] = 1 }
            },
            multiSegment(
                "torn-frame-in-non-last-segment", "layout",
                "segment 2's frame cut by 10 bytes (only the last segment may end torn)"
            ) {
                try cut($0, segment: 2) { _, bytes in bytes.count - 10 }
            },
            damage(
                "empty-middle-segment", group: "valid",
                "nothing: segments 0 (blocks 0-2), 1 (empty, header names block 3), 2 (blocks 3-5)"
            ) {
                try resegment($0, [0..<3, 3..<3, 3..<6])
            },
            damage("empty-last-segment", group: "valid", "nothing: segment 1 holds only its header, naming block 6") {
                try resegment($0, [0..<6, 6..<6])
            },
            damage(
                "torn-segment-creation", group: "torn-tail",
                "a last segment of 10 bytes, less than its header: a torn segment creation"
            ) { path in
                try resegment(path, [0..<6, 6..<6])
                try cut(path, segment: 1) { _, _ in 10 }
            },
            damage("torn-tail-1-byte", group: "torn-tail", "the last frame cut after its first byte") {
                try cut($0) { frames, _ in frames[5].lowerBound + 1 }
            },
            damage("torn-tail-in-frame-header", group: "torn-tail", "the last frame cut after 8 of its 12 header bytes")
            {
                try cut($0) { frames, _ in frames[5].lowerBound + 8 }
            },
            damage("torn-tail-in-block", group: "torn-tail", "the last frame cut in the middle of its block") {
                try cut($0) { frames, _ in frames[5].lowerBound + frames[5].count / 2 }
            },
            damage("torn-tail-last-byte-missing", group: "torn-tail", "the last frame missing its last byte") {
                try cut($0) { frames, _ in frames[5].upperBound - 1 }
            },
            damage(
                "torn-tail-flipped-last-block", group: "torn-tail",
                "one bit of the last block flipped: indistinguishable from a torn write, so a torn tail"
            ) {
                try editSegment($0) { bytes, frames in flip(&bytes, frames[5].lowerBound + 12 + 200) }
            },
            damage("torn-tail-zeros", group: "torn-tail", "64 zero bytes after the last frame") {
                try editSegment($0) { bytes, _ in bytes += [UInt8](repeating: 0, count: 64) }
            },
            multiSegment("torn-tail-multi-segment", "torn-tail", "the frame of the last of six segments cut by 5 bytes")
            {
                try cut($0, segment: 5) { _, bytes in bytes.count - 5 }
            },
        ]
    }

    /// Every case under `cases/`, in index order.
    static var cases: [Case] {
        ruleCases + formatCases + layoutCases + reissueCases + specCases + embargoCases + anonymousCases
            + questionCases + anonymousQuestionCases + amendmentCases + withdrawalCases + cancellationCases + batchCases
    }

    /// What FORMAT.md states for an implementer in another language: which of two decoding failures is
    /// reported (§11.2), the Unicode version of the name key (§11.4), and the placement and time of the
    /// voter secret commitment (rules 11.16.1 and 11.16.2).
    static var specCases: [Case] {
        let commitment = LedgerEvent(type: 0x0107, payload: [UInt8](repeating: 0x5a, count: 32))
        var twoFailures = ByteWriter()
        twoFailures.write(UInt32(1))
        twoFailures.write(UInt32(1))
        twoFailures.write(UInt32(2))
        twoFailures.write(bytes: [0xff, 0xfe])  // a name that is not UTF-8
        twoFailures.write(UInt32(10))
        twoFailures.write(bytes: Array("ab".utf8))  // a pledge 8 bytes short
        return [
            rule(
                "decoding-failure-after-rule-failure", "encoding",
                "event 0 votes with a token never authorised, event 1 has a trailing byte: decoding is reported",
                from: .authorized, at: 30_000
            ) { _ in
                [vote(9, for: 1), LedgerEvent(type: 0x0105, payload: vote(1, for: 1).payload + [0])]
            },
            rule(
                "two-decoding-failures-in-one-event", "encoding",
                "a candidate whose name is not UTF-8 and whose pledge is truncated: the name is reported",
                from: .created, at: 10_000
            ) { _ in [LedgerEvent(type: 0x0102, payload: twoFailures.bytes)] },
            nameCase(
                "name-unassigned-in-14", "\u{1C89}je", "\u{1C8A}je",
                "U+1C8A + \"je\" after U+1C89 + \"je\" (a case pair from Unicode 16.0, unassigned in 14.0.0)"),
            rule(
                "secret-commitment-not-alone", "encoding",
                "block 1 holds the voter secret commitment and a place (the commitment must be alone in block 1)",
                from: .empty, at: 0
            ) { _ in [commitment, place()] },
            rule(
                "secret-commitment-late", "encoding",
                "the voter secret commitment alone in block 1, 1 ms after the genesis time (it must be at that time)",
                from: .empty, at: 1
            ) { _ in [commitment] },
        ]
    }

    /// The place-created flags (§11.1): a place with the results embargo (bit 0) is accepted, then a second place
    /// whose flags are recorded as 0 (they are left out when 0) or set an undefined bit does not decode.
    static var embargoCases: [Case] {
        func embargoed(_ script: inout Script) throws {
            try script.decide(
                1_000,
                [
                    .createPlace(
                        name: "Board", description: "results after close", registration: window(10_000, 20_000),
                        voting: window(30_000, 40_000), maxCandidates: nil, resultsAfterClose: true)
                ])
        }
        func second(flags: [UInt8]) -> LedgerEvent {
            let unflagged = place(id: 2, name: "Council")
            return LedgerEvent(type: unflagged.type, payload: unflagged.payload + flags)
        }
        return [
            rule(
                "place-flags-zero", "encoding",
                "after a place with the results embargo (flag bit 0), a place whose flags are recorded as 0",
                from: .empty, setup: embargoed, at: 1_000
            ) { _ in [second(flags: [0, 0, 0, 0])] },
            rule(
                "place-flags-unknown", "encoding",
                "after a place with the results embargo (flag bit 0), a place with flag bit 5, which §11.1 does not define",
                from: .empty, setup: embargoed, at: 1_000
            ) { _ in [second(flags: [0, 0, 0, 32])] },
        ]
    }
}
