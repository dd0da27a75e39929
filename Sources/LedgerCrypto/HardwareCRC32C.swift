internal import COpenSSL

/// CRC-32C (Castagnoli) with the CPU's own instruction, where it has one (x86-64 with SSE 4.2). Only the
/// hardware step lives here, beside the other C; the checksum itself, with its portable fallback, is
/// `Ledger.CRC32C`.
public enum HardwareCRC32C {
    /// Whether this CPU runs `update`; asked of the CPU once.
    public static let isAvailable = vl_crc32c_hardware_available() != 0

    /// Continues the CRC register `crc` (the running value, before the final inversion) over `raw`.
    /// Requires `isAvailable`.
    public static func update(_ crc: UInt32, _ raw: UnsafeRawBufferPointer) -> UInt32 {
        precondition(isAvailable, "this CPU has no CRC-32C instruction")
        guard let base = raw.baseAddress else { return crc }
        #if arch(x86_64)
            return vl_crc32c_hardware(crc, base.assumingMemoryBound(to: UInt8.self), raw.count)
        #else
            preconditionFailure("no CRC-32C instruction on this architecture")
        #endif
    }
}
