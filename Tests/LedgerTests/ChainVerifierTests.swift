import Foundation
import LedgerTestSupport
import TestSupport
import Testing

@testable import FileStore
@testable import Ledger
@testable import LedgerCrypto

/// The fast verification path held to the straightforward one: CRC-32C in hardware and in Swift, blocks
/// decoded in place and copied, and the verifier (with and without an observer on a second thread) against
/// a reference verifier on every byte flip of a small ledger.
@Suite struct ChainVerifierTests {
    // MARK: CRC-32C

    /// The RFC 3720 §B.4 vectors and the standard check value, on every path this CPU has.
    @Test func crcVectorsOnEveryPath() {
        let vectors: [([UInt8], UInt32)] = [
            (Array("123456789".utf8), 0xE306_9283), ([UInt8](repeating: 0x00, count: 32), 0x8A91_36AA),
            ([UInt8](repeating: 0xFF, count: 32), 0x62A8_AB43), (Array(0...31), 0x46DD_794E),
            (Array((0...31).reversed()), 0x113F_DB5C), ([], 0),
        ]
        for (bytes, expected) in vectors {
            bytes.withUnsafeBytes { raw in
                #expect(CRC32C.checksum(raw) == expected)
                #expect(CRC32C.portableChecksum(raw) == expected)
                if HardwareCRC32C.isAvailable {
                    #expect(HardwareCRC32C.update(0xFFFF_FFFF, raw) ^ 0xFFFF_FFFF == expected)
                }
            }
        }
    }

