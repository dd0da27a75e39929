public import LedgerCrypto

/// Format constants of ledger format version 1 (`Ledger/FORMAT.md`).
public enum LedgerFormat {
    /// The only format version this code writes and reads.
    public static let version: UInt16 = 1
    /// Bytes in an encoded block header.
    public static let headerSize = 112
    /// Bytes in an Ed25519 signature.
    public static let signatureSize = 64
    /// Largest event (type tag plus payload) a block may hold.
    public static let maxEventSize = 1 << 20
    /// Largest encoded block.
    public static let maxBlockSize = 64 << 20
    /// Event types below this are reserved for the ledger itself.
    public static let firstApplicationEventType: UInt16 = 0x0100
}

/// One event as the ledger stores it: a type tag and an opaque payload. `Ledger` never interprets
/// application payloads; the leaf hash covers `type || payload`.
public struct LedgerEvent: Equatable, Sendable {
    /// What kind of event this is (0x0100 and up for applications).
    public var type: UInt16
    /// The application's encoding of the event.
    public var payload: [UInt8]

    public init(type: UInt16, payload: [UInt8]) {
        self.type = type
        self.payload = payload
    }

    /// The bytes that are hashed into the tree: type (big-endian) followed by the payload.
    public var encoded: [UInt8] { withEncoded { Array($0) } }

    /// The RFC 9162 leaf hash of this event, SHA-256(0x00 || bytes), hashed in one piece from a temporary
    /// buffer (on the stack for a small event) instead of a new `encoded` array: a writer hashes every event
    /// of every block. A withheld event's (type 0x0002, in a public copy) is the leaf hash it records.
    public var leafHash: Digest {
        if type == WithheldEvent.eventType { return encoded.withUnsafeBytes { WithheldEvent.leaf(ofStored: $0) } }
        return withEncoded(after: 1) { buffer in
            buffer[0] = Merkle.leafPrefix
            return SHA256.hash(UnsafeRawBufferPointer(buffer))
        }
    }

    /// `body` with the event's bytes (type big-endian, then payload) laid out in a temporary buffer, after
    /// `room` bytes that `body` fills.
    private func withEncoded<Result>(
        after room: Int = 0, _ body: (UnsafeMutableBufferPointer<UInt8>) -> Result
    ) -> Result {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: room + 2 + payload.count) { buffer in
            buffer[room] = UInt8(truncatingIfNeeded: type >> 8)
            buffer[room + 1] = UInt8(truncatingIfNeeded: type)
            _ = UnsafeMutableBufferPointer(rebasing: buffer[(room + 2)...]).initialize(fromContentsOf: payload)
            return body(buffer)
        }
    }

    /// The event whose bytes (type, then payload) are `encoded`, as `encoded` lays them out (a receipt carries
    /// its event so); nil if they are too short to hold the type.
    public init?(encoded: [UInt8]) {
        guard encoded.count >= 2 else { return nil }
        self = encoded.withUnsafeBytes { LedgerEvent(encoded: $0) }
    }

    /// The event whose bytes (type, then payload) are `encoded`, which holds at least the 2-byte type.
    init(encoded: UnsafeRawBufferPointer) {
        let payload = UnsafeRawBufferPointer(rebasing: encoded[2...])
        self.init(type: UInt16(encoded[0]) << 8 | UInt16(encoded[1]), payload: Array(payload))
    }
}

/// An event with its leaf hash, taken once when the event is made: the writer hands the hash out in the
/// event's receipt and the block builder adds the same hash to the tree, rather than hashing every event
/// of every block twice. The hash can only come from the event itself.
public struct HashedEvent: Sendable {
    public let event: LedgerEvent
    /// `event.leafHash`.
    public let leaf: Digest

    public init(_ event: LedgerEvent) {
        self.event = event
        leaf = event.leafHash
    }
}

