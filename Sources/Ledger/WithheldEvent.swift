public import LedgerCrypto

/// An event whose contents a public copy or feed holds back for a while (FORMAT.md §3.8), stored as an event
/// of type 0x0002 in its place: the event's type, its leaf hash and the first bytes of its payload that the
/// application chose to disclose. Its leaf in the tree is the recorded leaf hash, so the block's tree root,
/// header hash and signature, and every proof, are those of the block that holds the whole event. A writer
/// never writes one (the type is reserved); only a copy made for the public does.
public struct WithheldEvent: Equatable, Sendable {
    /// The event type a withheld event is stored as.
    public static let eventType: UInt16 = 0x0002
    /// Payload bytes before the disclosed ones: the type (2) and the leaf hash (32).
    public static let fixedSize = 2 + 32

    /// The withheld event's own type (0x0100 or above).
    public var type: UInt16
    /// The withheld event's leaf hash (FORMAT.md §4).
    public var leaf: Digest
    /// The first bytes of the withheld event's payload, which the copy shows.
    public var disclosed: [UInt8]

    /// Withholds `event`, showing the first `disclosing` bytes of its payload (at most all of them).
    public init(withholding event: LedgerEvent, disclosing: Int) {
        type = event.type
        leaf = event.leafHash
        disclosed = Array(event.payload.prefix(max(0, disclosing)))
    }

    /// The withheld event stored as `event`; nil if `event` is not one or is malformed: a payload shorter than
    /// 34 bytes, or a withheld type below 0x0100.
    public init?(_ event: LedgerEvent) {
        guard let decoded = event.encoded.withUnsafeBytes({ WithheldEvent(encoded: $0) }) else { return nil }
        self = decoded
    }

    /// The withheld event whose stored bytes (type 0x0002, then payload) are `encoded`; nil as `init(_:)`.
    init?(encoded: UnsafeRawBufferPointer) {
        guard encoded.count >= 2 + WithheldEvent.fixedSize,
            UInt16(encoded[0]) << 8 | UInt16(encoded[1]) == WithheldEvent.eventType
        else { return nil }
        let type = UInt16(encoded[2]) << 8 | UInt16(encoded[3])
        guard type >= LedgerFormat.firstApplicationEventType else { return nil }
        self.type = type
        leaf = Digest(unsafeUninitializedReading: UnsafeRawBufferPointer(rebasing: encoded[4..<36]))
        disclosed = Array(encoded[36...])
    }

    /// The event stored in the withheld event's place: type 0x0002, payload `type || leaf || disclosed`.
    public var event: LedgerEvent {
        var writer = ByteWriter(capacity: WithheldEvent.fixedSize + disclosed.count)
        writer.write(type)
        writer.write(leaf)
        writer.write(bytes: disclosed)
        return LedgerEvent(type: WithheldEvent.eventType, payload: writer.bytes)
    }

    /// Whether `event` is the event this one withholds: the same type, the same leaf hash, and a payload that
    /// starts with the disclosed bytes.
    public func matches(_ event: LedgerEvent) -> Bool {
        event.type == type && event.payload.starts(with: disclosed) && event.leafHash == leaf
    }

    /// The leaf of the stored event bytes `encoded` (type, then payload): the recorded leaf hash for a
    /// withheld event, else `SHA-256(0x00 || encoded)`.
    static func leaf(ofStored encoded: UnsafeRawBufferPointer) -> Digest {
        if encoded.count >= 2 + fixedSize, encoded[0] == 0, encoded[1] == UInt8(eventType) {
            return Digest(unsafeUninitializedReading: UnsafeRawBufferPointer(rebasing: encoded[4..<36]))
        }
        return Merkle.leafHash(encoded)
    }
}
