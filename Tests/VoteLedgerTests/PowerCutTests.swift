import Election
import FileDriver
import FileStore
import Foundation
import Ledger
import LedgerCrypto
import TestSupport
import Testing

@testable import VoteLedger

/// The real store on a simulated disk that loses power, or fails, at a chosen operation (as SQLite tests
/// its commit logic). After every cut the ledger must reopen, verify, keep every acknowledged block, hold no
/// partly written block, and count exactly the acknowledged votes (plus the in-flight batch only if its
/// block survived whole).
@Suite struct PowerCutTests {
    static let t0 = ServiceTests.t0

    /// What the workload had been told was durable when the power went.
    struct Acknowledged {
        var height: UInt64 = 0
        var votes: UInt64 = 0
        /// Votes of the batch being written when the cut came (nil if none).
        var inFlight: UInt64?
        var certified = false
    }

    /// A ledger with a place (voting open at t0+1000), two candidates and `voters` authorised voters,
    /// built on the real disk; returns its path and the tokens.
    static func base(voters: Int) throws -> (String, [Digest]) {
        let path = NSTemporaryDirectory() + "powercut-base-\(UUID().uuidString)"
        let (ledger, tokens) = try ServiceTests.election(at: path, voters: voters, votes: 0)
        ledger.close()
        return (path, tokens.map(\.hash))
    }

    /// Opens the copy at `path` on `disk` and casts `batches` batches of `perBatch` votes, then (if
    /// `certify`) certifies the results, recording what was acknowledged until the disk gives out.
    static func workload(
        path: String, tokens: [Digest], disk: SimulatedDisk, batches: Int, perBatch: Int, certify: Bool
    )
        -> Acknowledged
    {
        var acked = Acknowledged()
        // What was durable before this run (the base ledger, built on the real disk).
        acked.height = (try? FileBlockSource(path: path).lastBlock().height) ?? 0
        guard
            let ledger = try? VoteLedgerService.openLedger(
                StoreConfiguration(.file(path: path, io: disk), log: { _ in }))
        else {
            return acked
        }
        defer { ledger.close() }
        for batch in 0..<batches {
            let commands = (0..<perBatch).map { offset -> Command in
                let voter = batch * perBatch + offset
                return .castVote(place: 1, candidate: UInt32(voter % 2 + 1), tokenHash: tokens[voter])
            }
            acked.inFlight = UInt64(perBatch)
            guard let outcome = try? ledger.submit(commands, now: t0 + 2000 + Int64(batch)), let header = outcome.header
            else {
                return acked
            }
            acked.inFlight = nil
            acked.height = header.height
            acked.votes += UInt64(outcome.accepted)
        }
        if certify {
            acked.inFlight = 0
            guard
                (try? ledger.submit(.certifyResults(place: 1, treeSize: ledger.head.treeSize), now: t0 + 100_000))
                    != nil
            else { return acked }
            acked.inFlight = nil
            acked.height += 1
            acked.certified = true
        }
        return acked
    }

