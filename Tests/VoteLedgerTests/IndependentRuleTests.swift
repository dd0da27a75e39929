import Election
import FileStore
import Foundation
import Ledger
import LedgerCrypto
import TestSupport
import Testing
import VoteLedger

/// Every numbered rule of FORMAT.md §11, broken once by a ledger written around the contract (raw events
/// appended with `FileBlockStore.append`): `vote verify` and the independent Python verifier
/// (`Tools/verify_ledger.py`, written from the text) both exit 3 with the same block, event and reason.
/// Ledgers that bend no rule, with hard-case names, pass both.
@Suite struct IndependentRuleTests {
    static let t = ServiceTests.t0
    /// The standard windows: registration [t+1000, t+2000), voting [t+3000, t+4000).
    static let registration = TimeWindow(start: t + 1000, end: t + 2000)
    static let voting = TimeWindow(start: t + 3000, end: t + 4000)

    /// A block: its timestamp and its events.
    typealias Block = (time: Int64, events: [LedgerEvent])

    // MARK: - Building blocks

    static func place(
        _ id: UInt32 = 1, name: String = "Board", description: String = "", registration: TimeWindow = registration,
        voting: TimeWindow = voting, max: UInt32? = nil
    ) -> LedgerEvent {
        ElectionEvent.placeCreated(
            Place(
                id: id, name: name, description: description, registration: registration, voting: voting,
                maxCandidates: max)
        ).ledgerEvent
    }

    static func candidate(_ id: UInt32, _ name: String, place: UInt32 = 1, pledge: String = "") -> LedgerEvent {
        ElectionEvent.candidateRegistered(place: place, candidate: id, name: name, pledge: pledge).ledgerEvent
    }

    static func withdraw(_ id: UInt32, place: UInt32 = 1) -> LedgerEvent {
        ElectionEvent.candidateWithdrawn(place: place, candidate: id).ledgerEvent
    }

    static func digest(_ text: String) -> Digest { SHA256.hash(Array(text.utf8)) }

    static func authorize(_ voter: String, token: String, place: UInt32 = 1) -> LedgerEvent {
        ElectionEvent.voterAuthorized(place: place, voterTag: digest("tag " + voter), tokenHash: digest(token))
            .ledgerEvent
    }

    static func vote(_ candidate: UInt32, token: String, place: UInt32 = 1) -> LedgerEvent {
        ElectionEvent.voteCast(place: place, candidate: candidate, tokenHash: digest(token)).ledgerEvent
    }

    static func results(
        treeSize: UInt64, authorized: UInt64, voted: UInt64, votes: [(candidate: UInt32, votes: UInt64)],
        place: UInt32 = 1
    ) -> LedgerEvent {
        ElectionEvent.resultsCertified(
            CertifiedResults(place: place, treeSize: treeSize, authorized: authorized, voted: voted, votes: votes)
        ).ledgerEvent
    }

    /// A raw event of `type` whose payload is `parts` concatenated.
    static func raw(_ type: UInt16, _ parts: [[UInt8]]) -> LedgerEvent {
        LedgerEvent(type: type, payload: parts.flatMap { $0 })
    }

    static func be<T: FixedWidthInteger>(_ value: T) -> [UInt8] { withUnsafeBytes(of: value.bigEndian) { Array($0) } }

    /// Place 1 with two candidates ("Straße", "Bob") and two authorised voters ("a", "b"): blocks 1-3, leaves 1-5.
    static let setUp: [Block] = [
        (t, [place()]),
        (t + 1500, [candidate(1, "Straße"), candidate(2, "Bob")]),
        (t + 1600, [authorize("a", token: "A"), authorize("b", token: "B")]),
    ]

    // MARK: - Running both verifiers

    /// A genesis-only ledger (no voter secret commitment, so block 1 is the first block a case writes),
    /// created once and copied for every case.
    static let genesis: String = {
        let path = NSTemporaryDirectory() + "rules-genesis-\(UUID().uuidString)"
        let ledger = try! FileBlockStore.create(
            at: path, name: "rule vectors", authority: Ed25519PrivateKey(), ledgerID: LedgerID.random(),
            timestamp: t - 1, log: { _ in })
        ledger.close()
        return path
    }()

