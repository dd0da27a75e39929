import Hummingbird

/// The JSON a write route accepts is read one way only. JSONDecoder takes a key given twice in an object
/// (the first wins, where most parsers a proxy or an auditor uses take the last) and rounds numbers
/// (`1.9999999999999999` is candidate 2), so before a body is decoded this refuses, as a 400 naming the
/// field: a key twice in one object (compared as JSONDecoder compares them, escapes decoded), a number with a
/// fraction or an exponent (every number the API takes is an integer), an integer beyond 64 bits, and
/// nesting deeper than `maxDepth`. Text that is not JSON at all is left to JSONDecoder, which says so.
struct StrictJSON {
    /// Objects and arrays nested deeper than this are refused (no route takes more than three levels).
    static let maxDepth = 32

    /// Checks `bytes`; throws an `APIError` (400 `malformed_json`) for what JSONDecoder would read loosely.
    static func check(_ bytes: UnsafeRawBufferPointer) throws {
        var scanner = StrictJSON(text: bytes)
        _ = try scanner.value(depth: 0)
    }

    private let text: UnsafeRawBufferPointer
    private var at = 0
    /// The keys and indexes leading to the value being read, for messages.
    private var path: [String] = []

    private init(text: UnsafeRawBufferPointer) { self.text = text }

    private func refuse(_ what: String) -> APIError {
        let field = path.isEmpty ? "the body" : "field \"\(path.joined(separator: "."))\""
        return APIError(.badRequest, "malformed_json", "\(field) \(what)")
    }

    private var next: UInt8? { at < text.count ? text[at] : nil }

    private mutating func skipSpace() {
        while let byte = next, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { at += 1 }
    }

    private mutating func take(_ byte: UInt8) -> Bool {
        skipSpace()
        guard next == byte else { return false }
        at += 1
        return true
    }

    /// Reads one value; false where the text is not JSON (JSONDecoder then says what is wrong).
    private mutating func value(depth: Int) throws -> Bool {
        skipSpace()
        guard let byte = next else { return false }
        switch byte {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            guard depth < StrictJSON.maxDepth else {
                throw refuse("nests objects and arrays deeper than \(StrictJSON.maxDepth) levels")
            }
            at += 1
            return byte == UInt8(ascii: "{") ? try object(depth: depth + 1) : try array(depth: depth + 1)
        case UInt8(ascii: "\""):
            at += 1
            return string() != nil
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default:
            for word in ["true", "false", "null"] where text.count - at >= word.utf8.count {
                if word.utf8.elementsEqual(text[at..<at + word.utf8.count]) {
                    at += word.utf8.count
                    return true
                }
            }
            return false
        }
    }

    private mutating func object(depth: Int) throws -> Bool {
        if take(UInt8(ascii: "}")) { return true }
        var keys: Set<String> = []
        repeat {
            guard take(UInt8(ascii: "\"")), let key = string(), take(UInt8(ascii: ":")) else { return false }
            path.append(key.count <= 64 ? key : String(key.prefix(64)) + "…")
            guard keys.insert(key).inserted else { throw refuse("appears more than once") }
            guard try value(depth: depth) else { return false }
            path.removeLast()
        } while take(UInt8(ascii: ","))
        return take(UInt8(ascii: "}"))
    }

    private mutating func array(depth: Int) throws -> Bool {
        if take(UInt8(ascii: "]")) { return true }
        var index = 0
        repeat {
            path.append(String(index))
            guard try value(depth: depth) else { return false }
            path.removeLast()
            index += 1
        } while take(UInt8(ascii: ","))
        return take(UInt8(ascii: "]"))
    }

    /// A number: an integer within 64 bits (signed if negative), else refused.
    private mutating func number() throws -> Bool {
        let negative = next == UInt8(ascii: "-")
        if negative { at += 1 }
        var magnitude: UInt64 = 0
        var overflow = false
        let start = at
        while let byte = next, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
            let (times10, o1) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times10.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
            overflow = overflow || o1 || o2
            magnitude = sum
            at += 1
        }
        guard at > start, at - start == 1 || text[start] != UInt8(ascii: "0") else { return false }
        if let byte = next, byte == UInt8(ascii: ".") || byte | 0x20 == UInt8(ascii: "e") {
            throw refuse("must be an integer (no fraction or exponent)")
        }
        if overflow || (negative && magnitude > UInt64(Int64.max) + 1) { throw refuse("is out of range") }
        return true
    }

    /// A string after its opening quote, escapes decoded; nil if it is not a valid JSON string.
    private mutating func string() -> String? {
        var bytes: [UInt8] = []
        while let byte = next {
            at += 1
            switch byte {
            case UInt8(ascii: "\""): return String(validating: bytes, as: UTF8.self)
            case ..<0x20: return nil
            case UInt8(ascii: "\\"):
                guard let escape = next else { return nil }
                at += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): bytes.append(escape)
                case UInt8(ascii: "b"): bytes.append(0x08)
                case UInt8(ascii: "f"): bytes.append(0x0C)
                case UInt8(ascii: "n"): bytes.append(0x0A)
                case UInt8(ascii: "r"): bytes.append(0x0D)
                case UInt8(ascii: "t"): bytes.append(0x09)
                case UInt8(ascii: "u"):
                    guard var code = hex4() else { return nil }
                    if (0xD800..<0xDC00).contains(code) {
                        guard text.count - at >= 2, text[at] == UInt8(ascii: "\\"), text[at + 1] == UInt8(ascii: "u")
                        else { return nil }
                        at += 2
                        guard let low = hex4(), (0xDC00..<0xE000).contains(low) else { return nil }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = Unicode.Scalar(code) else { return nil }
                    bytes.append(contentsOf: String(Character(scalar)).utf8)
                default: return nil
                }
            default: bytes.append(byte)
            }
        }
        return nil
    }

    /// Four hex digits of a `\u` escape.
    private mutating func hex4() -> UInt32? {
        guard text.count - at >= 4 else { return nil }
        var code: UInt32 = 0
        for _ in 0..<4 {
            guard let digit = Character(Unicode.Scalar(text[at])).hexDigitValue else { return nil }
            code = code << 4 | UInt32(digit)
            at += 1
        }
        return code
    }
}