/// The signed part of a block. Its SHA-256 is the block's identity: the next block links to it and the
/// authority signs it.
public struct BlockHeader: Equatable, Sendable {
    /// Format version of this block.
    public var version: UInt16 = LedgerFormat.version
    /// Number of events in the block.
    public var eventCount: UInt32
    /// Position in the chain; the genesis block is 0.
    public var height: UInt64
    /// Block time: milliseconds since the Unix epoch, UTC. Never less than the previous block's.
    public var timestamp: Int64
    /// Events in the ledger after this block (the tree size of `treeRoot`).
    public var treeSize: UInt64
    /// The ledger this block belongs to (from the genesis block).
    public var ledgerID: LedgerID
    /// Hash of the previous block's header; zero for the genesis block.
    public var previousHash: Digest
    /// RFC 9162 tree head over every event of the ledger up to and including this block.
    public var treeRoot: Digest

    public init(
        eventCount: UInt32, height: UInt64, timestamp: Int64, treeSize: UInt64, ledgerID: LedgerID,
        previousHash: Digest, treeRoot: Digest
    ) {
        self.eventCount = eventCount
        self.height = height
        self.timestamp = timestamp
        self.treeSize = treeSize
        self.ledgerID = ledgerID
        self.previousHash = previousHash
        self.treeRoot = treeRoot
    }

    /// The 112-byte encoding (FORMAT.md §3).
    public var encoded: [UInt8] {
        var writer = ByteWriter(capacity: LedgerFormat.headerSize)
        writer.write(version)
        writer.write(UInt16(0))
        writer.write(eventCount)
        writer.write(height)
        writer.write(UInt64(bitPattern: timestamp))
        writer.write(treeSize)
        writer.write(bytes: ledgerID.bytes)
        writer.write(previousHash)
        writer.write(treeRoot)
        return writer.bytes
    }

    /// The header hash: SHA-256 of the encoding. This is what the authority signs.
    public var hash: Digest { SHA256.hash(encoded) }

    /// Decodes a header; checks the encoding only, not the chain.
    public init(decoding reader: inout ByteReader) throws(DecodeError) {
        version = try reader.read(UInt16.self, "block header version")
        guard version == LedgerFormat.version else {
            throw DecodeError("unknown format version \(version) (this build reads version \(LedgerFormat.version))")
        }
        let reserved = try reader.read(UInt16.self, "block header")
        guard reserved == 0 else { throw DecodeError("block header: reserved field is \(reserved), must be 0") }
        eventCount = try reader.read(UInt32.self, "block header")
        height = try reader.read(UInt64.self, "block header")
        let time = try reader.read(UInt64.self, "block header")
        guard time <= UInt64(Int64.max) else { throw DecodeError("block header: timestamp out of range") }
        timestamp = Int64(time)
        treeSize = try reader.read(UInt64.self, "block header")
        ledgerID = LedgerID(bytes: try reader.readBytes(16, "block header"))!
        previousHash = try reader.readDigest("block header")
        treeRoot = try reader.readDigest("block header")
    }
}

/// A ledger's random 16-byte identity, fixed at genesis and repeated in every header.
public struct LedgerID: Hashable, Sendable, CustomStringConvertible {
    /// The 16 bytes.
    public let bytes: [UInt8]

    /// `nil` unless exactly 16 bytes.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// A new random id.
    public static func random() throws -> LedgerID {
        LedgerID(bytes: try SecureRandom.bytes(16))!
    }

    /// 32 lowercase hex characters.
    public var description: String { Hex.encode(bytes) }
}

/// A block: the header, the authority's signature over the header hash, and the events.
public struct Block: Equatable, Sendable {
    public var header: BlockHeader
    /// Ed25519 signature of `header.hash` by the ledger authority.
    public var signature: [UInt8]
    public var events: [LedgerEvent]

    public init(header: BlockHeader, signature: [UInt8], events: [LedgerEvent]) {
        self.header = header
        self.signature = signature
        self.events = events
    }

    /// The block's encoding: header, signature, then each event as a 4-byte length and its bytes.
    public var encoded: [UInt8] {
        var writer = ByteWriter(
            capacity: LedgerFormat.headerSize + 64 + events.reduce(0) { $0 + 6 + $1.payload.count })
        writer.write(bytes: header.encoded)
        writer.write(bytes: signature)
        for event in events {
            writer.write(UInt32(2 + event.payload.count))
            writer.write(event.type)
            writer.write(bytes: event.payload)
        }
        return writer.bytes
    }

