import Election
import FileDriver
import Foundation
import Ledger
import LedgerCrypto
import TestSupport
import Testing

@testable import VoteLedger

/// Export streams: its memory does not grow with the number of events.
@Suite struct ExportTests {
    /// A ledger with `votes` votes (and as many voters), built through the service in 10,000-command blocks.
    static func ledger(votes: Int) throws -> String {
        let path = NSTemporaryDirectory() + "export-\(UUID().uuidString)"
        let t0 = ServiceTests.t0
        let ledger = try VoteLedgerService.create(StoreConfiguration(.file(path: path)), name: "export", now: t0)
        defer { ledger.close() }
        _ = try ledger.submit(
            .createPlace(
                name: "Big", description: "", registration: TimeWindow(start: t0, end: t0 + 1000),
                voting: TimeWindow(start: t0 + 1000, end: t0 + 100_000), maxCandidates: nil), now: t0)
        _ = try ledger.submit(
            [.registerCandidate(place: 1, name: "A", pledge: ""), .registerCandidate(place: 1, name: "B", pledge: "")],
            now: t0 + 1)
        var tokens: [Digest] = []
        for start in stride(from: 0, to: votes, by: 10_000) {
            let batch = (start..<min(start + 10_000, votes)).map { SHA256.hash(Array("token \($0)".utf8)) }
            tokens += batch
            _ = try ledger.submit(
                try batch.enumerated().map { offset, token in
                    .authorizeVoter(place: 1, voterTag: try ledger.voterTag("m-\(start + offset)"), tokenHash: token)
                }, now: t0 + 2)
        }
        for start in stride(from: 0, to: votes, by: 10_000) {
            _ = try ledger.submit(
                tokens[start..<min(start + 10_000, votes)].enumerated().map { offset, token in
                    .castVote(place: 1, candidate: UInt32(offset % 2 + 1), tokenHash: token)
                }, now: t0 + 2000)
        }
        return path
    }

    /// Peak RSS in KiB of `vote` with `arguments`, measured by GNU time; stdout lines counted.
    static func measure(_ arguments: [String]) throws -> (kilobytes: Int, lines: Int) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/time")
        process.arguments = ["-f", "%M", VoteCLI.path] + arguments
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        var lines = 0
        while true {
            let data = out.fileHandleForReading.availableData
            if data.isEmpty { break }
            lines += data.filter { $0 == 10 }.count
        }
        let errText = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(errText)")
        return (Int(errText.split(separator: "\n").last.map(String.init) ?? "") ?? -1, lines)
    }

    /// Exporting the event log of a 100,000-vote ledger takes no more memory than of a 10,000-vote one
    /// (within noise), and every event comes out once.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/time")))
    func eventExportIsFlat() throws {
        let small = try ExportTests.ledger(votes: 10_000)
        let large = try ExportTests.ledger(votes: 100_000)
        defer {
            try? FileManager.default.removeItem(atPath: small)
            try? FileManager.default.removeItem(atPath: large)
        }
        let smallRun = try ExportTests.measure(["export", "--events", "--ledger", small])
        let largeRun = try ExportTests.measure(["export", "--events", "--ledger", large])
        // Genesis, the voter secret commitment, the place, two candidates, and an authorisation and a vote per voter.
        #expect(smallRun.lines == 1 + 1 + 1 + 2 + 20_000)
        #expect(largeRun.lines == 1 + 1 + 1 + 2 + 200_000)
        // Ten times the events, not ten times the memory: allow 30% plus 8 MiB of noise.
        #expect(
            largeRun.kilobytes < smallRun.kilobytes * 13 / 10 + 8_192,
            "\(smallRun.kilobytes) KiB vs \(largeRun.kilobytes) KiB")
        let results = try VoteCLI.run(["export", "--place", "1", "--format", "json", "--ledger", large])
        let document = try #require(try json(results.out) as? [String: Any])
        #expect((document["tally"] as? [[String: Any]])?.map { $0["votes"] as? Int } == [50_000, 50_000])
        #expect(((document["head"] as? [String: String])?["signature"]?.count) == 128)
    }
}
