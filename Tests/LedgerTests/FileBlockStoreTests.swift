import FileStore
import Foundation
import Ledger
import LedgerCrypto
import LedgerTestSupport
import TestSupport
import Testing

/// The file store on real files: round trips, recovery from torn tails, tamper detection, clear errors.
@Suite struct FileBlockStoreTests {
    // MARK: Round trips

    /// Appended blocks survive a reopen and verify; the head, tree and timestamps are what was appended.
    @Test func appendReopenVerify() throws {
        let temp = TemporaryDirectory()
        let path = temp.child("ledger")
        let ledger = try Fixture.ledger(at: path, blocks: 5)
        let head = ledger.head
        #expect(head.height == 5)
        #expect(head.treeSize == 16)
        ledger.close()

        let reopened = try FileBlockStore.open(at: path, log: { _ in })
        #expect(reopened.head == head)
        #expect(reopened.headHash == head.hash)
        let report = try ChainVerifier.verify(FileBlockSource(path: path))
        #expect(report.blocks == 6)
        #expect(report.events == 16)
        #expect(report.headHash == head.hash)
        #expect(report.treeRoot == head.treeRoot)
        #expect(report.tornTail == nil)
        #expect(report.bytes == UInt64(Bytes.read(LedgerDirectory(path).segmentPath(0)).count))
    }

    /// A block time earlier than the previous block's is raised to it: timestamps never go backwards.
    @Test func timestampsNeverGoBackwards() throws {
        let temp = TemporaryDirectory()
        let ledger = try Fixture.ledger(at: temp.child("ledger"), blocks: 2)
        let before = ledger.head.timestamp
        let header = try ledger.append(Fixture.events(1), timestamp: before - 60_000)
        #expect(header.timestamp == before)
    }