    /// A copy of the genesis ledger with `blocks` appended raw, bypassing the contract.
    static func ledger(_ blocks: [Block]) throws -> String {
        let copy = try IndependentVerifierTests.temporaryCopy(of: genesis)
        let store = try FileBlockStore.open(at: copy, log: { _ in })
        defer { store.close() }
        for block in blocks { _ = try store.append(block.events, timestamp: block.time) }
        return copy
    }

    /// Runs `vote verify` and the Python verifier on `blocks`; expects both to fail with `expected` (the
    /// §11.14 message after "integrity failure: ") at `height`, or both to pass when `expected` is nil.
    static func expectBoth(
        _ label: String, _ blocks: [Block], _ expected: String?, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let path = try ledger(blocks)
        defer { removeLedger(path) }
        let swift = try IndependentVerifierTests.vote(["verify", "--ledger", path])
        let python = try IndependentVerifierTests.python([path])
        let context: Comment = "\(label): swift \(swift.err) python \(python.text)"
        guard let expected else {
            #expect(swift.status == 0 && python.status == 0, context, sourceLocation: sourceLocation)
            return
        }
        #expect(swift.status == 3 && python.status == 3, context, sourceLocation: sourceLocation)
        #expect(swift.err == "vote: integrity failure: \(expected)\n", context, sourceLocation: sourceLocation)
        #expect(python.json["error"] as? String == expected, context, sourceLocation: sourceLocation)
        #expect(python.json["height"] as? Int == blocks.count, context, sourceLocation: sourceLocation)
    }

    /// The failure of event `event` of the last of `blocks` breaking a rule (§11.14).
    static func broken(_ blocks: [Block], event: Int = 0, _ reason: String) -> String {
        "block \(blocks.count), event \(event) breaks the rules: \(reason)"
    }

    // MARK: - Tests

    /// A whole election that bends no rule passes both, with hard-case names that do not collide, the same
    /// token and name in two places, a withdrawal the instant before voting, registration from time 0, and
    /// results certified at the very end of voting.
    @Test func validElectionPassesBoth() throws {
        let blocks: [Block] = [
            (
                Self.t,
                [Self.place(), Self.place(2, name: "Zero", registration: TimeWindow(start: 0, end: Self.t + 2000))]
            ),
            (
                Self.t + 1500,
                [
                    Self.candidate(1, "Straße"), Self.candidate(2, "ＢＯＢ"), Self.candidate(3, "Bob"),
                    Self.candidate(4, "ı"),
                    Self.candidate(5, "i"), Self.candidate(6, "İ"), Self.candidate(1, "Bob", place: 2),
                ]
            ),
            (Self.t + 1600, [Self.authorize("a", token: "A"), Self.authorize("a", token: "A", place: 2)]),
            (Self.t + 2999, [Self.withdraw(3)]),
            (Self.t + 3000, [Self.vote(1, token: "A"), Self.vote(1, token: "A", place: 2)]),
            (
                Self.t + 4000,
                [
                    Self.results(
                        treeSize: 15, authorized: 1, voted: 1, votes: [(1, 1), (2, 0), (3, 0), (4, 0), (5, 0), (6, 0)])
                ]
            ),
        ]
        try Self.expectBoth("valid", blocks, nil)
    }

