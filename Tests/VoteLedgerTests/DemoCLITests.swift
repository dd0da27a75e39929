import Foundation
import TestSupport
import Testing

/// The demo is the README's first command: its last lines must leave a newcomer able to type `vote …`.
@Suite struct DemoCLITests {
    /// Without `vote` on the PATH the demo says how to put it there (its own directory) and how to see the product
    /// in a browser; with it there, it does not tell the reader what they already have.
    @Test func lastLinesSayHowToPutVoteOnThePath() throws {
        let root = try makeTemporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let directory = (VoteCLI.path as NSString).deletingLastPathComponent
        // Each demo writes its receipt beside its ledger.
        for run in ["first", "second"] {
            try FileManager.default.createDirectory(atPath: "\(root)/\(run)", withIntermediateDirectories: false)
        }

        let without = try VoteCLI.run(
            ["demo", "--ledger", root + "/first/ledger"], environment: ["PATH": "/usr/bin:/bin"])
        #expect(without.status == 0, "\(without.err)")
        #expect(without.out.contains("vote is not on your PATH yet; in this shell: export PATH=\"\(directory):$PATH\""))
        #expect(
            without.out.contains("to see the election in a browser (booth, results, audit, console): vote demo --serve")
        )

        let with = try VoteCLI.run(
            ["demo", "--ledger", root + "/second/ledger"], environment: ["PATH": "/usr/bin:\(directory):/bin"])
        #expect(with.status == 0, "\(with.err)")
        #expect(!with.out.contains("not on your PATH"))
        #expect(with.out.contains("vote demo --serve"))
    }

    private func makeTemporaryDirectory() throws -> String {
        var template = Array("/tmp/vote-demo-test-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw CocoaError(.fileWriteUnknown) }
        return String(cString: made)
    }
}
