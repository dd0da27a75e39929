/// A QR code (ISO/IEC 18004) of some bytes, in byte mode at error correction level M: the voting link of a voter
/// letter, scanned by a phone. Written here rather than taken from a package (the project keeps its dependencies
/// few); `Tests/VoteLedgerTests/QRCodeTests.swift` checks it with an independent decoder (`zbarimg`).
public struct QRCode: Sendable {
    /// The version (1-40): the symbol is 17 + 4 × version modules wide.
    public let version: Int
    /// Modules per side.
    public let size: Int
    /// Row-major, `true` for dark.
    private var modules: [Bool]
    /// Modules that belong to the finder, timing, alignment, format and version patterns (never masked).
    private var isFunction: [Bool]

    /// Why some bytes have no QR code.
    public struct TooLong: Error, Sendable, CustomStringConvertible {
        public let count: Int
        public var description: String {
            "\(count) bytes do not fit in a QR code at error correction level M (at most 2331)"
        }
    }

    /// Whether the module in `column`, `row` (from the top left, 0-based) is dark.
    public subscript(column: Int, row: Int) -> Bool { modules[row * size + column] }

    /// The smallest QR code of `bytes` (byte mode, level M), with the mask of least penalty.
    public init(bytes: [UInt8]) throws(TooLong) {
        guard let version = (1...40).first(where: { QRCode.dataCapacityBits($0) >= QRCode.bitLength(bytes, $0) })
        else { throw TooLong(count: bytes.count) }
        self.version = version
        size = 17 + 4 * version
        modules = Array(repeating: false, count: size * size)
        isFunction = modules
        drawFunctionPatterns()
        draw(codewords: QRCode.codewords(bytes, version: version))
        var best = (mask: 0, penalty: Int.max)
        for mask in 0..<8 {
            applyMask(mask)
            drawFormatBits(mask: mask)
            let penalty = penaltyScore()
            if penalty < best.penalty { best = (mask, penalty) }
            applyMask(mask)  // XOR again: undone
        }
        applyMask(best.mask)
        drawFormatBits(mask: best.mask)
    }

    // MARK: Capacity and codewords

    /// Bits of mode, count and data for `bytes` in `version`.
    private static func bitLength(_ bytes: [UInt8], _ version: Int) -> Int {
        let countBits = version <= 9 ? 8 : 16
        return bytes.count < 1 << countBits ? 4 + countBits + 8 * bytes.count : Int.max
    }

    /// Data bits a symbol of `version` holds at level M.
    private static func dataCapacityBits(_ version: Int) -> Int {
        8 * (rawDataModules(version) / 8 - eccPerBlock[version] * blockCount[version])
    }

    /// Modules left for data and error correction once the function patterns are drawn.
    private static func rawDataModules(_ version: Int) -> Int {
        var result = (16 * version + 128) * version + 64
        if version >= 2 {
            let alignments = version / 7 + 2
            result -= (25 * alignments - 10) * alignments - 55
            if version >= 7 { result -= 36 }
        }
        return result
    }

    /// Error correction codewords per block at level M, by version (index 0 unused).
    private static let eccPerBlock = [
        0, 10, 16, 26, 18, 24, 16, 18, 22, 22, 26, 30, 22, 22, 24, 24, 28, 28, 26, 26, 26, 26, 28, 28, 28, 28, 28,
        28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28, 28,
    ]
    /// Error correction blocks at level M, by version (index 0 unused).
    private static let blockCount = [
        0, 1, 1, 1, 2, 2, 4, 4, 4, 5, 5, 5, 8, 9, 9, 10, 10, 11, 13, 14, 16, 17, 17, 18, 20, 21, 23, 25, 26, 28, 29,
        31, 33, 35, 37, 38, 40, 43, 45, 47, 49,
    ]