    /// §11.7: each rule of a place created.
    @Test func placeRules() throws {
        let cases: [(String, LedgerEvent, String)] = [
            ("11.7.1 empty", Self.place(name: " \t"), "place name must not be empty"),
            (
                "11.7.1 long", Self.place(name: String(repeating: "e\u{301}", count: 100) + "x"),
                "place name must be at most 200 code points"
            ),
            (
                "11.7.1 tab", Self.place(name: "Bo\tard"),
                "place name must not contain control or text-direction characters"
            ),
            (
                "11.7.2", Self.place(description: "x\u{202E}y"),
                "description must not contain control or text-direction characters"
            ),
            (
                "11.7.2 long", Self.place(description: String(repeating: "d", count: 2001)),
                "description must be at most 2000 code points"
            ),
            (
                "11.7.3", Self.place(registration: TimeWindow(start: -5, end: Self.t + 2000)),
                "invalid windows: times must not be before 1970"
            ),
            (
                "11.7.4", Self.place(registration: TimeWindow(start: Self.t + 1000, end: Self.t + 1000)),
                "invalid windows: registration must start before it ends"
            ),
            (
                "11.7.5", Self.place(registration: TimeWindow(start: Self.t + 1000, end: Self.t + 3001)),
                "invalid windows: registration must end no later than voting starts"
            ),
            (
                "11.7.6", Self.place(voting: TimeWindow(start: Self.t + 3000, end: Self.t + 3000)),
                "invalid windows: voting must start before it ends"
            ),
            (
                "11.7.7",
                Self.place(
                    registration: TimeWindow(start: 1, end: 2), voting: TimeWindow(start: Self.t, end: Self.t + 1)),
                "the voting window must start in the future"
            ),
            ("11.6.3 id", Self.place(2), "recorded event differs from what the contract decides"),
            ("11.6.3 untrimmed", Self.place(name: "Board "), "recorded event differs from what the contract decides"),
        ]
        for (label, event, reason) in cases {
            let blocks: [Block] = [(Self.t, [event])]
            try Self.expectBoth(label, blocks, Self.broken(blocks, reason))
        }
    }

    /// §11.8-§11.12: each rule of the other events, broken by a last block after the standard set-up.
    @Test func eventRules() throws {
        let t = Self.t
        let cases: [(String, Block, String)] = [
            ("11.8.1", (t + 1700, [Self.candidate(1, "Carol", place: 2)]), "place 2 does not exist"),
            (
                "11.8.2 waiting", (t + 2000, [Self.candidate(3, "Carol")]),
                "candidate registration for place 1 is not open (the place is waiting)"
            ),
            (
                "11.8.3", (t + 1700, [Self.candidate(3, "Carol\u{200E}")]),
                "candidate name must not contain control or text-direction characters"
            ),
            (
                "11.8.4", (t + 1700, [Self.candidate(3, "Carol", pledge: String(repeating: "p", count: 2001))]),
                "pledge must be at most 2000 code points"
            ),
            (
                "11.8.5 ß", (t + 1700, [Self.candidate(3, "STRASSE")]),
                "a candidate named \"STRASSE\" is already registered"
            ),
            ("11.8.5 case", (t + 1700, [Self.candidate(3, "bob")]), "a candidate named \"bob\" is already registered"),
            (
                "11.6.3 candidate id", (t + 1700, [Self.candidate(4, "Carol")]),
                "recorded event differs from what the contract decides"
            ),
            (
                "11.6.3 untrimmed candidate", (t + 1700, [Self.candidate(3, " Carol")]),
                "recorded event differs from what the contract decides"
            ),
            ("11.9.1", (t + 1700, [Self.withdraw(1, place: 3)]), "place 3 does not exist"),
            ("11.9.2", (t + 1700, [Self.withdraw(3)]), "candidate 3 does not exist in place 1"),
            (
                "11.9.3", (t + 3000, [Self.withdraw(2)]),
                "candidates of place 1 can no longer withdraw: voting has opened"
            ),
            ("11.9.4", (t + 1700, [Self.withdraw(2), Self.withdraw(2)]), "candidate 2 has already withdrawn"),
            ("11.10.1", (t + 1700, [Self.authorize("c", token: "C", place: 0)]), "place 0 does not exist"),
            (
                "11.10.2", (t + 4000, [Self.authorize("c", token: "C")]),
                "voting in place 1 has closed; no more voters can be authorised"
            ),
            ("11.10.3", (t + 1700, [Self.authorize("a", token: "C")]), "voter already authorised"),
            ("11.10.4", (t + 1700, [Self.authorize("c", token: "A")]), "this token is already issued"),
            ("11.11.1", (t + 3500, [Self.vote(1, token: "A", place: 2)]), "place 2 does not exist"),
            (
                "11.11.2 early", (t + 2999, [Self.vote(1, token: "A")]),
                "voting in place 1 is not open (the place is waiting)"
            ),
            (
                "11.11.2 end", (t + 4000, [Self.vote(1, token: "A")]),
                "voting in place 1 is not open (the place is ended)"
            ),
            ("11.11.3", (t + 3500, [Self.vote(1, token: "C")]), "this token is not authorised to vote in place 1"),
            (
                "11.11.4", (t + 3500, [Self.vote(1, token: "A"), Self.vote(2, token: "A")]),
                "this token has already voted"
            ),
            ("11.11.5", (t + 3500, [Self.vote(3, token: "A")]), "candidate 3 does not exist in place 1"),
            (
                "11.12.1", (t + 4000, [Self.results(treeSize: 6, authorized: 0, voted: 0, votes: [], place: 2)]),
                "place 2 does not exist"
            ),
            (
                "11.12.2", (t + 3999, [Self.results(treeSize: 6, authorized: 2, voted: 0, votes: [(1, 0), (2, 0)])]),
                "results of place 1 can be certified only after voting has closed"
            ),
            (
                "11.12.4 tree size",
                (t + 4000, [Self.results(treeSize: 5, authorized: 2, voted: 0, votes: [(1, 0), (2, 0)])]),
                "the certified results of place 1 differ from the votes cast"
            ),
            (
                "11.12.4 tally",
                (t + 4000, [Self.results(treeSize: 6, authorized: 2, voted: 0, votes: [(1, 1), (2, 0)])]),
                "the certified results of place 1 differ from the votes cast"
            ),
            (
                "11.12.4 rows", (t + 4000, [Self.results(treeSize: 6, authorized: 2, voted: 0, votes: [(1, 0)])]),
                "the certified results of place 1 differ from the votes cast"
            ),
        ]
        for (label, last, reason) in cases {
            let blocks = Self.setUp + [last]
            try Self.expectBoth(label, blocks, Self.broken(blocks, event: last.events.count - 1, reason))
        }
    }

