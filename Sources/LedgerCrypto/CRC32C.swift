internal import CCRC32C

/// CRC-32C (Castagnoli, RFC 3720 §B.4), the frame checksum that tells a torn write from a complete one:
/// reflected polynomial 0x82F63B78, initial value and final XOR 0xFFFFFFFF. The CPU's CRC-32C instruction
/// where it has one (`HardwareCRC32C`), else slicing-by-8 in Swift.
public enum CRC32C {
    private static let tables: [UInt32] = {
        var table = [UInt32](repeating: 0, count: 8 * 256)
        for n in 0..<256 {
            var crc = UInt32(n)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
            table[n] = crc
        }
        for n in 0..<256 {
            var crc = table[n]
            for slice in 1..<8 {
                crc = table[Int(crc & 0xff)] ^ (crc >> 8)
                table[slice * 256 + n] = crc
            }
        }
        return table
    }()

    /// The checksum of `raw`.
    public static func checksum(_ raw: UnsafeRawBufferPointer) -> UInt32 {
        guard HardwareCRC32C.isAvailable else { return portableChecksum(raw) }
        return HardwareCRC32C.update(0xFFFF_FFFF, raw) ^ 0xFFFF_FFFF
    }

    /// The checksum of `raw` by slicing-by-8, on any CPU.
    static func portableChecksum(_ raw: UnsafeRawBufferPointer) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        tables.withUnsafeBufferPointer { t in
            var index = 0
            let count = raw.count
            while count - index >= 8 {
                let word =
                    UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: index, as: UInt64.self))
                    ^ UInt64(crc)
                crc =
                    t[7 * 256 + Int(word & 0xff)] ^ t[6 * 256 + Int((word >> 8) & 0xff)]
                    ^ t[5 * 256 + Int((word >> 16) & 0xff)] ^ t[4 * 256 + Int((word >> 24) & 0xff)]
                    ^ t[3 * 256 + Int((word >> 32) & 0xff)] ^ t[2 * 256 + Int((word >> 40) & 0xff)]
                    ^ t[1 * 256 + Int((word >> 48) & 0xff)] ^ t[Int(word >> 56)]
                index += 8
            }
            while index < count {
                crc = t[Int((crc ^ UInt32(raw[index])) & 0xff)] ^ (crc >> 8)
                index += 1
            }
        }
        return crc ^ 0xFFFF_FFFF
    }

    /// The checksum of `bytes`.
    public static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0) }
    }
}

/// CRC-32C with the CPU's own instruction, where it has one (x86-64 with SSE 4.2).
enum HardwareCRC32C {
    /// Whether this CPU runs `update`; asked of the CPU once.
    static let isAvailable = vl_crc32c_hardware_available() != 0

    /// Continues the CRC register `crc` (the running value, before the final inversion) over `raw`.
    /// Requires `isAvailable`.
    static func update(_ crc: UInt32, _ raw: UnsafeRawBufferPointer) -> UInt32 {
        precondition(isAvailable, "this CPU has no CRC-32C instruction")
        guard let base = raw.baseAddress else { return crc }
        return vl_crc32c_hardware(crc, base.assumingMemoryBound(to: UInt8.self), raw.count)
    }
}