    /// Decodes a whole block; every byte must be accounted for.
    public init(decoding raw: UnsafeRawBufferPointer) throws(DecodeError) {
        let layout = try BlockLayout(decoding: raw)
        header = layout.header
        signature = layout.signature
        events = (0..<layout.events.count).map { index in
            LedgerEvent(encoded: UnsafeRawBufferPointer(rebasing: raw[layout.events[index]]))
        }
    }

    /// Decodes a whole block.
    public init(decoding bytes: [UInt8]) throws(DecodeError) {
        let result: Result<Block, DecodeError> = bytes.withUnsafeBytes { raw in
            do throws(DecodeError) { return .success(try Block(decoding: raw)) } catch { return .failure(error) }
        }
        self = try result.get()
    }
}

// MARK: Decoding in place

/// Where the parts of a block lie in its encoding, checked as FORMAT.md §3.3 requires. It is the one block
/// decoder: `Block` copies the events out of it, `EncodedBlock` reads them in place, and both refuse the same
/// bytes with the same errors.
struct BlockLayout {
    var header: BlockHeader
    var signature: [UInt8]
    var events: EventBounds

    init(decoding raw: UnsafeRawBufferPointer) throws(DecodeError) {
        var reader = ByteReader(raw)
        header = try BlockHeader(decoding: &reader)
        signature = try reader.readBytes(LedgerFormat.signatureSize, "block signature")
        guard header.eventCount > 0 else { throw DecodeError("block holds no events") }
        // Every event takes at least 6 bytes: a count the bytes cannot hold fails below, so reserve no more.
        var offsets: [UInt32] = []
        offsets.reserveCapacity(Int(min(UInt64(header.eventCount), UInt64(reader.remaining / 6))) + 1)
        for index in 0..<header.eventCount {
            offsets.append(UInt32(reader.offset))
            let length = try reader.read(UInt32.self, "event \(index) length")
            guard length >= 2, length <= LedgerFormat.maxEventSize else {
                throw DecodeError("event \(index): length \(length) outside 2...\(LedgerFormat.maxEventSize)")
            }
            _ = try reader.readBuffer(Int(length), "event \(index)")
        }
        guard reader.remaining == 0 else {
            throw DecodeError("\(reader.remaining) bytes after the last event")
        }
        offsets.append(UInt32(reader.offset))
        events = EventBounds(offsets: offsets)
    }
}

/// Where each event's bytes (type, then payload) lie in a block's encoding.
struct EventBounds: Sendable {
    /// Offset of each event's length field, then the end of the block (at most 64 MiB, so 32 bits suffice).
    let offsets: [UInt32]

    var count: Int { offsets.count - 1 }

    /// The bytes of event `index`.
    subscript(index: Int) -> Range<Int> { Int(offsets[index]) + 4..<Int(offsets[index + 1]) }
}

/// A block kept in its encoding and decoded in place: the header and signature are decoded, the events are
/// read straight from the block's bytes when asked for. Replaying a ledger through it copies no event.
/// It accepts and refuses exactly the bytes `Block(decoding:)` does; `block` is the fully copied value.
public struct EncodedBlock: Sendable {
    /// The block's encoding (FORMAT.md §3.3).
    public let bytes: [UInt8]
    /// The decoded header.
    public let header: BlockHeader
    /// Ed25519 signature of `header.hash` by the ledger authority.
    public let signature: [UInt8]
    /// Where each event lies in `bytes`.
    let bounds: EventBounds

    /// Decodes a whole block, keeping `bytes`; every byte must be accounted for.
    public init(decoding bytes: [UInt8]) throws(DecodeError) {
        let decoded: Result<BlockLayout, DecodeError> = bytes.withUnsafeBytes { raw in
            do throws(DecodeError) { return .success(try BlockLayout(decoding: raw)) } catch { return .failure(error) }
        }
        let layout = try decoded.get()
        self.bytes = bytes
        header = layout.header
        signature = layout.signature
        bounds = layout.events
    }

    /// The events, in block order.
    public var events: Events { Events(bytes: bytes, bounds: bounds) }

    /// The decoded block, every event copied out.
    public var block: Block { Block(header: header, signature: signature, events: events.map(\.ledgerEvent)) }
}

