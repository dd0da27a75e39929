import Hummingbird
import Ledger
import LedgerCrypto

// JSON read and written as bytes, for the vote route, where Foundation's JSONDecoder and JSONEncoder cost
// more server CPU than the vote itself. The bytes written are those JSONEncoder writes with
// `[.sortedKeys, .withoutEscapingSlashes]` (the caller writes the keys in sorted order); what is read
// is the one shape clients send, and anything else goes to JSONDecoder, so its error messages stay.

// MARK: - Writing

/// A JSON text built as bytes, escaped as JSONEncoder escapes (`"`, `\`, and control characters; `/` and
/// everything from U+007F on as they are).
struct JSONBytes {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int) { bytes.reserveCapacity(capacity) }

    /// Appends text that needs no escaping (punctuation, keys).
    mutating func raw(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// Appends bytes that need no escaping (escaped text, hex, base64, digits).
    mutating func raw(_ other: [UInt8]) { bytes.append(contentsOf: other) }

    mutating func number(_ value: UInt64) {
        var divisor: UInt64 = 1
        while value / divisor >= 10 { divisor *= 10 }
        repeat {
            bytes.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
            divisor /= 10
        } while divisor > 0
    }

    /// Appends `text` as a JSON string, quotes included.
    mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        escaped(text)
        bytes.append(UInt8(ascii: "\""))
    }

    /// Appends the inside of `text` as a JSON string, without quotes.
    mutating func escaped(_ text: String) {
        var text = text
        text.withUTF8 { utf8 in
            for byte in utf8 {
                let escape: UInt8
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): escape = byte
                case 0x08: escape = UInt8(ascii: "b")
                case 0x09: escape = UInt8(ascii: "t")
                case 0x0A: escape = UInt8(ascii: "n")
                case 0x0C: escape = UInt8(ascii: "f")
                case 0x0D: escape = UInt8(ascii: "r")
                case ..<0x20: escape = UInt8(ascii: "u")
                default:
                    bytes.append(byte)
                    continue
                }
                bytes.append(UInt8(ascii: "\\"))
                bytes.append(escape)
                if escape == UInt8(ascii: "u") {
                    // \u00XX in lower case, as JSONEncoder writes it.
                    for nibble in [0, 0, byte >> 4, byte & 0xF] as [UInt8] {
                        bytes.append(nibble < 10 ? UInt8(ascii: "0") + nibble : UInt8(ascii: "a") + nibble - 10)
                    }
                }
            }
        }
    }

    /// Appends bytes as lowercase hex (a digest inside a JSON string).
    mutating func hex(_ raw: UnsafeRawBufferPointer) { Hex.append(raw, to: &bytes) }

    /// Appends bytes as base64 (a proof line inside a JSON string).
    mutating func base64(_ raw: UnsafeRawBufferPointer) { Base64.append(raw, to: &bytes) }

    /// The text as a response body.
    var buffer: ByteBuffer { ByteBuffer(bytes: bytes) }
}

// MARK: - Reading

/// A JSON object whose members are all strings of printable ASCII without escapes or unsigned integers,
/// each key once: the bodies voters' clients send, read without Foundation. `nil` for any other text,
/// valid or not; the caller then decodes it with JSONDecoder, which accepts or refuses it as before.
struct FlatJSONObject {
    enum Value {
        case string(String)
        case number(UInt64)
    }

    private(set) var members: [(key: String, value: Value)] = []

    init?(_ buffer: ByteBuffer) {
        guard let members = buffer.withUnsafeReadableBytes({ FlatJSONObject.parse($0) }) else { return nil }
        self.members = members
    }

    /// The member `key`, if the object has it.
    subscript(key: String) -> Value? { members.first { $0.key == key }?.value }

    private static func parse(_ text: UnsafeRawBufferPointer) -> [(key: String, value: Value)]? {
        var at = 0
        func skipSpace() {
            while at < text.count, text[at] == 0x20 || text[at] == 0x09 || text[at] == 0x0A || text[at] == 0x0D {
                at += 1
            }
        }
        func take(_ byte: UInt8) -> Bool {
            skipSpace()
            guard at < text.count, text[at] == byte else { return false }
            at += 1
            return true
        }
        /// A string of printable ASCII other than `"` and `\`, after its opening quote.
        func string() -> String? {
            let start = at
            while at < text.count, text[at] != UInt8(ascii: "\"") {
                guard text[at] >= 0x20, text[at] < 0x7F, text[at] != UInt8(ascii: "\\") else { return nil }
                at += 1
            }
            guard at < text.count else { return nil }
            at += 1
            return String(decoding: UnsafeRawBufferPointer(rebasing: text[start..<at - 1]), as: UTF8.self)
        }
        /// An unsigned integer as JSON writes one (no sign, fraction, exponent or leading zero).
        func number() -> UInt64? {
            let start = at
            var value: UInt64 = 0
            while at < text.count, text[at] >= UInt8(ascii: "0"), text[at] <= UInt8(ascii: "9") {
                let (times10, overflow) = value.multipliedReportingOverflow(by: 10)
                let (sum, carry) = times10.addingReportingOverflow(UInt64(text[at] - UInt8(ascii: "0")))
                guard !overflow, !carry else { return nil }
                value = sum
                at += 1
            }
            guard at > start, at - start == 1 || text[start] != UInt8(ascii: "0") else { return nil }
            if at < text.count, text[at] == UInt8(ascii: ".") || text[at] | 0x20 == UInt8(ascii: "e") { return nil }
            return value
        }

        var members: [(key: String, value: Value)] = []
        guard take(UInt8(ascii: "{")) else { return nil }
        if !take(UInt8(ascii: "}")) {
            repeat {
                guard take(UInt8(ascii: "\"")), let key = string(), !members.contains(where: { $0.key == key }),
                    take(UInt8(ascii: ":"))
                else { return nil }
                skipSpace()
                guard at < text.count else { return nil }
                if text[at] == UInt8(ascii: "\"") {
                    at += 1
                    guard let value = string() else { return nil }
                    members.append((key, .string(value)))
                } else {
                    guard let value = number() else { return nil }
                    members.append((key, .number(value)))
                }
            } while take(UInt8(ascii: ","))
            guard take(UInt8(ascii: "}")) else { return nil }
        }
        skipSpace()
        return at == text.count ? members : nil
    }
}
