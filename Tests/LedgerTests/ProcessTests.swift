import FileStore
import Foundation
import Ledger
import TestSupport
import Testing

/// The store under real processes: writers killed with SIGKILL mid-append, two writers at once, and a
/// reader verifying while a writer appends. The child is `ledger-tool`, which prints each block's height
/// only after its append returned (after fsync).
@Suite(.serialized) struct ProcessTests {
    /// A running `ledger-tool append` whose stdout lines are the acknowledged heights.
    final class Appender {
        let process = Process()
        private let output = Pipe()
        private let errors = Pipe()

        init(_ path: String, blocks: Int, perBlock: Int, bytes: Int) throws {
            process.executableURL = URL(fileURLWithPath: Tool.path)
            process.arguments = ["append", path, String(blocks), String(perBlock), String(bytes)]
            process.standardOutput = output
            process.standardError = errors
            try process.run()
        }

        /// Waits for the first acknowledged line (the child holds the lock by then).
        func waitForFirstAck() -> String {
            String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        }

        /// Waits for exit; returns the status, every complete stdout line and stderr.
        func finish(alreadyRead: String = "") -> (status: Int32, acked: [UInt64], err: String) {
            let rest = output.fileHandleForReading.readDataToEndOfFile()
            let err = errors.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            let text = alreadyRead + String(decoding: rest, as: UTF8.self)
            // A line counts only once its newline arrived: the child printed it whole.
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
            return (process.terminationStatus, lines.compactMap { UInt64($0) }, String(decoding: err, as: UTF8.self))
        }
    }

    /// SIGKILL at random moments of an append loop, 20 times: after each, the reopened ledger verifies
    /// and holds every block whose append had returned.
    @Test func killedWriterLosesNothingAcknowledged() throws {
        let temp = TemporaryDirectory()
        let path = temp.child("ledger")
        #expect(try Tool.run(["create", path]).status == 0)
        var generator = SystemRandomNumberGenerator()
        var acknowledged: UInt64 = 0
        for round in 0..<20 {
            let child = try Appender(
                path, blocks: 1_000_000, perBlock: Int.random(in: 1...200, using: &generator), bytes: 80)
            let first = child.waitForFirstAck()
            usleep(UInt32.random(in: 0...40_000, using: &generator))
            kill(child.process.processIdentifier, SIGKILL)
            let result = child.finish(alreadyRead: first)
            #expect(result.status == SIGKILL, "round \(round): \(result.err)")
            if let last = result.acked.last { acknowledged = last }

            let ledger = try FileBlockStore.open(at: path, log: { _ in })
            #expect(ledger.head.height >= acknowledged, "round \(round): block \(acknowledged) was acknowledged")
            ledger.close()
            let report = try ChainVerifier.verify(FileBlockSource(path: path))
            #expect(report.height == ledger.head.height && report.tornTail == nil, "round \(round)")
        }
        #expect(acknowledged > 20)
    }

    /// Two writer processes on one directory: the second waits for the lock, then fails naming the
    /// holder's process id and writes nothing; the ledger stays intact.
    @Test func secondWriterProcessFailsClearly() throws {
        let temp = TemporaryDirectory()
        let path = temp.child("ledger")
        #expect(try Tool.run(["create", path]).status == 0)
        let first = try Appender(path, blocks: 3_000, perBlock: 5, bytes: 64)
        let firstAck = first.waitForFirstAck()
        let second = try Tool.run(["append", path, "10", "5", "64"])
        #expect(second.status == 4)
        #expect(second.err == "ledger-tool: ledger is in use by process \(first.process.processIdentifier)\n")
        #expect(second.out.isEmpty)
        let result = first.finish(alreadyRead: firstAck)
        #expect(result.status == 0)
        #expect(result.acked == Array(1...3_000))
        let report = try ChainVerifier.verify(FileBlockSource(path: path))
        #expect(report.blocks == 3_001 && report.events == 15_001)
    }

    /// A reader verifying while a writer appends always sees a consistent, growing prefix.
    @Test func readerSeesConsistentPrefixDuringAppends() throws {
        let temp = TemporaryDirectory()
        let path = temp.child("ledger")
        #expect(try Tool.run(["create", path]).status == 0)
        let writer = try Appender(path, blocks: 400, perBlock: 50, bytes: 120)
        let firstAck = writer.waitForFirstAck()
        var previous: UInt64 = 0
        var checks = 0
        while writer.process.isRunning || checks == 0 {
            let report = try ChainVerifier.verify(FileBlockSource(path: path))
            #expect(report.blocks >= previous)
            previous = report.blocks
            checks += 1
        }
        let result = writer.finish(alreadyRead: firstAck)
        #expect(result.status == 0)
        #expect(try ChainVerifier.verify(FileBlockSource(path: path)).blocks == 401)
        #expect(checks > 1)
    }
}