extension EncodedBlock {
    /// One event where it lies in its block: the type and the payload, sharing the block's storage.
    public struct Event: Sendable {
        /// What kind of event this is (0x0100 and up for applications).
        public let type: UInt16
        /// The event bytes the tree hashes: the type (big-endian), then the payload.
        public let encoded: ArraySlice<UInt8>

        /// The application's encoding of the event.
        public var payload: ArraySlice<UInt8> { encoded.dropFirst(2) }

        /// The event as a value of its own (copies the payload).
        public var ledgerEvent: LedgerEvent { LedgerEvent(type: type, payload: Array(payload)) }

        /// The RFC 9162 leaf hash of this event (a withheld event's: the leaf hash it records).
        public var leafHash: Digest { encoded.withUnsafeBytes { WithheldEvent.leaf(ofStored: $0) } }
    }

    /// The events of a block, in block order, each read in place when accessed.
    public struct Events: RandomAccessCollection, Sendable {
        let bytes: [UInt8]
        let bounds: EventBounds

        public var startIndex: Int { 0 }
        public var endIndex: Int { bounds.count }

        public subscript(position: Int) -> Event {
            let range = bounds[position]
            let type = UInt16(bytes[range.lowerBound]) << 8 | UInt16(bytes[range.lowerBound + 1])
            return Event(type: type, encoded: bytes[range])
        }
    }
}

/// The ledger's identity, recorded as the only event of the genesis block (type 0x0001).
public struct Genesis: Equatable, Sendable {
    /// Event type of the genesis event.
    public static let eventType: UInt16 = 0x0001
    /// Longest ledger name, in UTF-8 bytes.
    public static let maxNameBytes = 200

    public var formatVersion: UInt16 = LedgerFormat.version
    public var ledgerID: LedgerID
    /// Creation time, ms since the Unix epoch, UTC; equals the genesis block's timestamp.
    public var createdAt: Int64
    /// The authority's Ed25519 public key: every block must be signed by it.
    public var authorityKey: [UInt8]
    /// A human name for the ledger, 1 to 200 bytes of UTF-8.
    public var name: String

    public init(ledgerID: LedgerID, createdAt: Int64, authorityKey: [UInt8], name: String) {
        self.ledgerID = ledgerID
        self.createdAt = createdAt
        self.authorityKey = authorityKey
        self.name = name
    }

    /// The genesis event.
    public var event: LedgerEvent {
        var writer = ByteWriter()
        writer.write(formatVersion)
        writer.write(bytes: ledgerID.bytes)
        writer.write(UInt64(bitPattern: createdAt))
        writer.write(bytes: authorityKey)
        let name = Array(self.name.utf8)
        writer.write(UInt16(name.count))
        writer.write(bytes: name)
        return LedgerEvent(type: Genesis.eventType, payload: writer.bytes)
    }

    /// Decodes the genesis event.
    public init(decoding event: LedgerEvent) throws(DecodeError) {
        guard event.type == Genesis.eventType else {
            throw DecodeError("first event is type \(event.type), not the genesis event")
        }
        self = try ByteReader.reading(event.payload) { (reader) throws(DecodeError) -> Genesis in
            let version = try reader.read(UInt16.self, "genesis")
            guard version == LedgerFormat.version else {
                throw DecodeError(
                    "unknown format version \(version) (this build reads version \(LedgerFormat.version))")
            }
            let id = LedgerID(bytes: try reader.readBytes(16, "genesis ledger id"))!
            let created = try reader.read(UInt64.self, "genesis creation time")
            guard created <= UInt64(Int64.max) else { throw DecodeError("genesis: creation time out of range") }
            let key = try reader.readBytes(32, "genesis authority key")
            let nameLength = try reader.read(UInt16.self, "genesis name length")
            let nameBytes = try reader.readBytes(Int(nameLength), "genesis name")
            guard nameBytes.count >= 1, nameBytes.count <= Genesis.maxNameBytes,
                let name = String(validating: nameBytes, as: UTF8.self)
            else { throw DecodeError("genesis: name must be 1-\(Genesis.maxNameBytes) bytes of UTF-8") }
            guard reader.remaining == 0 else { throw DecodeError("genesis: \(reader.remaining) trailing bytes") }
            return Genesis(ledgerID: id, createdAt: Int64(created), authorityKey: key, name: name)
        }
    }
}