    /// Hardware and slicing-by-8 agree for every length 0..<80 at every alignment 0..<8, and on long runs,
    /// also when the hardware CRC is continued piece by piece.
    @Test func crcPathsAgree() {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        let buffer: [UInt8] = (0..<70_000).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 56)
        }
        buffer.withUnsafeBytes { raw in
            for offset in 0..<8 {
                for length in Array(0..<80) + [255, 256, 4097, 65_537, 69_990] {
                    let slice = UnsafeRawBufferPointer(rebasing: raw[offset..<offset + length])
                    let portable = CRC32C.portableChecksum(slice)
                    #expect(CRC32C.checksum(slice) == portable, "offset \(offset) length \(length)")
                    guard HardwareCRC32C.isAvailable else { continue }
                    let split = length / 3
                    let first = HardwareCRC32C.update(0xFFFF_FFFF, UnsafeRawBufferPointer(rebasing: slice[..<split]))
                    let whole = HardwareCRC32C.update(first, UnsafeRawBufferPointer(rebasing: slice[split...]))
                    #expect(whole ^ 0xFFFF_FFFF == portable, "offset \(offset) length \(length) in two pieces")
                }
            }
        }
    }

    // MARK: Decoding in place

    /// `EncodedBlock` accepts and refuses exactly what `Block(decoding:)` does, for every truncation and
    /// every byte flip of a block, and its events read in place are the decoded events.
    @Test func encodedBlockAgreesWithBlock() throws {
        let events = [
            LedgerEvent(type: 0x0100, payload: []), LedgerEvent(type: 0xFFFF, payload: [0x00, 0x7F, 0x80, 0xFF]),
            LedgerEvent(type: 0x0002, payload: (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 7) }),
        ]
        let header = BlockHeader(
            eventCount: 3, height: 7, timestamp: Fixture.epoch, treeSize: 12, ledgerID: Fixture.ledgerID,
            previousHash: SHA256.hash(Array("previous".utf8)), treeRoot: SHA256.hash(Array("root".utf8)))
        let block = Block(header: header, signature: (0..<64).map { UInt8($0) }, events: events)
        let bytes = block.encoded

        let encoded = try EncodedBlock(decoding: bytes)
        #expect(encoded.block == block)
        #expect(encoded.bytes == bytes)
        #expect(encoded.events.count == 3)
        for (event, original) in zip(encoded.events, events) {
            #expect(event.type == original.type)
            #expect(Array(event.payload) == original.payload)
            #expect(Array(event.encoded) == original.encoded)
            #expect(event.leafHash == original.leafHash)
            #expect(event.ledgerEvent == original)
            #expect(try ByteReader.reading(event.payload) { reader in reader.remaining } == original.payload.count)
        }
        let word = try ByteReader.reading(encoded.events[1].payload) { (reader) throws(DecodeError) in
            try reader.read(UInt16.self, "word")
        }
        #expect(word == 0x007F)

        var variants = (0..<bytes.count).map { Array(bytes[0..<$0]) }
        for position in bytes.indices {
            var flipped = bytes
            flipped[position] ^= 1 << (position % 8)
            variants.append(flipped)
        }
        variants.append(bytes + [0])
        for variant in variants {
            let reference = Result { () throws(DecodeError) in try Block(decoding: variant) }
            let inPlace = Result { () throws(DecodeError) in try EncodedBlock(decoding: variant).block }
            #expect(inPlace == reference, "\(variant.count) bytes")
        }
    }

    // MARK: Verification against the reference

    /// Flipping any bit of any segment file, with the frame checksum left stale or made to match, ends
    /// every kind of verification with the reference's outcome, and every observer sees the blocks the
    /// reference sees.
    @Test func agreesWithReferenceOnEveryByteFlip() throws {
        let temp = TemporaryDirectory()
        let path = temp.child("ledger")
        try Fixture.ledger(at: path, blocks: 4, perBlock: 2, segmentLimit: 700).close()
        let locations = try blockLocations(path)
        let directory = LedgerDirectory(path)
        let segments = Set(locations.map(\.segment)).sorted()
        #expect(segments.count >= 2)
        let clean = try Self.outcomes(path)
        #expect(clean.agree && clean.referenceBlocks.count == 5 && (try? clean.reference.get().events) == 9)

        for segment in segments {
            let segmentPath = directory.segmentPath(segment)
            let pristine = Bytes.read(segmentPath)
            for position in pristine.indices {
                var stale = pristine
                stale[position] ^= 1 << (position % 8)
                var variants = [stale]
                // Inside a block, also forgeries whose frame checksum matches, so that the block checks must
                // catch them: the lowest and highest bit (a type 0x0100 becomes reserved, a length absurd).
                let offset = UInt64(position)
                if let frame = locations.first(where: {
                    $0.segment == segment && offset >= $0.offset + 12 && offset < $0.offset + $0.length
                }) {
                    let block = Int(frame.offset) + 12..<Int(frame.offset + frame.length)
                    for mask: UInt8 in [0x01, 0x80] {
                        var forged = pristine
                        forged[position] ^= mask
                        let checksum = CRC32C.checksum(Array(forged[block]))
                        withUnsafeBytes(of: checksum.bigEndian) {
                            forged.replaceSubrange(block.lowerBound - 4..<block.lowerBound, with: $0)
                        }
                        variants.append(forged)
                    }
                }
                for variant in variants {
                    Bytes.write(segmentPath, variant)
                    let outcomes = try Self.outcomes(path)
                    #expect(outcomes.agree, "segment \(segment) byte \(position): \(outcomes)")
                }
            }
            Bytes.write(segmentPath, pristine)
        }
    }

    // MARK: Observers

    /// An observer sees exactly the blocks verified before the first damaged one, in order, and never
    /// that one; an error the observer throws wins over damage further on, and stops the pass.
    @Test func observerSeesOnlyVerifiedBlocks() throws {
        let temp = TemporaryDirectory()
        let path = temp.child("ledger")
        try Fixture.ledger(at: path, blocks: 6, perBlock: 3).close()
        let target = try blockLocations(path)[4]
        let segmentPath = LedgerDirectory(path).segmentPath(0)
        var bytes = Bytes.read(segmentPath)
        // A payload byte of block 4 with the checksum fixed: the frame is valid, the tree root is not.
        let block = Int(target.offset) + 12..<Int(target.offset + target.length)
        bytes[block.lowerBound + 176 + 10] ^= 0x01
        withUnsafeBytes(of: CRC32C.checksum(Array(bytes[block])).bigEndian) {
            bytes.replaceSubrange(block.lowerBound - 4..<block.lowerBound, with: $0)
        }
        Bytes.write(segmentPath, bytes)
        let damage = LedgerError.damaged(
            height: 4, file: "segment-00000000.vlseg", offset: target.offset, reason: "tree root mismatch")

        struct Stop: Error {}
        for inPlace in [true, false] {
            // Each way to observe: recording heights, and throwing at `stop` if given.
            func verify(stop: UInt64? = nil, _ heights: inout [UInt64]) throws {
                var seen: [UInt64] = []
                defer { heights = seen }
                func observe(_ height: UInt64) throws {
                    seen.append(height)
                    if height == stop { throw Stop() }
                }
                if inPlace {
                    _ = try ChainVerifier.verify(
                        FileBlockSource(path: path), eachBlock: { try observe($0.header.height) })
                } else {
                    _ = try ChainVerifier.verify(
                        FileBlockSource(path: path), onBlock: { try observe($0.header.height) })
                }
            }
            var heights: [UInt64] = []
            #expect(ledgerError { try verify(&heights) } == damage, "in place: \(inPlace)")
            #expect(heights == [0, 1, 2, 3], "in place: \(inPlace)")
            #expect(throws: Stop.self) { try verify(stop: 2, &heights) }
            #expect(heights == [0, 1, 2], "in place: \(inPlace)")
        }
    }

    // MARK: Any store

    /// The chain checks run over the memory store as over the file store: a chain written there verifies,
    /// and a flipped bit is found in the block that holds it, named by its height and its offset among the
    /// ledger's blocks, whether it breaks the tree root (an event) or the signature.
    @Test func verifiesAMemoryLedger() throws {
        /// A memory ledger holding 5 blocks after its genesis, and where each block lies in it.
        func ledger() throws -> (MemoryBlockSource, [BlockPlace]) {
            let ledger = try MemoryBlockSource(
                name: "memory", authority: Fixture.key, ledgerID: Fixture.ledgerID, timestamp: Fixture.epoch)
            let writer = try ledger.openWriter(authority: Fixture.key)
            for block in 0..<5 {
                try writer.append(Fixture.events(3, from: 3 * block), timestamp: Fixture.epoch + Int64(block) * 1000)
            }
            writer.close()
            var places: [BlockPlace] = []
            _ = try ledger.scanBlocks(from: 0) { _, place in
                places.append(place)
                return true
            }
            return (ledger, places)
        }
        let (intact, places) = try ledger()
        let report = try ChainVerifier.verify(intact)
        #expect(report.blocks == 6)
        #expect(report.events == 16)
        #expect(report.headHash == intact.lastBlock().hash)
        #expect(report.bytes == places.reduce(0) { $0 + $1.length })
        #expect(report.tornTail == nil)
        #expect(places.map(\.file) == Array(repeating: "memory", count: 6))
        #expect(places[3].offset == places[0...2].reduce(0) { $0 + $1.length })

        // The last payload byte of block 3, then the first signature byte of block 2.
        let (event, _) = try ledger()
        try event.tamper(height: 3, offset: Int(places[3].length) - 1, mask: 0x01)
        #expect(
            ledgerError { _ = try ChainVerifier.verify(event) }
                == .damaged(height: 3, file: "memory", offset: places[3].offset, reason: "tree root mismatch"))
        let (signature, _) = try ledger()
        try signature.tamper(height: 2, offset: LedgerFormat.headerSize, mask: 0x80)
        var observed: [UInt64] = []
        #expect(
            ledgerError { _ = try ChainVerifier.verify(signature, eachBlock: { observed.append($0.header.height) }) }
                == .damaged(height: 2, file: "memory", offset: places[2].offset, reason: "signature invalid"))
        #expect(observed == [0, 1])

        // Odd blocks' signatures are checked on the observing thread, the others on the checking thread one
        // block ahead; either way the first failure is the one reported, before its block is observed: a bad
        // signature in block 3 comes before damage in block 4, and one in block 4 after block 3 is observed.
        for (bad, damaged, expected) in [(3, 4, 3), (4, 5, 4), (1, 2, 1)] {
            let (ledger, _) = try ledger()
            try ledger.tamper(height: UInt64(bad), offset: LedgerFormat.headerSize, mask: 0x80)
            try ledger.tamper(height: UInt64(damaged), offset: Int(places[damaged].length) - 1, mask: 0x01)
            var observed: [UInt64] = []
            #expect(
                ledgerError { _ = try ChainVerifier.verify(ledger, eachBlock: { observed.append($0.header.height) }) }
                    == .damaged(
                        height: UInt64(expected), file: "memory", offset: places[expected].offset,
                        reason: "signature invalid"))
            #expect(observed == Array(0..<UInt64(expected)))
        }
    }

    // MARK: Support

    /// What a verification covered, without the time it took.
    struct Summary: Equatable, CustomStringConvertible {
        var blocks: UInt64 = 0
        var events: UInt64 = 0
        var bytes: UInt64 = 0
        var headHash: Digest = .zero
        var height: UInt64 = 0
        var treeRoot: Digest = .zero
        var timestamp: Int64 = 0
        var tornTail: TornTail?

        init() {}

        init(_ report: VerificationReport) {
            blocks = report.blocks
            events = report.events
            bytes = report.bytes
            headHash = report.headHash
            height = report.height
            treeRoot = report.treeRoot
            timestamp = report.timestamp
            tornTail = report.tornTail
        }

        var description: String { "\(blocks) blocks, \(events) events, torn tail \(String(describing: tornTail))" }
    }

    /// The outcome of every way to verify the ledger at `path`, and the blocks each observer saw.
    struct Outcomes: CustomStringConvertible {
        var reference: Result<Summary, LedgerError>
        var plain: Result<Summary, LedgerError>
        var copied: Result<Summary, LedgerError>
        var inPlace: Result<Summary, LedgerError>
        var referenceBlocks: [Block]
        var copiedBlocks: [Block]
        var inPlaceBlocks: [Block]

        var agree: Bool {
            plain == reference && copied == reference && inPlace == reference && copiedBlocks == referenceBlocks
                && inPlaceBlocks == referenceBlocks
        }

        var description: String {
            "reference \(reference), plain \(plain), copied \(copied), in place \(inPlace); blocks seen "
                + "\(referenceBlocks.count) \(copiedBlocks.count) \(inPlaceBlocks.count)"
        }
    }

    static func outcomes(_ path: String) throws -> Outcomes {
        func run(_ body: () throws -> Summary) throws -> Result<Summary, LedgerError> {
            do { return .success(try body()) } catch let error as LedgerError { return .failure(error) }
        }
        var referenceBlocks: [Block] = []
        var copiedBlocks: [Block] = []
        var inPlaceBlocks: [Block] = []
        return Outcomes(
            reference: try run { try ReferenceVerifier.verify(path: path) { referenceBlocks.append($0) } },
            plain: try run { Summary(try ChainVerifier.verify(FileBlockSource(path: path))) },
            copied: try run {
                Summary(try ChainVerifier.verify(FileBlockSource(path: path)) { copiedBlocks.append($0) })
            },
            inPlace: try run {
                Summary(
                    try ChainVerifier.verify(FileBlockSource(path: path), eachBlock: { inPlaceBlocks.append($0.block) })
                )
            },
            referenceBlocks: referenceBlocks, copiedBlocks: copiedBlocks, inPlaceBlocks: inPlaceBlocks)
    }
}