    /// Segments rotate at the size limit, and a ledger spread over many segments reopens and verifies.
    @Test func segmentsRotate() throws {
        let temp = TemporaryDirectory()
        let path = temp.child("ledger")
        let ledger = try Fixture.ledger(at: path, blocks: 20, segmentLimit: 1_000)
        let segments = try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(".vlseg") }
        #expect(segments.count > 5)
        let head = ledger.head
        ledger.close()
        let reopened = try FileBlockStore.open(at: path, segmentLimit: 1_000, log: { _ in })
        #expect(reopened.head == head)
        try reopened.append(Fixture.events(2, from: 1000), timestamp: Fixture.epoch + 99_000)
        #expect(try ChainVerifier.verify(FileBlockSource(path: path)).blocks == 22)
    }

    /// Missing, short or garbage index files are rebuilt from the log, byte for byte.
    @Test func indexesAreRebuiltFromTheLog() throws {
        let temp = TemporaryDirectory()
        let path = temp.child("ledger")
        let directory = LedgerDirectory(path)
        try Fixture.ledger(at: path, blocks: 6, segmentLimit: 800).close()
        let blocks = Bytes.read(directory.blockIndexPath)
        let leaves = Bytes.read(directory.leafIndexPath)
        #expect(leaves.count == 19 * 32)

        let damages: [(String, () -> Void)] = [
            (
                "all removed",
                {
                    for file in [directory.blockIndexPath, directory.leafIndexPath, directory.frontierPath] {
                        try? FileManager.default.removeItem(atPath: file)
                    }
                }
            ),
            ("leaves short", { Bytes.truncate(directory.leafIndexPath, to: 5 * 32 + 7) }),
            ("blocks short", { Bytes.truncate(directory.blockIndexPath, to: 2 * 32) }),
            ("frontier garbage", { Bytes.write(directory.frontierPath, [UInt8](repeating: 7, count: 72)) }),
            (
                "leaf hash wrong",
                {
                    var bytes = Bytes.read(directory.leafIndexPath)
                    bytes[40] ^= 0xff
                    Bytes.write(directory.leafIndexPath, bytes)
                    try? FileManager.default.removeItem(atPath: directory.frontierPath)
                }
            ),
        ]
        for (name, damage) in damages {
            damage()
            let ledger = try FileBlockStore.open(at: path, segmentLimit: 800, log: { _ in })
            #expect(ledger.head.height == 6, "\(name)")
            ledger.close()
            #expect(Bytes.read(directory.blockIndexPath) == blocks, "\(name)")
            #expect(Bytes.read(directory.leafIndexPath) == leaves, "\(name)")
        }
    }

    // MARK: Crash recovery

    /// Cutting the log at every byte inside the last block: reopening drops exactly that block (saying
    /// how many bytes), and appends after it verify.
    @Test func truncatedTailIsCutOffAtEveryOffset() throws {
        let temp = TemporaryDirectory()
        let original = temp.child("original")
        try Fixture.ledger(at: original, blocks: 4).close()
        let last = try #require(try blockLocations(original).last)
        let segment = LedgerDirectory.segmentName(last.segment)
        for cut in last.offset..<last.offset + last.length {
            let copy = temp.child("cut-\(cut)")
            try copyLedger(original, to: copy)
            Bytes.truncate(copy + "/" + segment, to: Int(cut))
            let log = LogLines()
            let ledger = try FileBlockStore.open(at: copy, log: log.append)
            #expect(ledger.head.height == 3, "cut at \(cut)")
            let dropped = cut - last.offset
            if dropped > 0 {
                #expect(
                    log.lines == ["recovered: dropped \(dropped) bytes of an incomplete block at the end of \(segment)"]
                )
            } else {
                #expect(log.lines.isEmpty)
            }
            #expect(Bytes.read(copy + "/" + segment).count == Int(last.offset))
            try ledger.append(Fixture.events(2, from: 500), timestamp: Fixture.epoch + 10_000)
            ledger.close()
            let report = try ChainVerifier.verify(FileBlockSource(path: copy))
            #expect(report.blocks == 5 && report.events == 12, "cut at \(cut)")
            try FileManager.default.removeItem(atPath: copy)
        }
    }

    /// A torn last frame with garbage after a correct prefix (not just a short file) is also a torn tail.
    @Test func tornTailWithGarbageIsCutOff() throws {
        let temp = TemporaryDirectory()
        let path = temp.child("ledger")
        try Fixture.ledger(at: path, blocks: 3).close()
        let last = try #require(try blockLocations(path).last)
        let segmentPath = LedgerDirectory(path).segmentPath(0)
        var bytes = Bytes.read(segmentPath)
        for index in Int(last.offset) + 40..<bytes.count { bytes[index] = 0 }
        Bytes.write(segmentPath, bytes)

        let report = try ChainVerifier.verify(FileBlockSource(path: path))
        #expect(report.blocks == 3)
        #expect(report.tornTail?.bytes == last.length)
        let log = LogLines()
        let ledger = try FileBlockStore.open(at: path, log: log.append)
        #expect(ledger.head.height == 2)
        #expect(log.lines.count == 1)
    }

    /// A payload is opaque and may hold bytes that form a valid frame: here a copy of an earlier signed block
    /// of this ledger, and a decodable block of this ledger at a greater height signed by another key. Cut at
    /// every byte of the block holding them, the log ends in a torn tail for readers, the verifier and the
    /// writer alike (FORMAT.md §6), never in damage; whole, the block verifies.
    @Test func framesInsidePayloadsNeverTurnATornTailIntoDamage() throws {
        let temp = TemporaryDirectory()
        let original = temp.child("original")
        let ledger = try Fixture.ledger(at: original, blocks: 3)
        let segment = LedgerDirectory.segmentName(0)
        let earlier = try blockLocations(original)[2]
        let copied = Array(
            Bytes.read(original + "/" + segment)[Int(earlier.offset)..<Int(earlier.offset + earlier.length)])
        let header = BlockHeader(
            eventCount: 1, height: 9, timestamp: Fixture.epoch + 9000, treeSize: 30, ledgerID: Fixture.ledgerID,
            previousHash: .zero, treeRoot: .zero)
        let forged = Block(
            header: header, signature: try Ed25519PrivateKey().signature(for: header.hash.bytes),
            events: Fixture.events(1, from: 900)
        ).encoded
        var frame = Array("VLBK".utf8)
        withUnsafeBytes(of: UInt32(forged.count).bigEndian) { frame += $0 }
        withUnsafeBytes(of: CRC32C.checksum(forged).bigEndian) { frame += $0 }
        frame += forged
        try ledger.append(
            [LedgerEvent(type: 0x0100, payload: copied), LedgerEvent(type: 0x0100, payload: frame)] + Fixture.events(1),
            timestamp: Fixture.epoch + 4000)
        ledger.close()
        #expect(try ChainVerifier.verify(FileBlockSource(path: original)).blocks == 5)

        let last = try #require(try blockLocations(original).last)
        for cut in last.offset..<last.offset + last.length {
            let copy = temp.child("cut-\(cut)")
            try copyLedger(original, to: copy)
            Bytes.truncate(copy + "/" + segment, to: Int(cut))
            let report = try ChainVerifier.verify(FileBlockSource(path: copy))
            #expect(
                report.blocks == 4 && report.tornTail?.offset == (cut > last.offset ? last.offset : nil),
                "cut at \(cut)")
            #expect(
                try FileBlockSource(path: copy).forEachBlock { _, _ in }?.bytes ?? 0 == cut - last.offset,
                "cut at \(cut)")
            let reopened = try FileBlockStore.open(at: copy, log: { _ in })
            #expect(reopened.head.height == 3, "cut at \(cut)")
            reopened.close()
            try FileManager.default.removeItem(atPath: copy)
        }

        // Damage before that block is still damage: the intact signed block after it is the evidence.
        let before = try blockLocations(original)[3]
        var bytes = Bytes.read(original + "/" + segment)
        bytes[Int(before.offset) + 50] ^= 0x01
        Bytes.write(original + "/" + segment, bytes)
        let damage = LedgerError.damaged(
            height: 3, file: segment, offset: before.offset, reason: "frame checksum mismatch")
        #expect(ledgerError { _ = try ChainVerifier.verify(FileBlockSource(path: original)) } == damage)
        // A writer that has to scan it (its index gone) refuses it.
        try FileManager.default.removeItem(atPath: LedgerDirectory(original).blockIndexPath)
        #expect(ledgerError { _ = try FileBlockStore.open(at: original, log: { _ in }) } == damage)
    }

    /// A new segment whose header never fully reached the disk is removed on open.
    @Test func tornSegmentCreationIsRemoved() throws {
        let temp = TemporaryDirectory()
        let path = temp.child("ledger")
        try Fixture.ledger(at: path, blocks: 3).close()
        let torn = LedgerDirectory(path).segmentPath(1)
        Bytes.write(torn, Array("VOTEL".utf8))
        let log = LogLines()
        let ledger = try FileBlockStore.open(at: path, log: log.append)
        #expect(ledger.head.height == 3)
        #expect(!FileManager.default.fileExists(atPath: torn))
        #expect(log.lines.first?.contains("incomplete new segment") == true)
    }

    // MARK: Tampering

    /// Flipping any one byte of a middle block (frame header, block header, signature, events) makes
    /// verification fail, naming exactly that block.
    @Test func flippedByteInMiddleBlockIsReported() throws {
        let temp = TemporaryDirectory()
        let original = temp.child("original")
        try Fixture.ledger(at: original, blocks: 5).close()
        let target = try blockLocations(original)[3]
        let segmentPath = LedgerDirectory(original).segmentPath(0)
        let pristine = Bytes.read(segmentPath)
        #expect(target.length >= 64)
        for position in target.offset..<target.offset + target.length {
            var bytes = pristine
            bytes[Int(position)] ^= 0x20
            Bytes.write(segmentPath, bytes)
            let error = ledgerError { _ = try ChainVerifier.verify(FileBlockSource(path: original)) }
            guard case .damaged(let height, let file, let offset, _) = error else {
                Issue.record("byte \(position): \(String(describing: error))")
                continue
            }
            #expect(height == 3 && file == "segment-00000000.vlseg" && offset == target.offset, "byte \(position)")
        }
        Bytes.write(segmentPath, pristine)
        #expect(try ChainVerifier.verify(FileBlockSource(path: original)).blocks == 6)
    }

    /// A forger who also fixes the frame checksum is caught by the chain checks, each with its reason.
    @Test func forgedBlockWithValidChecksumIsReported() throws {
        let temp = TemporaryDirectory()
        let path = temp.child("ledger")
        try Fixture.ledger(at: path, blocks: 5).close()
        let target = try blockLocations(path)[3]
        let segmentPath = LedgerDirectory(path).segmentPath(0)
        let pristine = Bytes.read(segmentPath)
        let blockStart = Int(target.offset) + 12
        let blockEnd = Int(target.offset + target.length)

        func forge(_ position: Int) -> LedgerError? {
            var bytes = pristine
            bytes[position] ^= 0x01
            let checksum = CRC32C.checksum(Array(bytes[blockStart..<blockEnd]))
            withUnsafeBytes(of: checksum.bigEndian) { for i in 0..<4 { bytes[Int(target.offset) + 8 + i] = $0[i] } }
            Bytes.write(segmentPath, bytes)
            return ledgerError { _ = try ChainVerifier.verify(FileBlockSource(path: path)) }
        }
        func reason(_ position: Int) -> String? {
            guard case .damaged(let height, _, _, let reason) = forge(position), height == 3 else { return nil }
            return reason
        }
        // Header fields: version, height, time, tree size, ledger id, previous hash, root.
        #expect(reason(blockStart + 1)?.contains("unknown format version") == true)
        #expect(reason(blockStart + 15) == "height is 2, expected 3")
        #expect(reason(blockStart + 23) == "signature invalid")
        #expect(reason(blockStart + 31) == "tree size is 11, expected 10")
        #expect(reason(blockStart + 40)?.hasPrefix("belongs to another ledger") == true)
        #expect(reason(blockStart + 50) == "previous header hash mismatch")
        #expect(reason(blockStart + 90) == "tree root mismatch")
        for position in blockStart + 112..<blockStart + 176 { #expect(reason(position) == "signature invalid") }
        // Each event is a 4-byte length, a 2-byte type and 24 payload bytes: change payload bytes.
        for event in 0..<3 {
            let payload = blockStart + 176 + event * 30 + 6
            for position in payload..<payload + 24 { #expect(reason(position) == "tree root mismatch") }
        }
        #expect(reason(blockStart + 176 + 1)?.hasPrefix("event 0: truncated") == true)
        #expect(reason(blockStart + 176 + 4) == "event type 0 is reserved for the ledger")
        Bytes.write(segmentPath, pristine)
    }

    /// Damage before the tail is never repaired: a writer that has to scan it refuses to open.
    @Test func writerRefusesDamageBeforeTheTail() throws {
        let temp = TemporaryDirectory()
        let path = temp.child("ledger")
        try Fixture.ledger(at: path, blocks: 5).close()
        let target = try blockLocations(path)[2]
        let directory = LedgerDirectory(path)
        var bytes = Bytes.read(directory.segmentPath(0))
        bytes[Int(target.offset) + 100] ^= 0x01
        Bytes.write(directory.segmentPath(0), bytes)
        try FileManager.default.removeItem(atPath: directory.blockIndexPath)
        let error = ledgerError { _ = try FileBlockStore.open(at: path, log: { _ in }) }
        #expect(
            error
                == .damaged(
                    height: 2, file: "segment-00000000.vlseg", offset: target.offset, reason: "frame checksum mismatch")
        )
        #expect(
            error?.description
                == "block 2: frame checksum mismatch (segment-00000000.vlseg, byte offset \(target.offset))")
        #expect(Bytes.read(directory.segmentPath(0)) == bytes)
    }

    // MARK: Clear errors

    /// Paths that are not ledgers fail with a message saying why.
    @Test func notALedger() throws {
        let temp = TemporaryDirectory()
        let empty = temp.child("empty")
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: false)
        let file = temp.child("file")
        Bytes.write(file, [1, 2, 3])
        let garbage = temp.child("garbage")
        try FileManager.default.createDirectory(atPath: garbage, withIntermediateDirectories: false)
        Bytes.write(garbage + "/segment-00000000.vlseg", Array(repeating: 0x41, count: 400))

        let cases: [(String, String)] = [
            (temp.child("missing"), "no such directory"), (file, "it is not a directory"),
            (empty, "no segment files"), (garbage, "not a ledger segment (bad magic)"),
        ]
        for (path, expected) in cases {
            for open in [
                { _ = try FileBlockSource(path: path) }, { _ = try FileBlockStore.open(at: path, log: { _ in }) },
            ] {
                let error = ledgerError(open)
                #expect(error?.description.hasPrefix(path) == true, "\(path)")
                #expect(error?.description.contains(": not a ledger: ") == true, "\(path)")
                #expect(error?.description.contains(expected) == true, "\(String(describing: error))")
            }
        }
    }

    /// A segment of a newer format version is refused with the version named, not misread.
    @Test func unknownFormatVersion() throws {
        let temp = TemporaryDirectory()
        let path = temp.child("ledger")
        try Fixture.ledger(at: path, blocks: 1).close()
        let segmentPath = LedgerDirectory(path).segmentPath(0)
        var bytes = Bytes.read(segmentPath)
        bytes[9] = 2
        Bytes.write(segmentPath, bytes)
        let error = ledgerError { _ = try ChainVerifier.verify(FileBlockSource(path: path)) }
        #expect(error?.description.contains("unknown format version 2 (this build reads version 1)") == true)
    }

    /// The authority key: missing, readable by others, the wrong key, or a wrong passphrase each refuse
    /// writing with a clear message; verification needs no key.
    @Test func authorityKeyProblems() throws {
        let temp = TemporaryDirectory()
        let path = temp.child("ledger")
        let directory = KeyDirectory(defaultFor: path)
        try Fixture.ledger(at: path, blocks: 1).close()
        let pem = Bytes.read(directory.privateKeyPath)

        try FileManager.default.removeItem(atPath: directory.privateKeyPath)
        #expect(ledgerError { _ = try FileBlockStore.open(at: path) }?.description.contains("is missing") == true)
        #expect(try ChainVerifier.verify(FileBlockSource(path: path)).blocks == 2)

        Bytes.write(directory.privateKeyPath, pem)
        chmod(directory.privateKeyPath, 0o644)
        #expect(
            ledgerError { _ = try FileBlockStore.open(at: path) }?.description.contains(
                "accessible by others (mode 644)")
                == true)

        let other = try Ed25519PrivateKey().pem()
        Bytes.write(directory.privateKeyPath, Array(other.utf8))
        chmod(directory.privateKeyPath, 0o600)
        #expect(
            ledgerError { _ = try FileBlockStore.open(at: path) }?.description.contains(
                "not the key this ledger was created with") == true)

        let secret = temp.child("secret")
        let passphrase = Array("correct horse".utf8)
        try FileBlockStore.create(
            at: secret, name: "secret", authority: Fixture.key, passphrase: passphrase, ledgerID: Fixture.ledgerID,
            timestamp: Fixture.epoch, log: { _ in }
        ).close()
        let wrong = ledgerError { _ = try FileBlockStore.open(at: secret, passphrase: Array("wrong".utf8)) }
        #expect(wrong?.description.contains("passphrase does not decrypt") == true)
        #expect(wrong?.description.contains("wrong") == false)
        #expect(
            ledgerError { _ = try FileBlockStore.open(at: secret) }?.description.contains("needs its passphrase")
                == true)
        #expect(try FileBlockStore.open(at: secret, passphrase: passphrase).head.height == 0)
    }

    /// Creating over a non-empty directory or a file refuses and leaves them alone.
    @Test func createRefusesExistingContent() throws {
        let temp = TemporaryDirectory()
        let path = temp.child("ledger")
        try Fixture.ledger(at: path, blocks: 1).close()
        let before = Bytes.read(LedgerDirectory(path).segmentPath(0))
        let error = ledgerError {
            _ = try FileBlockStore.create(
                at: path, name: "again", authority: Fixture.key, ledgerID: Fixture.ledgerID, timestamp: 0)
        }
        #expect(error?.description == "\(path) already exists and is not empty")
        #expect(Bytes.read(LedgerDirectory(path).segmentPath(0)) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: temp.path).sorted() == ["ledger", "ledger.keys"])
    }

    /// Requests the format forbids are refused before anything is written.
    @Test func invalidAppendsWriteNothing() throws {
        let temp = TemporaryDirectory()
        let path = temp.child("ledger")
        let ledger = try Fixture.ledger(at: path, blocks: 1)
        let before = Bytes.read(LedgerDirectory(path).segmentPath(0))
        let requests: [[LedgerEvent]] = [
            [], [LedgerEvent(type: 0x0001, payload: [1])],
            [LedgerEvent(type: 0x0100, payload: [UInt8](repeating: 0, count: LedgerFormat.maxEventSize))],
        ]
        for events in requests {
            guard case .invalidRequest = ledgerError({ try ledger.append(events, timestamp: Fixture.epoch) }) else {
                Issue.record("expected invalidRequest for \(events.count) events")
                continue
            }
        }
        #expect(Bytes.read(LedgerDirectory(path).segmentPath(0)) == before)
        #expect(ledger.head.height == 1)
    }

    /// A second writer in the same process is refused as busy after its timeout, naming the holder.
    @Test func secondWriterIsBusy() throws {
        let temp = TemporaryDirectory()
        let path = temp.child("ledger")
        let first = try Fixture.ledger(at: path, blocks: 1)
        let started = ContinuousClock.now
        let error = ledgerError { _ = try FileBlockStore.open(at: path, lockTimeout: 0.3, log: { _ in }) }
        #expect(ContinuousClock.now - started >= .milliseconds(300))
        #expect(error == .busy(pid: getpid()))
        #expect(error?.description == "ledger is in use by process \(getpid())")
        first.close()
        #expect(try FileBlockStore.open(at: path, lockTimeout: 0.3, log: { _ in }).head.height == 1)
    }
}