    /// The final sequence of codewords: the data (mode 0100, count, bytes, terminator, pad bytes 0xEC 0x11) split
    /// into blocks, each with its Reed-Solomon codewords, interleaved.
    private static func codewords(_ bytes: [UInt8], version: Int) -> [UInt8] {
        var bits: [Bool] = []
        func append(_ value: Int, _ count: Int) {
            for shift in stride(from: count - 1, through: 0, by: -1) { bits.append((value >> shift) & 1 == 1) }
        }
        append(0b0100, 4)
        append(bytes.count, version <= 9 ? 8 : 16)
        for byte in bytes { append(Int(byte), 8) }
        let capacity = dataCapacityBits(version)
        append(0, min(4, capacity - bits.count))
        append(0, (8 - bits.count % 8) % 8)
        var data: [UInt8] = stride(from: 0, to: bits.count, by: 8).map { start in
            bits[start..<start + 8].reduce(0) { $0 << 1 | ($1 ? 1 : 0) }
        }
        var pad: UInt8 = 0xEC
        while data.count < capacity / 8 {
            data.append(pad)
            pad ^= 0xEC ^ 0x11
        }

        let blocks = blockCount[version]
        let ecc = eccPerBlock[version]
        let raw = rawDataModules(version) / 8
        let shortBlocks = blocks - raw % blocks
        let shortData = raw / blocks - ecc
        let divisor = ReedSolomon.divisor(degree: ecc)
        var dataBlocks: [[UInt8]] = []
        var eccBlocks: [[UInt8]] = []
        var offset = 0
        for index in 0..<blocks {
            let length = shortData + (index < shortBlocks ? 0 : 1)
            let block = Array(data[offset..<offset + length])
            offset += length
            dataBlocks.append(block)
            eccBlocks.append(ReedSolomon.remainder(block, divisor: divisor))
        }
        var result: [UInt8] = []
        for column in 0...shortData {
            for block in dataBlocks where column < block.count { result.append(block[column]) }
        }
        for column in 0..<ecc {
            for block in eccBlocks { result.append(block[column]) }
        }
        return result
    }

    // MARK: Drawing

    private mutating func set(_ column: Int, _ row: Int, _ dark: Bool) {
        modules[row * size + column] = dark
        isFunction[row * size + column] = true
    }

    private mutating func drawFunctionPatterns() {
        for index in 0..<size {
            set(6, index, index % 2 == 0)
            set(index, 6, index % 2 == 0)
        }
        for (column, row) in [(3, 3), (size - 4, 3), (3, size - 4)] {
            for dy in -4...4 {
                for dx in -4...4 where (0..<size).contains(column + dx) && (0..<size).contains(row + dy) {
                    let distance = max(abs(dx), abs(dy))
                    set(column + dx, row + dy, distance != 2 && distance != 4)
                }
            }
        }
        let positions = alignmentPositions()
        for (i, row) in positions.enumerated() {
            for (j, column) in positions.enumerated() {
                let corner =
                    (i == 0 && j == 0) || (i == 0 && j == positions.count - 1) || (i == positions.count - 1 && j == 0)
                if corner { continue }
                for dy in -2...2 {
                    for dx in -2...2 { set(column + dx, row + dy, max(abs(dx), abs(dy)) != 1) }
                }
            }
        }
        drawFormatBits(mask: 0)  // reserves the format areas; drawn again with the chosen mask
        if version >= 7 {
            var remainder = version
            for _ in 0..<12 { remainder = (remainder << 1) ^ ((remainder >> 11) * 0x1F25) }
            let bits = version << 12 | remainder
            for index in 0..<18 {
                let dark = (bits >> index) & 1 == 1
                let (a, b) = (size - 11 + index % 3, index / 3)
                set(a, b, dark)
                set(b, a, dark)
            }
        }
    }

    /// The centres of the alignment patterns, along each axis.
    private func alignmentPositions() -> [Int] {
        guard version > 1 else { return [] }
        let count = version / 7 + 2
        let step = version == 32 ? 26 : (version * 4 + count * 2 + 1) / (count * 2 - 2) * 2
        return [6] + (0..<(count - 1)).map { size - 7 - $0 * step }.reversed()
    }

    /// The 15 format bits (level M = 00, the mask, BCH code, XOR 0x5412), in both copies, and the dark module.
    private mutating func drawFormatBits(mask: Int) {
        let data = 0b00 << 3 | mask
        var remainder = data
        for _ in 0..<10 { remainder = (remainder << 1) ^ ((remainder >> 9) * 0x537) }
        let bits = (data << 10 | remainder) ^ 0x5412
        func bit(_ index: Int) -> Bool { (bits >> index) & 1 == 1 }
        for index in 0...5 { set(8, index, bit(index)) }
        set(8, 7, bit(6))
        set(8, 8, bit(7))
        set(7, 8, bit(8))
        for index in 9..<15 { set(14 - index, 8, bit(index)) }
        for index in 0..<8 { set(size - 1 - index, 8, bit(index)) }
        for index in 8..<15 { set(8, size - 15 + index, bit(index)) }
        set(8, size - 8, true)
    }

    /// The codewords' bits in the zigzag of two-module columns, from the bottom right, skipping function modules.
    private mutating func draw(codewords: [UInt8]) {
        var index = 0
        var right = size - 1
        while right >= 1 {
            if right == 6 { right = 5 }
            for vertical in 0..<size {
                for j in 0..<2 {
                    let column = right - j
                    let upward = (right + 1) & 2 == 0
                    let row = upward ? size - 1 - vertical : vertical
                    if !isFunction[row * size + column], index < codewords.count * 8 {
                        modules[row * size + column] = (codewords[index >> 3] >> (7 - (index & 7))) & 1 == 1
                        index += 1
                    }
                }
            }
            right -= 2
        }
    }

