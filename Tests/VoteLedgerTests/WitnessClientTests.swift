import Foundation
import Ledger
import LedgerCrypto
import Testing

@testable import BlockingHTTP
@testable import TlogWitness
@testable import VoteLedger

/// What `vote cast`, `vote head` and `vote serve` make of a `--witness` option and of a witness's HTTP answer:
/// the answer framed by Content-Length, by chunks (as Go's net/http may send it) or by the connection's end,
/// and nothing taken for an answer before it is whole. Asking a real witness, over HTTP and HTTPS, is tested
/// in VoteServerTests.
@Suite struct WitnessClientTests {
    static let vkey = Cosigner(
        name: "witness.example/w", key: try! Ed25519PrivateKey(seed: [UInt8](repeating: 7, count: 32)).publicKey
    ).verifierKey

    @Test func optionsNameTheSchemeHostPortAndPrefix() throws {
        let cases: [(String, Bool, String, Int, String)] = [
            ("http://127.0.0.1:8380", false, "127.0.0.1", 8380, ""),
            ("https://witness.example", true, "witness.example", 443, ""),
            ("https://witness.example/v1/", true, "witness.example", 443, "/v1"),
            ("http://[::1]:9/prefix", false, "::1", 9, "/prefix"),
            ("http://[::1]", false, "::1", 80, ""),
        ]
        for (url, tls, host, port, path) in cases {
            let endpoint = try WitnessEndpoint(option: "witness.example/w=\(url)=\(Self.vkey)")
            #expect(
                endpoint.tls == tls && endpoint.host == host && endpoint.port == port && endpoint.path == path, "\(url)"
            )
        }
        for bad in [
            "other.example/w=http://h:1=\(Self.vkey)", "witness.example/w=ftp://h:1=\(Self.vkey)",
            "witness.example/w=http://h:99999=\(Self.vkey)", "witness.example/w=http://:1=\(Self.vkey)",
            "witness.example/w=http://h:1=not-a-key", "witness.example/w=http://h:1",
        ] {
            #expect(throws: VoteError.self, "\(bad)") { try WitnessEndpoint(option: bad) }
        }
    }

    @Test func answersAreReadWhenWholeAndNotBefore() throws {
        func parse(_ text: String, complete: Bool = false) throws -> BlockingHTTP.Reply? {
            try BlockingHTTP.parse(Array(text.utf8), complete: complete)?.reply
        }
        let line = "— witness.example/w AAAA\n"
        let sized = "HTTP/1.1 200 OK\r\nContent-Length: \(line.utf8.count)\r\n\r\n" + line
        #expect(try parse(sized).map { String(decoding: $0.body, as: UTF8.self) } == line)
        #expect(try parse(String(sized.dropLast(3))) == nil)
        let chunked = "HTTP/1.1 409 Conflict\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n12\r\n1;x=y\r\n\n\r\n0\r\n\r\n"
        #expect(
            try parse(chunked).map { ($0.status, String(decoding: $0.body, as: UTF8.self)) } ?? (0, "") == (409, "12\n")
        )
        #expect(try parse(String(chunked.dropLast(5))) == nil)
        let unsized = "HTTP/1.0 422 Unprocessable\r\nContent-Type: text/plain\r\n\r\nfork\n"
        #expect(try parse(unsized) == nil)
        #expect(try parse(unsized, complete: true)?.status == 422)
        for broken in ["SSH-2.0-OpenSSH\r\n\r\n", "HTTP/1.1 abc\r\n\r\n", "HTTP/1.1 200 OK\r\nno colon\r\n\r\n"] {
            #expect(throws: VoteError.self, "\(broken)") { try parse(broken) }
        }
        #expect(throws: VoteError.self) { try parse("HTTP/1.1 200", complete: true) }
    }
}
