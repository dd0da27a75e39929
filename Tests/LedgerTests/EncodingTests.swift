import FileStore
import Ledger
import LedgerCrypto
import Testing

/// CRC-32C check values and slicing-by-8 correctness, and the block and genesis encodings: round trips and
/// every way a decoder must refuse bytes.
@Suite struct EncodingTests {
    // MARK: CRC-32C

    /// The textbook bit-at-a-time CRC-32C (reflected polynomial 0x82F63B78), the oracle for the fast one.
    static func naiveCRC32C<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in bytes {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
        }
        return ~crc
    }

    /// The standard check value and the RFC 3720 §B.4 examples.
    @Test func crcCheckValues() {
        #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
        #expect(CRC32C.checksum([UInt8](repeating: 0x00, count: 32)) == 0x8A91_36AA)
        #expect(CRC32C.checksum([UInt8](repeating: 0xFF, count: 32)) == 0x62A8_AB43)
        #expect(CRC32C.checksum(Array(0...31)) == 0x46DD_794E)
        #expect(CRC32C.checksum(Array((0...31).reversed())) == 0x113F_DB5C)
        #expect(CRC32C.checksum([UInt8]()) == 0)
        #expect(Self.naiveCRC32C(Array("123456789".utf8)) == 0xE306_9283)
    }

    /// Slicing-by-8 agrees with the bitwise CRC for every length 0..<40 at every alignment 0..<8, and beyond.
    @Test func crcSlicingMatchesBitwise() {
        var state: UInt64 = 0x0123_4567_89AB_CDEF
        let buffer: [UInt8] = (0..<4200).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return UInt8(truncatingIfNeeded: state >> 56)
        }
        buffer.withUnsafeBytes { raw in
            for offset in 0..<8 {
                for length in Array(0..<40) + [63, 64, 65, 1000, 4099] {
                    let slice = UnsafeRawBufferPointer(rebasing: raw[offset..<offset + length])
                    #expect(
                        CRC32C.checksum(slice) == Self.naiveCRC32C(buffer[offset..<offset + length]),
                        "offset \(offset) length \(length)")
                }
            }
        }
    }

    // MARK: Fixtures

    static let ledgerID = LedgerID(bytes: Array(0xA0...0xAF))!

    /// A header whose every field is distinct and non-trivial, so a swapped or dropped field shows.
    static func header(eventCount: UInt32) -> BlockHeader {
        BlockHeader(
            eventCount: eventCount, height: 0x0102_0304_0506_0708, timestamp: 1_767_225_600_123,
            treeSize: 0x1122_3344_5566_7788, ledgerID: ledgerID,
            previousHash: SHA256.hash(Array("previous".utf8)), treeRoot: SHA256.hash(Array("root".utf8)))
    }

    /// A block of three events: an empty payload, a short one and a longer one, with edge-case types.
    static let block: Block = {
        let events = [
            LedgerEvent(type: 0x0100, payload: []),
            LedgerEvent(type: 0xFFFF, payload: [0x00, 0x7F, 0x80, 0xFF]),
            LedgerEvent(type: 0x0002, payload: (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 7) }),
        ]
        return Block(
            header: header(eventCount: UInt32(events.count)), signature: (0..<64).map { UInt8(0xC0 ^ $0) },
            events: events)
    }()

    static let genesis = Genesis(
        ledgerID: ledgerID, createdAt: 1_767_225_600_000, authorityKey: (0..<32).map { UInt8(0x40 + $0) },
        name: "Élection municipale 2026 ✓")

    /// The decode error for `bytes`, or `nil` (and a recorded issue) if they decode.
    static func blockError(_ bytes: [UInt8], _ comment: Comment? = nil) -> DecodeError? {
        #expect(throws: DecodeError.self, comment) { try Block(decoding: bytes) }
    }

    /// The decode error for the genesis payload `payload`, or `nil` (and a recorded issue) if it decodes.
    static func genesisError(_ payload: [UInt8], type: UInt16 = Genesis.eventType) -> DecodeError? {
        #expect(throws: DecodeError.self) { try Genesis(decoding: LedgerEvent(type: type, payload: payload)) }
    }

    // MARK: Block round trip

    /// A block decodes back to itself: every header field, the signature and every event.
    @Test func blockRoundTrip() throws {
        let block = Self.block
        let bytes = block.encoded
        let payloadBytes = block.events.reduce(0) { $0 + 4 + 2 + $1.payload.count }
        #expect(bytes.count == LedgerFormat.headerSize + LedgerFormat.signatureSize + payloadBytes)
        let decoded = try Block(decoding: bytes)
        #expect(decoded == block)
        #expect(decoded.header.version == LedgerFormat.version)
        #expect(decoded.header.eventCount == 3)
        #expect(decoded.header.height == 0x0102_0304_0506_0708)
        #expect(decoded.header.timestamp == 1_767_225_600_123)
        #expect(decoded.header.treeSize == 0x1122_3344_5566_7788)
        #expect(decoded.header.ledgerID == Self.ledgerID)
        #expect(decoded.header.previousHash == block.header.previousHash)
        #expect(decoded.header.treeRoot == block.header.treeRoot)
        #expect(decoded.signature == block.signature)
        #expect(decoded.events == block.events)
        #expect(decoded.encoded == bytes)
    }

    /// The header is 112 big-endian bytes in FORMAT.md order, and its hash is SHA-256 of them.
    @Test func headerLayout() {
        let header = Self.header(eventCount: 3)
        let bytes = header.encoded
        #expect(bytes.count == LedgerFormat.headerSize)
        #expect(Array(bytes[0..<4]) == [0x00, 0x01, 0x00, 0x00])  // version 1, reserved 0
        #expect(Array(bytes[4..<8]) == [0x00, 0x00, 0x00, 0x03])  // event count
        #expect(Array(bytes[8..<16]) == [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08])  // height
        #expect(Array(bytes[32..<48]) == Self.ledgerID.bytes)
        #expect(Array(bytes[48..<80]) == header.previousHash.bytes)
        #expect(Array(bytes[80..<112]) == header.treeRoot.bytes)
        #expect(header.hash == SHA256.hash(bytes))
    }

    /// Extremes survive the trip: the largest timestamp, zero hashes, an event of exactly maxEventSize bytes.
    @Test func blockRoundTripAtLimits() throws {
        var header = Self.header(eventCount: 1)
        header.timestamp = Int64.max
        header.previousHash = .zero
        let event = LedgerEvent(type: 0x0100, payload: [UInt8](repeating: 0x5A, count: LedgerFormat.maxEventSize - 2))
        let block = Block(header: header, signature: [UInt8](repeating: 0, count: 64), events: [event])
        #expect(try Block(decoding: block.encoded) == block)
    }

    // MARK: Genesis round trip

    /// The genesis event decodes back to the same genesis, also when carried inside a block.
    @Test func genesisRoundTrip() throws {
        let event = Self.genesis.event
        #expect(event.type == Genesis.eventType)
        #expect(try Genesis(decoding: event) == Self.genesis)

        let block = Block(
            header: Self.header(eventCount: 1), signature: [UInt8](repeating: 7, count: 64), events: [event])
        let carried = try Block(decoding: block.encoded)
        #expect(try Genesis(decoding: carried.events[0]) == Self.genesis)
    }

    /// Names of exactly 1 and 200 UTF-8 bytes are accepted.
    @Test func genesisNameLimits() throws {
        for name in ["x", String(repeating: "é", count: Genesis.maxNameBytes / 2)] {
            var genesis = Self.genesis
            genesis.name = name
            #expect(try Genesis(decoding: genesis.event) == genesis)
        }
    }

    // MARK: Block decoding rejections

    /// A block of any other format version is refused, saying so.
    @Test func rejectsUnknownVersion() {
        for version: UInt16 in [0, 2, 0xFFFF] {
            var bytes = Self.block.encoded
            bytes[0] = UInt8(version >> 8)
            bytes[1] = UInt8(version & 0xFF)
            let error = Self.blockError(bytes, "version \(version)")
            #expect(error?.message.contains("unknown format version") == true, "\(String(describing: error))")
        }
    }

    /// A non-zero reserved header field is refused, whichever bit is set.
    @Test func rejectsNonZeroReserved() {
        for reserved: UInt16 in [0x0001, 0x0100, 0x8000, 0xFFFF] {
            var bytes = Self.block.encoded
            bytes[2] = UInt8(reserved >> 8)
            bytes[3] = UInt8(reserved & 0xFF)
            let error = Self.blockError(bytes, "reserved \(reserved)")
            #expect(error?.message.contains("reserved") == true, "\(String(describing: error))")
        }
    }

    /// A block that declares zero events is refused.
    @Test func rejectsZeroEvents() {
        let empty = Block(header: Self.header(eventCount: 0), signature: Self.block.signature, events: [])
        let error = Self.blockError(empty.encoded)
        #expect(error?.message.contains("no events") == true, "\(String(describing: error))")
    }

    /// Every proper prefix of a valid encoding is refused (a torn write never decodes).
    @Test func rejectsEveryTruncation() {
        let bytes = Self.block.encoded
        for length in 0..<bytes.count {
            _ = Self.blockError(Array(bytes[0..<length]), "truncated to \(length) of \(bytes.count)")
        }
    }

    /// Bytes after the last event are refused, as is an event count that leaves a whole event unread.
    @Test func rejectsTrailingBytes() {
        for extra: [UInt8] in [[0], [0xFF, 0xFF], Self.block.encoded] {
            let error = Self.blockError(Self.block.encoded + extra, "\(extra.count) trailing bytes")
            #expect(error?.message.contains("after the last event") == true, "\(String(describing: error))")
        }
        var undercounted = Self.block
        undercounted.header.eventCount = 2
        _ = Self.blockError(undercounted.encoded, "one event beyond the count")
    }

    /// An event length above maxEventSize is refused by the length check even when the bytes are present;
    /// so are lengths too short to hold the type tag.
    @Test func rejectsBadEventLength() {
        let event = LedgerEvent(type: 0x0100, payload: [UInt8](repeating: 1, count: LedgerFormat.maxEventSize - 1))
        let oversized = Block(header: Self.header(eventCount: 1), signature: Self.block.signature, events: [event])
        let error = Self.blockError(oversized.encoded)
        #expect(
            error?.message.contains("length \(LedgerFormat.maxEventSize + 1)") == true, "\(String(describing: error))")

        for length: UInt32 in [0, 1, UInt32(LedgerFormat.maxEventSize) + 1, .max] {
            var bytes = Self.block.encoded
            let at = LedgerFormat.headerSize + LedgerFormat.signatureSize
            bytes.replaceSubrange(at..<at + 4, with: withUnsafeBytes(of: length.bigEndian) { Array($0) })
            _ = Self.blockError(bytes, "event length \(length)")
        }
    }

    /// A header timestamp above Int64.max (a negative time) is refused.
    @Test func rejectsTimestampOutOfRange() {
        var bytes = Self.block.encoded
        bytes[16] |= 0x80
        let error = Self.blockError(bytes)
        #expect(error?.message.contains("timestamp") == true, "\(String(describing: error))")
    }

    // MARK: Genesis decoding rejections

    /// A genesis of another format version is refused, saying so.
    @Test func genesisRejectsUnknownVersion() {
        var genesis = Self.genesis
        genesis.formatVersion = 2
        let error = Self.genesisError(genesis.event.payload)
        #expect(error?.message.contains("unknown format version") == true, "\(String(describing: error))")
    }

    /// Wrong event type, every truncation, trailing bytes, and an empty, oversized or non-UTF-8 name are refused.
    @Test func genesisRejectsMalformedPayloads() {
        let payload = Self.genesis.event.payload
        _ = Self.genesisError(payload, type: 0x0100)
        for length in 0..<payload.count { _ = Self.genesisError(Array(payload[0..<length])) }
        _ = Self.genesisError(payload + [0])

        let fixed = Array(payload[0..<(2 + 16 + 8 + 32)])
        _ = Self.genesisError(fixed + [0, 0])
        _ = Self.genesisError(fixed + [0, 201] + [UInt8](repeating: 0x61, count: 201))
        _ = Self.genesisError(fixed + [0, 2, 0xC3, 0x28])
    }
}