    /// The rules that need their own history: a limit reached (withdrawn candidates count), a name taken
    /// by a withdrawn candidate, a vote for a withdrawn candidate, results certified twice.
    @Test func historyRules() throws {
        let t = Self.t
        let limited: [Block] = [
            (t, [Self.place(max: 2)]), (t + 1500, [Self.candidate(1, "Ann"), Self.candidate(2, "Bea")]),
            (t + 1600, [Self.withdraw(2)]), (t + 1700, [Self.candidate(3, "Cid")]),
        ]
        try Self.expectBoth(
            "11.8.6", limited, Self.broken(limited, "the place already has its maximum of 2 candidates"))
        let taken: [Block] = [
            (t, [Self.place()]), (t + 1500, [Self.candidate(1, "\u{FB01}x")]), (t + 1600, [Self.withdraw(1)]),
            (t + 1700, [Self.candidate(2, "FIX")]),
        ]
        try Self.expectBoth(
            "11.8.5 withdrawn", taken, Self.broken(taken, "a candidate named \"FIX\" is already registered"))
        let withdrawn = Self.setUp + [(t + 2500, [Self.withdraw(2)]), (t + 3500, [Self.vote(2, token: "A")])]
        try Self.expectBoth("11.11.6", withdrawn, Self.broken(withdrawn, "candidate 2 has withdrawn"))
        let twice =
            Self.setUp + [
                (t + 4000, [Self.results(treeSize: 6, authorized: 2, voted: 0, votes: [(1, 0), (2, 0)])]),
                (t + 4001, [Self.results(treeSize: 7, authorized: 2, voted: 0, votes: [(1, 0), (2, 0)])]),
            ]
        try Self.expectBoth("11.12.3", twice, Self.broken(twice, "results of place 1 are already certified"))
    }