/// The verifier as it was before blocks were checked in place, kept as the oracle: every block decoded into
/// a `Block`, every event copied and hashed one by one, checked in the order of FORMAT.md §7.
enum ReferenceVerifier {
    static func verify(path: String, onBlock: (Block) throws -> Void) throws -> ChainVerifierTests.Summary {
        let reader = try FileBlockSource(path: path)
        let genesis = reader.genesis
        let authority: Ed25519PublicKey
        do { authority = try Ed25519PublicKey(rawRepresentation: genesis.authorityKey) } catch {
            throw LedgerError.damaged(
                height: 0, file: LedgerDirectory.segmentName(0), offset: 32, reason: "genesis authority key is invalid")
        }
        var report = ChainVerifierTests.Summary()
        var frontier = MerkleFrontier()
        report.tornTail = try reader.forEachBlock { raw, location in
            let height = report.blocks
            func fail(_ reason: String) -> LedgerError {
                .damaged(
                    height: height, file: LedgerDirectory.segmentName(location.segment), offset: location.offset,
                    reason: reason)
            }
            let block: Block
            do { block = try Block(decoding: raw) } catch let error as DecodeError { throw fail(error.message) }
            let header = block.header
            guard header.height == height else { throw fail("height is \(header.height), expected \(height)") }
            guard header.ledgerID == genesis.ledgerID else {
                throw fail("belongs to another ledger (id \(header.ledgerID))")
            }
            if height == 0 {
                guard block.events.count == 1, block.events[0].type == Genesis.eventType,
                    header.timestamp == genesis.createdAt, header.previousHash == .zero
                else { throw fail("malformed genesis block") }
            } else {
                guard header.previousHash == report.headHash else { throw fail("previous header hash mismatch") }
                guard header.timestamp >= report.timestamp else {
                    throw fail("timestamp \(header.timestamp) is before the previous block's \(report.timestamp)")
                }
                if let reserved = block.events.first(where: { $0.type < LedgerFormat.firstApplicationEventType }) {
                    throw fail("event type \(reserved.type) is reserved for the ledger")
                }
            }
            guard header.treeSize == frontier.size + UInt64(header.eventCount) else {
                throw fail("tree size is \(header.treeSize), expected \(frontier.size + UInt64(header.eventCount))")
            }
            for event in block.events { frontier.append(event.leafHash) }
            guard frontier.root == header.treeRoot else { throw fail("tree root mismatch") }
            let hash = header.hash
            guard authority.isValidSignature(block.signature, for: hash.bytes) else { throw fail("signature invalid") }
            try onBlock(block)

            report.blocks += 1
            report.events = header.treeSize
            report.bytes += location.length
            report.headHash = hash
            report.height = header.height
            report.treeRoot = header.treeRoot
            report.timestamp = header.timestamp
        }
        let segments = try FileManager.default.contentsOfDirectory(atPath: path).filter { $0.hasSuffix(".vlseg") }.count
        let headers: Int
        if let tail = report.tornTail {
            headers = tail.wholeSegment ? tail.segment : tail.segment + 1
        } else {
            headers = segments
        }
        report.bytes += UInt64(headers * 32)
        return report
    }
}
