#ifndef VOTELEDGER_CCRC32C_H
#define VOTELEDGER_CCRC32C_H

// The CPU's CRC-32C (Castagnoli) instruction, for the frame checksum. Only the hardware step is C; the
// checksum with its portable fallback is `Ledger.CRC32C`.

#include <stddef.h>
#include <stdint.h>

/// Whether this CPU has the SSE 4.2 `crc32` instruction (x86-64 only; 0 elsewhere).
int vl_crc32c_hardware_available(void);

/// Continues the CRC-32C register `crc` (before the final inversion) over `count` bytes with the `crc32`
/// instruction, 8 bytes at a time. Call it only when vl_crc32c_hardware_available() says so.
uint32_t vl_crc32c_hardware(uint32_t crc, const unsigned char *bytes, size_t count);

#endif