    /// §11.2: an unknown type, a truncated field, a count too large, invalid UTF-8 and trailing bytes; and a
    /// decoding failure later in a block wins over a rule broken earlier in it (all events decode first).
    @Test func decodingFailures() throws {
        let name = Array("Carol".utf8)
        let cases: [(String, LedgerEvent, String)] = [
            ("unknown type", Self.raw(0x0113, []), "unknown election event type 275"),
            (
                "truncated", Self.raw(0x0103, [Self.be(UInt32(1)), [0, 0]]),
                "candidate withdrawn: truncated (needs 4 bytes, has 2)"
            ),
            (
                "string length", Self.raw(0x0102, [Self.be(UInt32(1)), Self.be(UInt32(3)), Self.be(UInt32(9)), name]),
                "candidate registered: truncated (needs 9 bytes, has 5)"
            ),
            (
                "count",
                Self.raw(
                    0x0106,
                    [
                        Self.be(UInt32(1)), Self.be(UInt64(6)), Self.be(UInt64(2)), Self.be(UInt64(0)),
                        Self.be(UInt32(2)), Self.be(UInt32(1)), Self.be(UInt64(0)),
                    ]),
                "results certified: truncated (needs 24 bytes, has 12)"
            ),
            (
                "UTF-8",
                Self.raw(
                    0x0102,
                    [
                        Self.be(UInt32(1)), Self.be(UInt32(3)), Self.be(UInt32(3)), [0xED, 0xA0, 0x80],
                        Self.be(UInt32(0)),
                    ]),
                "candidate registered: invalid UTF-8"
            ),
            (
                "trailing", Self.raw(0x0103, [Self.be(UInt32(1)), Self.be(UInt32(1)), [0]]),
                "candidate withdrawn: 1 trailing bytes"
            ),
        ]
        for (label, event, reason) in cases {
            let blocks = Self.setUp + [(Self.t + 1700, [Self.withdraw(9), event])]
            try Self.expectBoth(label, blocks, "block \(blocks.count), event 1: \(reason)")
        }
    }

    // MARK: - The name key

    /// `NameKey` (Swift, on the generated tables) equals Python 3.11's
    /// `normalize("NFD", normalize("NFD", x).casefold())` (§11.4) for every code point on its own, and for
    /// strings whose marks need canonical reordering before and after folding.
    @Test func nameKeyMatchesPythonForEveryCodePoint() throws {
        let strings = [
            "a\u{345}\u{301}\u{316}", "\u{1FB4}\u{316}", "A\u{30A}\u{323}\u{345}", "\u{130}\u{301}",
            "\u{1E9E}\u{FB03}\u{1F88}", "\u{D4DB}\u{11A8}", "\u{3A3}\u{342}\u{345}\u{314}",
        ]
        let hex = { (scalars: [Unicode.Scalar]) in scalars.map { String($0.value, radix: 16) }.joined(separator: " ") }
        let script = """
            import sys, unicodedata
            assert unicodedata.unidata_version == "14.0.0"
            key = lambda x: unicodedata.normalize("NFD", unicodedata.normalize("NFD", x).casefold())
            for c in range(0x110000):
                if not 0xD800 <= c <= 0xDFFF and key(chr(c)) != chr(c):
                    print("%x:%s" % (c, " ".join("%x" % ord(k) for k in key(chr(c)))))
            for s in sys.argv[1:]:
                x = "".join(chr(int(h, 16)) for h in s.split())
                print("s:" + " ".join("%x" % ord(k) for k in key(x)))
            """
        let result = try IndependentVerifierTests.run(
            "/usr/bin/env", ["python3", "-c", script] + strings.map { hex(Array($0.unicodeScalars)) })
        #expect(result.status == 0, "\(result.err)")
        var python: [UInt32: String] = [:]
        var keysOfStrings: [String] = []
        for line in result.out.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1).map(String.init)
            if parts[0] == "s" {
                keysOfStrings.append(parts[1])
            } else {
                python[UInt32(parts[0], radix: 16)!] = parts[1]
            }
        }
        #expect(python.count > 2500)
        var swift: [UInt32: String] = [:]
        for value in UInt32(0)...0x10FFFF {
            guard let scalar = Unicode.Scalar(value) else { continue }
            let key = NameKey.of(String(scalar))
            if key != [scalar] { swift[value] = hex(key) }
        }
        let differ = Set(swift.keys).union(python.keys).filter { swift[$0] != python[$0] }.sorted()
        #expect(differ.isEmpty, "keys differ at \(differ.prefix(10).map { "U+" + String($0, radix: 16) })")
        #expect(keysOfStrings == strings.map { hex(NameKey.of($0)) })
    }
}
