import BlindRSA
import Foundation
import Ledger
import LedgerCrypto
import Testing

/// Anonymous places (FORMAT.md §11.1 flag bit 1, §11.18 credential issued, §11.19 anonymous vote cast), each rule
/// broken once by a ledger written around the contract: `vote verify` and `Tools/verify_ledger.py` both refuse it
/// at the same event with the same reason, and both accept an anonymous election that bends no rule. The ballots'
/// signatures are made the way a voter's device gets them (RFC 9474 Prepare, Blind, BlindSign, Finalize).
extension IndependentRuleTests {
    /// Two place keys, made once (an RSA key takes about a second): place 1's, and another place's.
    static let ballotKeys: [BlindRSAPrivateKey] = (0..<2).map { _ in try! BlindRSAPrivateKey() }

    /// A credential and its signature, as a voter's device holds them before casting.
    struct Ballot {
        var credential: [UInt8]
        var signature: [UInt8]
    }

    /// A credential signed by `key` through the blind-signature protocol; nil `key` means place 1's.
    static func ballot(key: BlindRSAPrivateKey? = nil) throws -> Ballot {
        let key = key ?? ballotKeys[0]
        let credential = try key.publicKey.prepare(SecureRandom.bytes(32))
        let blinding = try key.publicKey.blind(credential)
        let signature = try key.publicKey.finalize(key.blindSign(blinding.blindedMessage), blinding: blinding)
        return Ballot(credential: credential, signature: signature)
    }

    static func text(_ value: String) -> [UInt8] { be(UInt32(value.utf8.count)) + Array(value.utf8) }
    static func bytes(_ value: [UInt8]) -> [UInt8] { be(UInt32(value.count)) + value }

    /// Place `id` with the standard windows, anonymous ballots (flags 2) and `ballotKey` (a DER SPKI).
    static func anonymousPlace(_ id: UInt32 = 1, ballotKey: [UInt8]? = nil, flags: UInt32 = 2) -> LedgerEvent {
        raw(
            0x0101,
            [
                be(id), text("Board"), text(""), be(registration.start), be(registration.end), be(voting.start),
                be(voting.end), be(UInt32(0)), be(flags), bytes(ballotKey ?? ballotKeys[0].publicKey.derRepresentation),
            ])
    }

    /// Place 1 with the standard windows, anonymous ballots under place 1's key unless `flags` leaves out bit 1,
    /// and ballot batches (flag bit 4, §11.31): `interval` ms and `size`, 0 for a part not set.
    static func batchedPlace(interval: Int64, size: UInt32, flags: UInt32 = 18) -> LedgerEvent {
        raw(
            0x0101,
            [
                be(UInt32(1)), text("Board"), text(""), be(registration.start), be(registration.end),
                be(voting.start), be(voting.end), be(UInt32(0)), be(flags),
                flags & 2 != 0 ? bytes(ballotKeys[0].publicKey.derRepresentation) : [], be(interval), be(size),
            ])
    }

    /// A credential issued for issuance code `code` (its hash, as a token's) in `place`.
    static func issue(_ code: String, place: UInt32 = 1) -> LedgerEvent {
        raw(0x0109, [be(place), digest(code).bytes, digest("blinded " + code).bytes])
    }

    /// An anonymous vote for `candidate` with `ballot` in `place`.
    static func cast(_ candidate: UInt32, _ ballot: Ballot, place: UInt32 = 1) -> LedgerEvent {
        raw(0x010A, [be(place), be(candidate), bytes(ballot.credential), bytes(ballot.signature)])
    }

    /// Voter `voter`'s code `old` replaced by `new` in place 1 (§11.17).
    static func reissue(_ voter: String, _ old: String, _ new: String) -> LedgerEvent {
        raw(0x0108, [be(UInt32(1)), digest("tag " + voter).bytes, digest(old).bytes, digest(new).bytes])
    }

    /// Place 1 anonymous (candidates Ann and Bob; codes A, B and D authorised, A and B issued), place 2 with
    /// tokens (candidate Cy, token C): blocks 1-4.
    static let anonymousSetUp: [Block] = [
        (t, [anonymousPlace(), place(2)]),
        (t + 1500, [candidate(1, "Ann"), candidate(2, "Bob"), candidate(1, "Cy", place: 2)]),
        (
            t + 1600,
            [
                authorize("a", token: "A"), authorize("b", token: "B"), authorize("d", token: "D"),
                authorize("c", token: "C", place: 2),
            ]
        ),
        (t + 2500, [issue("A"), issue("B")]),
    ]

