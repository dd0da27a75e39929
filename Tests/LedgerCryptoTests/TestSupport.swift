import Testing

// MARK: - Hex literals

/// A hex literal in a test vector that is not well-formed hex: a typo in the test, not in the code under test.
struct MalformedHexLiteral: Error, CustomStringConvertible {
    let literal: String
    var description: String { "malformed hex literal in a test vector: \(literal.prefix(80))" }
}

/// Decodes a hex literal copied from a specification, ignoring whitespace and line breaks so long vectors can
/// keep the spec's line layout.
///
/// Deliberately independent of `Hex.decode`, so the vectors do not depend on the code they test.
func bytes(fromHex literal: String) throws -> [UInt8] {
    let digits = Array(literal.filter { !$0.isWhitespace })
    guard digits.count.isMultiple(of: 2), digits.allSatisfy(\.isHexDigit) else {
        throw MalformedHexLiteral(literal: literal)
    }
    var out = [UInt8]()
    out.reserveCapacity(digits.count / 2)
    for index in stride(from: 0, to: digits.count, by: 2) {
        guard let byte = UInt8(String(digits[index...index + 1]), radix: 16) else {
            throw MalformedHexLiteral(literal: literal)
        }
        out.append(byte)
    }
    return out
}

/// The UTF-8 bytes of `text`.
func utf8(_ text: String) -> [UInt8] { Array(text.utf8) }

// MARK: - Bit flipping

/// `bytes` with bit `bit` (0 = least significant bit of the first byte) inverted.
func flippingBit(_ bit: Int, of bytes: [UInt8]) -> [UInt8] {
    var copy = bytes
    copy[bit / 8] ^= UInt8(1) << UInt8(bit % 8)
    return copy
}
