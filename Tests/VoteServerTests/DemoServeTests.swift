import Foundation
import Hummingbird
import HummingbirdTesting
import TestSupport
import Testing
import VoteLedger

/// `vote demo --serve`: the demo's transcript, then an election open for voting served with the web app at the
/// printed links, with the tokens a newcomer needs; SIGINT and SIGTERM stop it cleanly.
@Suite(.serialized) struct DemoServeTests {
    @Test(arguments: [SIGINT, SIGTERM]) func demoServesAnOpenElection(stop signal: Int32) async throws {
        let root = makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: VoteBinary.path)
        // An hour's idle and head timeouts, as ServeProcess gives: a loaded machine may leave a test task waiting
        // between connecting and sending its request for longer than the 10 s default.
        process.arguments = [
            "demo", "--serve", "--listen", "127.0.0.1:0", "--ledger", root + "/ledger",
            "--", "--idle-timeout", "3600", "--head-timeout", "3600",
        ]
        process.environment = VoteBinary.environment(clockOffset: 0)
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        var text = ""
        let reader = out.fileHandleForReading
        while !text.contains("/#/authority") {
            let chunk = reader.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        #expect(text.contains("results certified on the ledger"), "\(text)")
        let tokens = text.split(separator: "\n").compactMap { line in
            line.range(of: "voting token ").map { String(line[$0.upperBound...].drop { $0 != " " }.dropFirst()) }
        }
        #expect(tokens.count == 5, "\(text)")
        let admin = text.split(separator: "\n").first { $0.hasPrefix("admin token: ") }?.dropFirst(13)
        #expect(admin != nil, "\(text)")
        SecretsLog.record(tokens + (admin.map { [String($0)] } ?? []))
        let links = text.split(separator: "\n").compactMap { line -> String? in
            guard let start = line.range(of: "http://127.0.0.1:") else { return nil }
            return String(line[start.lowerBound...].prefix { $0 != " " })
        }
        #expect(links.count == 5, "\(text)")  // listening on, booth, results, audit, console
        for page in ["booth", "results", "audit", "authority"] {
            #expect(links.contains { $0.hasSuffix("/#/\(page)") }, "\(page) in \(text)")
        }
        // Every link is the web app (the part after # is the browser's); place 2 is open for voting.
        let port = try #require(Int(links[0].split(separator: ":").last ?? ""))
        for link in links {
            let path = String(link.dropFirst("http://127.0.0.1:\(port)".count)).split(separator: "#").first ?? "/"
            let page = try await fetch(port, String(path))
            #expect(page.status == .ok, "\(link)")
            #expect(String(buffer: page.body ?? ByteBuffer()).contains("app.js"), "\(link)")
        }
        let place = object(try await fetch(port, "/api/v1/places/2").body)
        #expect(place["status"] as? String == "voting", "\(place)")

        kill(process.processIdentifier, signal)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 0)
    }
}