    /// The DER SPKI of the public half of the private key Python's `cryptography` makes with `generate` (an
    /// expression over its modules `rsa` and `ed25519`): keys BlindRSA refuses to make.
    static func publicKey(_ generate: String) throws -> [UInt8] {
        let script = """
            from cryptography.hazmat.primitives import serialization
            from cryptography.hazmat.primitives.asymmetric import ed25519, rsa
            key = \(generate).public_key()
            print(key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo).hex())
            """
        let result = try IndependentVerifierTests.run("/usr/bin/env", ["python3", "-c", script])
        #expect(result.status == 0, "\(result.err)")
        let hex = Array(result.out.trimmingCharacters(in: .whitespacesAndNewlines).utf8)
        return stride(from: 0, to: hex.count - 1, by: 2).map {
            UInt8(String(decoding: hex[$0...$0 + 1], as: UTF8.self), radix: 16)!
        }
    }

    /// The DER SubjectPublicKeyInfo of the RSA public key (n, e) that Python computes from `modulus` and `exponent`
    /// (expressions over `n`, a real 3072-bit modulus, and `prime(bits)`, a prime from `openssl prime`), encoded
    /// by hand: Python's `cryptography` refuses to encode some of these non-keys.
    static func rsaPublicKey(modulus: String, exponent: String = "65537") throws -> [UInt8] {
        let script = """
            import subprocess
            from cryptography.hazmat.primitives.asymmetric import rsa
            n = rsa.generate_private_key(65537, 3072).public_key().public_numbers().n
            def prime(bits):
                out = subprocess.run(["openssl", "prime", "-generate", "-bits", str(bits)], capture_output=True)
                return int(out.stdout)
            def tlv(tag, value):
                size = len(value)
                head = bytes([size]) if size < 128 else bytes([0x80 | (size.bit_length() + 7) // 8]) + size.to_bytes(
                    (size.bit_length() + 7) // 8, "big")
                return bytes([tag]) + head + value
            def integer(x):
                return tlv(2, x.to_bytes(x.bit_length() // 8 + 1, "big"))
            key = tlv(0x30, integer(\(modulus)) + integer(\(exponent)))
            algorithm = bytes.fromhex("300d06092a864886f70d0101010500")
            print(tlv(0x30, algorithm + tlv(3, b"\\0" + key)).hex())
            """
        let result = try IndependentVerifierTests.run("/usr/bin/env", ["python3", "-c", script])
        #expect(result.status == 0, "\(result.err)")
        let hex = Array(result.out.trimmingCharacters(in: .whitespacesAndNewlines).utf8)
        return stride(from: 0, to: hex.count - 1, by: 2).map {
            UInt8(String(decoding: hex[$0...$0 + 1], as: UTF8.self), radix: 16)!
        }
    }

    // MARK: - Tests

    /// An anonymous election that bends no rule passes both: credentials issued before and during voting, votes
    /// cast with them, an ordinary place beside it, results certified; Python counts the credentials issued.
    @Test func validAnonymousElectionPassesBoth() throws {
        let (a, b, d) = (try Self.ballot(), try Self.ballot(), try Self.ballot())
        let blocks =
            Self.anonymousSetUp + [
                (Self.t + 3000, [Self.cast(1, a), Self.cast(2, b), Self.vote(1, token: "C", place: 2)]),
                (Self.t + 3500, [Self.issue("D")]),
                (Self.t + 3999, [Self.cast(1, d)]),
                (Self.t + 4000, [Self.results(treeSize: 17, authorized: 3, voted: 3, votes: [(1, 2), (2, 1)])]),
            ]
        try Self.expectBoth("valid anonymous", blocks, nil)
        let path = try Self.ledger(blocks)
        defer { removeLedger(path) }
        let tallies = try IndependentVerifierTests.python([path]).json["tallies"] as? [[String: Any]] ?? []
        let turnouts = tallies.map { $0["turnout"] as? [String: Any] ?? [:] }
        #expect(turnouts.map { "\($0["issued"] ?? "none") \($0["voted"] ?? "none")" } == ["3 3", "none 1"])
    }