    /// Counts the torn tails recovery cut off, to show the cuts really tore blocks.
    final class Recoveries: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        var value: Int { lock.withLock { count } }
        func log(_ line: String) { if line.hasPrefix("recovered:") { lock.withLock { count += 1 } } }
    }

    /// Reopens after the cut on the real disk and checks every promise; returns a failure description.
    static func check(_ path: String, _ acked: Acknowledged, _ label: String, recoveries: Recoveries) -> String? {
        do {
            let reopened = try VoteLedgerService.openLedger(StoreConfiguration(.file(path: path), log: recoveries.log))
            let head = reopened.head
            let voted = reopened.state.place(1).map(Projections.turnout)?.voted ?? 0
            let certified = reopened.state.place(1)?.certified != nil
            reopened.close()
            let report = try ElectionVerifier.verify(FileBlockSource(path: path))
            guard report.chain.height == head.height, report.chain.tornTail == nil else {
                return "\(label): verify disagrees"
            }
            guard head.height >= acked.height else {
                return "\(label): acknowledged block \(acked.height) lost (head \(head.height))"
            }
            let survived = head.height > acked.height
            let expected = acked.votes + (survived ? acked.inFlight ?? 0 : 0)
            guard voted == expected else { return "\(label): \(voted) votes counted, \(expected) acknowledged" }
            guard certified == (acked.certified || (survived && acked.inFlight == 0)) else {
                return "\(label): certification"
            }
            guard head.height <= acked.height + 1 else { return "\(label): blocks appeared from nowhere" }
            return nil
        } catch {
            return "\(label): \(error)"
        }
    }

    static func copy(_ base: String) throws -> String {
        let path = NSTemporaryDirectory() + "powercut-\(UUID().uuidString)"
        try FileManager.default.copyItem(atPath: base, toPath: path)
        try FileManager.default.copyItem(atPath: base + ".keys", toPath: path + ".keys")
        return path
    }

    /// Power cut at every operation of a small run, with each kind of aftermath.
    @Test func cutAtEveryOperation() throws {
        let (base, tokens) = try PowerCutTests.base(voters: 12)
        defer { removeLedger(base) }
        let counter = SimulatedDisk()
        let clean = try PowerCutTests.copy(base)
        let full = PowerCutTests.workload(
            path: clean, tokens: tokens, disk: counter, batches: 4, perBatch: 3, certify: true)
        removeLedger(clean)
        #expect(full.certified && full.votes == 12)
        let operations = counter.operations
        #expect(operations > 20)
        var failures: [String] = []
        var cases = 0
        let recoveries = Recoveries()
        for cut in 1...operations + 1 {
            for aftermath in SimulatedDisk.Aftermath.allCases {
                let path = try PowerCutTests.copy(base)
                let disk = SimulatedDisk(fault: .powerCut(at: cut), seed: UInt64(cut))
                let acked = PowerCutTests.workload(
                    path: path, tokens: tokens, disk: disk, batches: 4, perBatch: 3, certify: true)
                disk.applyPowerCut(aftermath)
                if let failure = PowerCutTests.check(
                    path, acked, "cut at \(cut) (\(aftermath))", recoveries: recoveries)
                {
                    failures.append(failure)
                }
                cases += 1
                removeLedger(path)
            }
        }
        #expect(failures.isEmpty, "\(failures.prefix(10))")
        #expect(cases == (operations + 1) * 3)
        #expect(recoveries.value > operations / 4, "torn tails recovered: \(recoveries.value) of \(cases) cuts")
        print(
            "power cut at every operation: \(operations) operations, \(cases) cuts, \(recoveries.value) torn tails recovered"
        )
    }

    /// Power cuts at 1,000 random operations of a larger run (group commits of 25 votes).
    @Test func cutAtRandomOperations() throws {
        let (base, tokens) = try PowerCutTests.base(voters: 500)
        defer { removeLedger(base) }
        let counter = SimulatedDisk()
        let clean = try PowerCutTests.copy(base)
        _ = PowerCutTests.workload(path: clean, tokens: tokens, disk: counter, batches: 20, perBatch: 25, certify: true)
        removeLedger(clean)
        var generator = SplitMix64(seed: 2026)
        var failures: [String] = []
        let recoveries = Recoveries()
        for round in 0..<1000 {
            let cut = Int(generator.next() % UInt64(counter.operations)) + 1
            let aftermath = SimulatedDisk.Aftermath.allCases[Int(generator.next() % 3)]
            let path = try PowerCutTests.copy(base)
            let disk = SimulatedDisk(fault: .powerCut(at: cut), seed: generator.next())
            let acked = PowerCutTests.workload(
                path: path, tokens: tokens, disk: disk, batches: 20, perBatch: 25, certify: true)
            disk.applyPowerCut(aftermath)
            if let failure = PowerCutTests.check(
                path, acked, "round \(round), cut at \(cut) (\(aftermath))", recoveries: recoveries)
            {
                failures.append(failure)
            }
            removeLedger(path)
        }
        #expect(failures.isEmpty, "\(failures.prefix(10))")
        #expect(recoveries.value > 100, "torn tails recovered: \(recoveries.value) of 1000 cuts")
        print(
            "power cut at random operations: 1000 cuts over \(counter.operations) operations, \(recoveries.value) torn tails recovered"
        )
    }

    /// A pledge whose bytes, with the name before it and the next event's length after it, form a complete
    /// frame with a valid checksum (the name ends in "VLBK", the pledge's length field is the frame length,
    /// its first four characters the checksum): all printable text that the rules accept. Power lost at
    /// every byte of the write of the block holding it leaves that block whole or a torn tail that reopening
    /// drops, never damage (FORMAT.md §6).
    @Test func pledgeHoldingAFrameSurvivesACutAtEveryByte() throws {
        let t0 = PowerCutTests.t0
        let base = NSTemporaryDirectory() + "powercut-pledge-\(UUID().uuidString)"
        defer { removeLedger(base) }
        let ledger = try VoteLedgerService.create(StoreConfiguration(.file(path: base)), name: "pledge test", now: t0)
        _ = try ledger.submit(
            .createPlace(
                name: "Board", description: "", registration: TimeWindow(start: t0, end: t0 + 1000),
                voting: TimeWindow(start: t0 + 1000, end: t0 + 2000), maxCandidates: nil), now: t0)
        // The 268-byte frame body is the pledge after its first 4 bytes, then the next event's length field.
        let next = ElectionEvent.candidateRegistered(place: 1, candidate: 2, name: "Bob", pledge: "").ledgerEvent
        var lengthField: [UInt8] = []
        withUnsafeBytes(of: UInt32(2 + next.payload.count).bigEndian) { lengthField += $0 }
        var generator = SplitMix64(seed: 268)
        var pledge: [UInt8] = []
        while pledge.isEmpty {
            let body = (0..<264).map { _ in UInt8(0x21 + generator.next() % 94) }
            let checksum = withUnsafeBytes(of: CRC32C.checksum(body + lengthField).bigEndian) { Array($0) }
            if checksum.allSatisfy({ (0x20...0x7E).contains($0) }) { pledge = checksum + body }
        }
        let outcome = try ledger.submit(
            [
                .registerCandidate(place: 1, name: "Ann VLBK", pledge: String(decoding: pledge, as: UTF8.self)),
                .registerCandidate(place: 1, name: "Bob", pledge: ""),
            ], now: t0 + 1)
        #expect(outcome.accepted == 2)
        ledger.close()

        let reader = try FileBlockSource(path: base)
        var last: (bytes: [UInt8], location: BlockLocation)?
        try reader.forEachBlock { raw, location in last = (raw, location) }
        let (block, location) = try #require(last)
        // Block 1 is the voter secret commitment, block 2 the place, block 3 the candidates.
        #expect(try Block(decoding: block).header.height == 3)
        // The frame really is there, and valid.
        let marker = try #require(
            block.indices.first { Array(block[$0..<min($0 + 4, block.count)]) == Array("VLBK".utf8) })
        let length = Int(block[marker + 4..<marker + 8].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        #expect(length == 268 && marker + 12 + length <= block.count)
        #expect(
            CRC32C.checksum(Array(block[marker + 12..<marker + 12 + length]))
                == block[marker + 8..<marker + 12].reduce(UInt32(0)) { $0 << 8 | UInt32($1) })

        let segment = "/" + LedgerDirectory.segmentName(location.segment)
        var failures: [String] = []
        for cut in location.offset...location.offset + location.length {
            let path = try PowerCutTests.copy(base)
            defer { removeLedger(path) }
            guard truncate(path + segment, off_t(cut)) == 0 else { throw LedgerError.io("truncate failed") }
            do {
                let report = try ElectionVerifier.verify(FileBlockSource(path: path))
                let whole = cut == location.offset + location.length
                guard report.chain.height == (whole ? 3 : 2),
                    (report.chain.tornTail != nil) == (cut > location.offset && !whole)
                else { throw LedgerError.io("verify saw height \(report.chain.height)") }
                let reopened = try VoteLedgerService.openLedger(StoreConfiguration(.file(path: path), log: { _ in }))
                let candidates = reopened.state.place(1)?.candidates.count
                reopened.close()
                guard reopened.head.height == (whole ? 3 : 2), candidates == (whole ? 2 : 0) else {
                    throw LedgerError.io(
                        "reopened at height \(reopened.head.height) with \(candidates ?? -1) candidates")
                }
                _ = try ElectionVerifier.verify(FileBlockSource(path: path))
            } catch {
                failures.append("cut at \(cut): \(error)")
            }
        }
        #expect(failures.isEmpty, "\(failures.prefix(5))")
    }

    /// ENOSPC or EIO on any write or sync: the command fails with a clear message (a full disk as `.noSpace`),
    /// nothing is acknowledged, and once space is back the same writer, never reopened, takes the command
    /// again: the failed write's remains are cut off and its memory agrees with the disk. Reopened, the ledger
    /// ends where the writer did, verifies, and counts exactly the acknowledged votes.
    @Test func diskErrorsAreReportedAndRecovered() throws {
        let (base, tokens) = try PowerCutTests.base(voters: 12)
        defer { removeLedger(base) }
        let counter = SimulatedDisk()
        let clean = try PowerCutTests.copy(base)
        _ = PowerCutTests.workload(path: clean, tokens: tokens, disk: counter, batches: 4, perBatch: 3, certify: false)
        removeLedger(clean)
        var failures: [String] = []
        var reported = 0
        for code in [ENOSPC, EIO] {
            for at in 1...counter.operations {
                let path = try PowerCutTests.copy(base)
                defer { removeLedger(path) }
                let disk = SimulatedDisk(fault: .failure(at: at, errno: code))
                // Index writes are derived data: a failure there is logged, not reported, so some operations
                // fail silently by design. Data writes and syncs must be reported, clearly.
                func check(_ error: any Error) {
                    reported += 1
                    let error = VoteError(error)
                    if !error.message.contains(String(cString: strerror(code))) {
                        failures.append("op \(at): unclear message \(error.message)")
                    }
                    if (error.reason == .noSpace) != (code == ENOSPC) {
                        failures.append("op \(at) (\(code)): reason \(error.reason)")
                    }
                }
                var head: BlockHeader?
                do {
                    let ledger: ElectionLedger
                    do {
                        ledger = try VoteLedgerService.openLedger(
                            StoreConfiguration(.file(path: path, io: disk), log: { _ in }))
                    } catch {
                        check(error)
                        ledger = try VoteLedgerService.openLedger(
                            StoreConfiguration(.file(path: path, io: disk), log: { _ in }))
                    }
                    for batch in 0..<4 {
                        let commands = (0..<3).map {
                            Command.castVote(place: 1, candidate: 1, tokenHash: tokens[batch * 3 + $0])
                        }
                        let now = PowerCutTests.t0 + 2000 + Int64(batch)
                        let outcome: BatchOutcome
                        do { outcome = try ledger.submit(commands, now: now) } catch {
                            check(error)
                            // Space is back: the same writer takes the same batch.
                            outcome = try ledger.submit(commands, now: now)
                        }
                        if outcome.accepted != 3 { failures.append("op \(at): batch \(batch) accepted \(outcome)") }
                    }
                    head = ledger.head
                    ledger.close()
                } catch {
                    failures.append("op \(at) (\(code)): the writer did not recover: \(error)")
                }
                do {
                    let ledger = try VoteLedgerService.openLedger(StoreConfiguration(.file(path: path), log: { _ in }))
                    let voted = ledger.state.place(1).map(Projections.turnout)?.voted ?? 0
                    if let head, ledger.head != head {
                        failures.append(
                            "op \(at): reopened at block \(ledger.head.height), the writer was at \(head.height)")
                    }
                    ledger.close()
                    _ = try ElectionVerifier.verify(FileBlockSource(path: path))
                    if voted != 12 { failures.append("op \(at): \(voted) votes counted, 12 acknowledged") }
                } catch {
                    failures.append("op \(at) (\(code)): after space is back: \(error)")
                }
            }
        }
        #expect(reported > 0)
        #expect(failures.isEmpty, "\(failures.prefix(10))")
    }
}
