import Election
import Foundation
import Hummingbird
import JSONViews
import Ledger
import LedgerCrypto
import TestSupport
import Testing

@testable import VoteLedger
@testable import VoteServer

/// The vote route's JSON without Foundation: the receipt it writes is byte for byte what JSONEncoder wrote
/// (`ReceiptJSON`, as `vote cast --json` prints it), and the requests it reads itself are read as
/// JSONDecoder reads them; anything else is left to JSONDecoder.
@Suite struct EncodingTests {
    /// What the server wrote before: `JSONBody.response(ReceiptJSON(…))`'s body.
    static func encoderBytes(
        place: UInt32, candidate: UInt32, receipt: EventReceipt, proof: TlogProof
    ) throws
        -> [UInt8]
    {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(
            try encoder.encode(ReceiptJSON(place: place, candidate: candidate, receipt: receipt, proof: proof)))
    }

    /// A real receipt: an event recorded in a ledger in memory, proven under its signed head.
    static func recorded() throws -> (EventReceipt, TlogProof) {
        let now: Int64 = 1_800_000_000_000
        let ledger = try VoteLedgerService.create(StoreConfiguration(.memory), name: "Encoding Test", now: now)
        let window = TimeWindow(start: now + hour, end: now + 2 * hour)
        var receipts: [EventReceipt] = []
        for number in 1...5 {
            receipts.append(
                try ledger.submit(
                    .createPlace(
                        name: "Place \(number)", description: "",
                        registration: TimeWindow(start: now, end: now + hour), voting: window, maxCandidates: nil),
                    now: now))
        }
        let receipt = receipts[2]
        return (receipt, try ledger.tlogProofs(for: [receipt])[0])
    }

    @Test func receiptIsWhatJSONEncoderWrote() throws {
        let (receipt, proof) = try EncodingTests.recorded()
        let key = try Ed25519PrivateKey()
        // Every byte JSONEncoder escapes or leaves alone, in a note that is not a checkpoint (its tree size and
        // root are then 0 and empty).
        let odd = String(decoding: (1..<0x80).map { UInt8($0) }, as: UTF8.self) + "\u{2014} é 😀 \u{2028}\n"
        let notes = [
            proof.checkpoint, try SignedNote.sign(odd, name: "odd/name", key: key),
            try SignedNote.sign(
                "voteledger/x\n7\n\(Base64.encode(Array(repeating: 0xFB, count: 32)))\n", name: "x",
                key: key),
        ]
        let proofs = [
            proof, TlogProof(extra: nil, index: 0, proof: [], checkpoint: proof.checkpoint),
            TlogProof(extra: [], index: UInt64.max, proof: proof.proof + proof.proof, checkpoint: proof.checkpoint),
        ]
        let encoder = ReceiptEncoder()
        // Each note twice and the first again: from the per-block cache and after it moved on.
        for note in notes + notes + [notes[0]] {
            for variant in proofs {
                var variant = variant
                variant.checkpoint = note
                for (place, candidate) in [(1, 1), (0, UInt32.max), (UInt32.max, 0)] as [(UInt32, UInt32)] {
                    let written = encoder.body(place: place, candidate: candidate, receipt: receipt, proof: variant)
                    let expected = try EncodingTests.encoderBytes(
                        place: place, candidate: candidate, receipt: receipt, proof: variant)
                    #expect(Array(written.readableBytesView) == expected)
                }
            }
        }
    }