    /// §11.18 and §11.19, and the changed rules of vote cast and token reissued, each broken by a last block
    /// after the anonymous set-up.
    @Test func anonymousRules() throws {
        let t = Self.t
        let (a, b, c) = (try Self.ballot(), try Self.ballot(), try Self.ballot())
        let stranger = try Self.ballot(key: Self.ballotKeys[1])
        let forged = Ballot(credential: a.credential, signature: b.signature)
        let short = Ballot(credential: Array(a.credential.dropLast()), signature: a.signature)
        let cases: [(String, [Block], String)] = [
            ("11.18.1", [(t + 2600, [Self.issue("D", place: 3)])], "place 3 does not exist"),
            ("11.18.2", [(t + 2600, [Self.issue("C", place: 2)])], "place 2 does not use anonymous ballots"),
            (
                "11.18.3", [(t + 4000, [Self.issue("D")])],
                "voting in place 1 has closed; no more credentials can be issued"
            ),
            ("11.18.4", [(t + 2600, [Self.issue("X")])], "this issuance code is not authorised in place 1"),
            (
                "11.18.4 replaced", [(t + 2600, [Self.reissue("d", "D", "E"), Self.issue("D")])],
                "this issuance code is not authorised in place 1"
            ),
            ("11.18.5", [(t + 2600, [Self.issue("A")])], "a credential has already been issued for this issuance code"),
            (
                "11.17.5", [(t + 2600, [Self.reissue("a", "A", "E")])],
                "a credential has already been issued for this issuance code"
            ),
            ("11.11 token", [(t + 3500, [Self.vote(1, token: "A")])], "place 1 takes only anonymous ballots"),
            ("11.19.1", [(t + 3500, [Self.cast(1, a, place: 3)])], "place 3 does not exist"),
            ("11.19.2", [(t + 3500, [Self.cast(1, a, place: 2)])], "place 2 does not use anonymous ballots"),
            ("11.19.3", [(t + 2999, [Self.cast(1, a)])], "voting in place 1 is not open (the place is waiting)"),
            ("11.19.3 end", [(t + 4000, [Self.cast(1, a)])], "voting in place 1 is not open (the place is ended)"),
            (
                "11.19.4 forged", [(t + 3500, [Self.cast(1, forged)])],
                "the ballot's signature does not verify under place 1's key"
            ),
            (
                "11.19.4 other place's key", [(t + 3500, [Self.cast(1, stranger)])],
                "the ballot's signature does not verify under place 1's key"
            ),
            (
                "11.19.4 short credential", [(t + 3500, [Self.cast(1, short)])],
                "the ballot's signature does not verify under place 1's key"
            ),
            ("11.19.5", [(t + 3500, [Self.cast(1, a), Self.cast(2, a)])], "this credential has already voted"),
            (
                "11.19.6", [(t + 3500, [Self.cast(1, a), Self.cast(1, b), Self.cast(2, c)])],
                "place 1 has no more credentials issued than votes cast"
            ),
            ("11.19.7", [(t + 3500, [Self.cast(3, a)])], "candidate 3 does not exist in place 1"),
            ("11.19.8", [(t + 2900, [Self.withdraw(2)]), (t + 3500, [Self.cast(2, a)])], "candidate 2 has withdrawn"),
        ]
        for (label, last, reason) in cases {
            let blocks = Self.anonymousSetUp + last
            try Self.expectBoth(
                label, blocks, Self.broken(blocks, event: blocks.last!.events.count - 1, reason))
        }
    }

    /// §11.31: a place that writes its anonymous ballots in batches (every second of voting, at least two), two
    /// ballots in one block, passes both; rules 11.7.14-11.7.17, each broken by the place's creation (and the
    /// first of two broken in their order), and the batch rule's truncated fields, are refused by both.
    @Test func ballotBatchRules() throws {
        let (a, b) = (try Self.ballot(), try Self.ballot())
        let valid: [Block] =
            [(Self.t, [Self.batchedPlace(interval: 1_000, size: 2), Self.place(2)])] + Self.anonymousSetUp.dropFirst()
            + [(Self.t + 3000, [Self.cast(2, b), Self.cast(1, a)])]
        try Self.expectBoth("batches", valid, nil)
        let sizeOnly: [Block] = [(Self.t, [Self.batchedPlace(interval: 0, size: 1_000_000)])]
        try Self.expectBoth("batches of a size alone", sizeOnly, nil)
        let intervalOnly: [Block] = [(Self.t, [Self.batchedPlace(interval: 604_800_000, size: 0, flags: 19)])]
        try Self.expectBoth("batches of an interval alone, with the embargo", intervalOnly, nil)
        let anonymous = "ballot batches: are for a place with anonymous ballots"
        let neither = "ballot batches: need an interval, a size or both"
        let interval = "ballot batches: the interval must be whole seconds, 1 second to 7 days"
        let size = "ballot batches: the size must be 2 to 1000000 ballots"
        let cases: [(String, LedgerEvent, String)] = [
            ("11.7.14", Self.batchedPlace(interval: 1_000, size: 2, flags: 16), anonymous),
            ("11.7.14 before 11.7.15", Self.batchedPlace(interval: 0, size: 0, flags: 17), anonymous),
            ("11.7.15", Self.batchedPlace(interval: 0, size: 0), neither),
            ("11.7.16 not whole seconds", Self.batchedPlace(interval: 1_500, size: 0), interval),
            ("11.7.16 below a second", Self.batchedPlace(interval: 999, size: 2), interval),
            ("11.7.16 over 7 days", Self.batchedPlace(interval: 604_801_000, size: 2), interval),
            ("11.7.16 negative", Self.batchedPlace(interval: -1_000, size: 0), interval),
            ("11.7.16 before 11.7.17", Self.batchedPlace(interval: 1_500, size: 1), interval),
            ("11.7.17 one", Self.batchedPlace(interval: 0, size: 1), size),
            ("11.7.17 too many", Self.batchedPlace(interval: 60_000, size: 1_000_001), size),
        ]
        for (label, event, reason) in cases {
            let blocks: [Block] = [(Self.t, [event])]
            try Self.expectBoth(label, blocks, Self.broken(blocks, reason))
        }
        let full = Self.batchedPlace(interval: 1_000, size: 2).payload
        let blocks: [Block] = [(Self.t, [LedgerEvent(type: 0x0101, payload: Array(full.dropLast(2)))])]
        try Self.expectBoth(
            "batch size cut short", blocks, "block 1, event 0: place created: truncated (needs 4 bytes, has 2)")
    }

