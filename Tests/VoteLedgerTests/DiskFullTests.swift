import Foundation
import TestSupport
import Testing

/// A real full disk: the ledger on a 256 KiB tmpfs. Skipped, saying why, where mounting is not allowed.
@Suite struct DiskFullTests {
    /// Filling the disk fails the command with "No space left on device", acknowledges nothing, leaves a
    /// ledger that verifies, and once space is back the next command works.
    @Test func fullDisk() throws {
        let mountPoint = NSTemporaryDirectory() + "vote-full-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: mountPoint) }
        let (status, output) = shell("mount -t tmpfs -o size=256k tmpfs '\(mountPoint)'")
        guard status == 0 else {
            print(
                "skipping the real full-disk test: cannot mount a tmpfs (\(output.trimmingCharacters(in: .whitespacesAndNewlines)))"
            )
            return
        }
        defer { _ = shell("umount '\(mountPoint)'") }
        let ledger = mountPoint + "/ledger"
        let work = NSTemporaryDirectory() + "vote-full-work-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: work) }
        func vote(_ arguments: [String]) throws -> VoteCLI.Result { try VoteCLI.run(arguments + ["--ledger", ledger]) }

        #expect(try vote(["init", "--no-passphrase"]).status == 0)
        #expect(
            try vote(["place", "create", "--name", "P", "--registration", "now/+1h", "--voting", "+1h/+2h"]).status == 0
        )
        // Authorise in blocks of 500 until the disk is full.
        var failure: VoteCLI.Result?
        var failedRound = 0
        for round in 0..<40 {
            let voters = work + "/voters-\(round).txt"
            try (0..<500).map { "r\(round)-\($0)" }.joined(separator: "\n").write(
                toFile: voters, atomically: false, encoding: .utf8)
            let result = try vote([
                "voter", "authorize", "--place", "1", "--from", voters, "--tokens-out", work + "/tokens-\(round)",
                "--batch", "500",
            ])
            if result.status != 0 {
                failure = result
                failedRound = round
                break
            }
        }
        let full = try #require(failure, "the 256 KiB disk never filled")
        #expect(full.status == 1)
        #expect(
            full.err.contains("the disk is full") && full.err.lowercased().contains("no space left on device"),
            "\(full.err)")
        #expect(full.err.split(separator: "\n").count == 1)
        // The run's one batch was not recorded: its tokens file, which lists no valid token, is gone, so a
        // rerun can use the same name.
        #expect(
            full.err.contains("no voter was authorised and \(work)/tokens-\(failedRound) was removed"), "\(full.err)")
        #expect(!FileManager.default.fileExists(atPath: work + "/tokens-\(failedRound)"))
        let verified = try vote(["verify", "--json"])
        #expect(verified.status == 0, "\(verified.err)")

        // A little space back, then a run in small batches fills it part-way: the tokens file keeps exactly
        // the voters that were authorised (or goes away if none was), and each token it lists is valid.
        #expect(shell("mount -o remount,size=320k '\(mountPoint)'").0 == 0)
        let many = work + "/many.txt"
        try (0..<2000).map { "m-\($0)" }.joined(separator: "\n").write(toFile: many, atomically: false, encoding: .utf8)
        let partTokens = work + "/part-tokens"
        let part = try vote([
            "voter", "authorize", "--place", "1", "--from", many, "--tokens-out", partTokens, "--batch", "100",
        ])
        #expect(part.status == 1 && part.err.split(separator: "\n").count == 1, "\(part.err)")
        if part.err.contains("no voter was authorised") {
            #expect(!FileManager.default.fileExists(atPath: partTokens))
        } else {
            #expect(
                part.err.contains("were authorised and \(partTokens) lists their tokens; lines from"), "\(part.err)")
            let listed = try String(contentsOfFile: partTokens, encoding: .utf8).split(separator: "\n")
            #expect(
                part.err.contains("; \(listed.count) voters of lines before \(listed.count + 1) were authorised"),
                "\(part.err)")
            let last = work + "/last-token"
            try String(listed.last!.split(separator: ",")[1]).write(toFile: last, atomically: false, encoding: .utf8)
            let status = try vote(["status", "--place", "1", "--token-file", last])
            #expect(status.out == "not voted\n", "\(status.err)")
        }

        // Space is back: the next command works and the ledger still verifies.
        #expect(shell("mount -o remount,size=8m '\(mountPoint)'").0 == 0)
        #expect(try vote(["candidate", "register", "--place", "1", "--name", "After"]).status == 0)
        #expect(try vote(["verify"]).status == 0)
    }
}