    @Test func stringsAndNumbersAreWrittenAsJSONEncoderWritesThem() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let texts = [
            "", "plain", String(decoding: (0..<0x80).map { UInt8($0) }, as: UTF8.self),
            "\u{7F}\u{80}\u{2014}\u{2028}\u{2029}\u{FEFF}é😀", "a/b\\c\"d",
        ]
        for text in texts {
            var json = JSONBytes(capacity: 0)
            json.raw("[")
            json.string(text)
            json.raw("]")
            #expect(json.bytes == Array(try encoder.encode([text])))
        }
        for number in [0, 7, 9, 10, 99, 100, 12_345, UInt64(UInt32.max), UInt64.max - 1, UInt64.max] as [UInt64] {
            var json = JSONBytes(capacity: 0)
            json.number(number)
            #expect(json.bytes == Array(try encoder.encode(number)))
        }
    }

    /// The receipt's digests and proof lines are appended after what the response already holds.
    @Test func hexAndBase64AreAppended() {
        let vectors = [
            "": "", "f": "Zg==", "fo": "Zm8=", "foo": "Zm9v", "foob": "Zm9vYg==", "fooba": "Zm9vYmE=",
            "foobar": "Zm9vYmFy",
        ]  // RFC 4648 §10
        for (text, expected) in vectors {
            var out = Array("x".utf8)
            Array(text.utf8).withUnsafeBytes { Base64.append($0, to: &out) }
            #expect(out == Array(("x" + expected).utf8))
            #expect(Base64.encode(Array(text.utf8)) == expected)
            #expect(Base64.decode(expected) == Array(text.utf8))
        }
        let all = (0...255).map { UInt8($0) }
        var out = Array("y".utf8)
        all.withUnsafeBytes { Hex.append($0, to: &out) }
        #expect(out == Array(("y" + Hex.encode(all)).utf8))
    }

    /// Bodies read without Foundation give what JSONDecoder gives; the rest is left to it.
    @Test func voteRequestsAreReadAsJSONDecoderReadsThem() throws {
        let token = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
        let read = [
            "{\"candidate\":1,\"token\":\"\(token)\"}",
            " \t\r\n{ \"token\" : \"\(token)\" ,\n\"candidate\" : 4294967295 }\n ",
            "{\"candidate\":0,\"token\":\"\"}",
            "{\"candidate\":10,\"token\":\"ABCD-EFGH ijkl/~!\"}",
        ]
        for text in read {
            let object = try #require(FlatJSONObject(ByteBuffer(string: text)))
            let fast = try #require(VoterRoutes.VoteRequest(object))
            let decoded = try JSONDecoder().decode(VoterRoutes.VoteRequest.self, from: Data(text.utf8))
            #expect(fast.candidate == decoded.candidate && fast.token == decoded.token)
        }
        let leftToJSONDecoder = [
            "", "{", "}", "[]", "null", "{}", "{\"candidate\":1}", "{\"token\":\"\(token)\"}",
            "{\"candidate\":1,\"token\":\"\(token)\",}", "{\"candidate\":1,\"token\":\"\(token)\"} x",
            "{\"candidate\":1,\"token\":\"\(token)\",\"other\":2}",
            "{\"candidate\":1,\"candidate\":2,\"token\":\"\(token)\"}",
            "{\"candidate\":01,\"token\":\"\(token)\"}", "{\"candidate\":-1,\"token\":\"\(token)\"}",
            "{\"candidate\":1.0,\"token\":\"\(token)\"}", "{\"candidate\":1e2,\"token\":\"\(token)\"}",
            "{\"candidate\":1E2,\"token\":\"\(token)\"}", "{\"candidate\":4294967296,\"token\":\"\(token)\"}",
            "{\"candidate\":18446744073709551616,\"token\":\"\(token)\"}",
            "{\"candidate\":\"1\",\"token\":\"\(token)\"}", "{\"candidate\":1,\"token\":1}",
            "{\"candidate\":1,\"token\":null}", "{\"candidate\":1,\"token\":[\"\(token)\"]}",
            "{\"candidate\":1,\"token\":\"\\u0041BC\"}", "{\"candidate\":1,\"token\":\"é\"}",
            "{\"candidate\":1,\"token\":\"a\tb\"}", "{\"candidate\":1,\"tok\\u0065n\":\"\(token)\"}",
            "{\"candidate\":1,\"token\":\"\(token)", "{\"candidate\":1 \"token\":\"\(token)\"}",
        ]
        for text in leftToJSONDecoder {
            let object = FlatJSONObject(ByteBuffer(string: text))
            #expect(object.flatMap(VoterRoutes.VoteRequest.init) == nil, "\(text)")
        }
        #expect(VoterRoutes.StatusRequest(try #require(FlatJSONObject(ByteBuffer(string: "{\"token\":\"A\"}")))) != nil)
        #expect(
            VoterRoutes.StatusRequest(try #require(FlatJSONObject(ByteBuffer(string: "{\"token\":\"A\",\"x\":1}"))))
                == nil)
    }

    /// One line per request, in StreamLogHandler's shape, with nothing a path could use to forge a line.
    @Test func accessLogLines() throws {
        let path = makeTemporaryDirectory() + "/access.log"
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        try #require(descriptor >= 0)
        defer { close(descriptor) }
        let log = AccessLog(descriptor: descriptor)
        log.record(
            method: "POST", path: "/api/v1/places/1/votes", status: 201, elapsed: .microseconds(1_234),
            requestID: "abc")
        log.record(method: "GET", path: "/x\n2026 forged\u{7F}", status: 404, elapsed: .seconds(12), requestID: "d")
        log.flush()
        let lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 2)
        let first = try #require(lines.first)
        #expect(first.count > 24 && Timestamp.parse(String(first.prefix(24)), now: 0) != nil, "\(first)")
        #expect(
            first.dropFirst(24)
                == " info vote.serve: hb.request.id=abc method=POST ms=1.23 path=/api/v1/places/1/votes status=201"
                + " [VoteServer] request")
        #expect(
            lines[1].dropFirst(24)
                == " info vote.serve: hb.request.id=d method=GET ms=12000.00 path=/x\\x0a2026 forged\\x7f status=404"
                + " [VoteServer] request")
    }
}