    /// §11.1 and rule 11.7.8: the ballot key must be the DER SPKI of an RSA key of 3072 to 4096 bits with
    /// e = 65537, and flag bit 1 brings it; no other flag is known.
    @Test func ballotKeyRules() throws {
        let badKey = "the ballot key is not an RSA public key of 3072 to 4096 bits"
        let keys: [(String, [UInt8])] = [
            ("garbage", [0x30, 0x03, 0x02, 0x01, 0x01]),
            ("2048 bits", try Self.publicKey("rsa.generate_private_key(65537, 2048)")),
            ("e = 3", try Self.publicKey("rsa.generate_private_key(3, 3072)")),
            ("Ed25519", try Self.publicKey("ed25519.Ed25519PrivateKey.generate()")),
            ("trailing byte", Self.ballotKeys[0].publicKey.derRepresentation + [0]),
        ]
        for (label, key) in keys {
            let blocks: [Block] = [(Self.t, [Self.anonymousPlace(ballotKey: key)])]
            try Self.expectBoth("11.7.8 \(label)", blocks, Self.broken(blocks, badKey))
        }
        // Partial public-key validation (SP 800-56B Rev. 2 §6.4.2.2): each of these is well-formed DER of 3072 to
        // 4096 bits, and not a key.
        let nonKeys: [(String, [UInt8])] = [
            ("even modulus, e = 3", try Self.rsaPublicKey(modulus: "n + 1", exponent: "3")),
            ("even modulus", try Self.rsaPublicKey(modulus: "n + 1")),
            ("factor 3", try Self.rsaPublicKey(modulus: "n * 3")),
            ("factor 751", try Self.rsaPublicKey(modulus: "n * 751")),
            ("prime modulus", try Self.rsaPublicKey(modulus: "prime(3072)")),
            ("square of a prime", try Self.rsaPublicKey(modulus: "prime(1537) ** 2")),
            ("cube of a prime", try Self.rsaPublicKey(modulus: "prime(1100) ** 3")),
            ("e = 65539", try Self.rsaPublicKey(modulus: "n", exponent: "65539")),
        ]
        for (label, key) in nonKeys {
            let blocks: [Block] = [(Self.t, [Self.anonymousPlace(ballotKey: key)])]
            try Self.expectBoth("11.7.8 \(label)", blocks, Self.broken(blocks, badKey))
        }
        // The same encoder's real key is a ballot key to both.
        let real: [Block] = [(Self.t, [Self.anonymousPlace(ballotKey: try Self.rsaPublicKey(modulus: "n"))])]
        try Self.expectBoth("11.7.8 a real key, encoded by hand", real, nil)
        let full = Self.anonymousPlace().payload
        let withoutKey = Array(full.prefix(full.count - 4 - Self.ballotKeys[0].publicKey.derRepresentation.count))
        let decoding: [(String, LedgerEvent, String)] = [
            (
                "no key", LedgerEvent(type: 0x0101, payload: withoutKey),
                "place created: truncated (needs 4 bytes, has 0)"
            ),
            ("flag 32", Self.anonymousPlace(flags: 32), "place created: unknown flags 32"),
        ]
        for (label, event, reason) in decoding {
            let blocks: [Block] = [(Self.t, [event])]
            try Self.expectBoth(label, blocks, "block 1, event 0: \(reason)")
        }
    }
}