    /// XORs the data modules with mask pattern `mask` (0-7); applying it twice undoes it.
    private mutating func applyMask(_ mask: Int) {
        for row in 0..<size {
            for column in 0..<size where !isFunction[row * size + column] {
                let (x, y) = (column, row)
                let flip =
                    switch mask {
                    case 0: (x + y) % 2 == 0
                    case 1: y % 2 == 0
                    case 2: x % 3 == 0
                    case 3: (x + y) % 3 == 0
                    case 4: (x / 3 + y / 2) % 2 == 0
                    case 5: x * y % 2 + x * y % 3 == 0
                    case 6: (x * y % 2 + x * y % 3) % 2 == 0
                    default: ((x + y) % 2 + x * y % 3) % 2 == 0
                    }
                if flip { modules[row * size + column].toggle() }
            }
        }
    }

    /// The penalty of the symbol as it stands (ISO/IEC 18004 §7.8.3): runs of five or more, 2 × 2 blocks,
    /// finder-like 1:1:3:1:1 patterns beside four light modules, and the balance of dark and light.
    private func penaltyScore() -> Int {
        var penalty = 0
        let finderLike: [Bool] = [true, false, true, true, true, false, true]
        for horizontal in [true, false] {
            for line in 0..<size {
                let cell = { (index: Int) -> Bool in horizontal ? self[index, line] : self[line, index] }
                var run = 1
                for index in 1..<size {
                    if cell(index) == cell(index - 1) {
                        run += 1
                        if run == 5 { penalty += 3 } else if run > 5 { penalty += 1 }
                    } else {
                        run = 1
                    }
                }
                for start in 0...(size - 7) where (0..<7).allSatisfy({ cell(start + $0) == finderLike[$0] }) {
                    let lightBefore = (start - 4..<start).allSatisfy { $0 < 0 || !cell($0) }
                    let lightAfter = (start + 7..<start + 11).allSatisfy { $0 >= size || !cell($0) }
                    if lightBefore || lightAfter { penalty += 40 }
                }
            }
        }
        for row in 0..<(size - 1) {
            for column in 0..<(size - 1) {
                let dark = self[column, row]
                if dark == self[column + 1, row] && dark == self[column, row + 1] && dark == self[column + 1, row + 1] {
                    penalty += 3
                }
            }
        }
        let dark = modules.count(where: { $0 })
        let total = size * size
        penalty += ((abs(dark * 20 - total * 10) + total - 1) / total - 1) * 10
        return penalty
    }

    // MARK: SVG

    /// The symbol as an SVG image with the four-module quiet zone, one path of unit squares, `width` wide.
    public func svg(width: String) -> String {
        var path = ""
        for row in 0..<size {
            for column in 0..<size where self[column, row] { path += "M\(column + 4),\(row + 4)h1v1h-1z" }
        }
        let side = size + 8
        return """
            <svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 \(side) \(side)" width="\(width)" height="\(width)" \
            shape-rendering="crispEdges" role="img"><rect width="\(side)" height="\(side)" fill="#fff"/>\
            <path d="\(path)" fill="#000"/></svg>
            """
    }
}

/// Reed-Solomon over GF(256) with the polynomial x⁸ + x⁴ + x³ + x² + 1 (0x11D), as QR codes use it.
private enum ReedSolomon {
    /// The generator polynomial of `degree` (roots α⁰ … α^(degree-1)), highest coefficient dropped.
    static func divisor(degree: Int) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: degree)
        result[degree - 1] = 1
        var root: UInt8 = 1
        for _ in 0..<degree {
            for j in 0..<degree {
                result[j] = multiply(result[j], root)
                if j + 1 < degree { result[j] ^= result[j + 1] }
            }
            root = multiply(root, 0x02)
        }
        return result
    }

    /// The remainder of `data` times x^degree divided by the generator: the block's error correction codewords.
    static func remainder(_ data: [UInt8], divisor: [UInt8]) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: divisor.count)
        for byte in data {
            let factor = byte ^ result.removeFirst()
            result.append(0)
            for (index, coefficient) in divisor.enumerated() { result[index] ^= multiply(coefficient, factor) }
        }
        return result
    }

    static func multiply(_ x: UInt8, _ y: UInt8) -> UInt8 {
        var product = 0
        for bit in stride(from: 7, through: 0, by: -1) {
            product = (product << 1) ^ ((product >> 7) * 0x11D)
            product ^= Int((y >> UInt8(bit)) & 1) * Int(x)
        }
        return UInt8(product & 0xFF)
    }
}
