#ifndef VOTELEDGER_COPENSSL_SHIM_H
#define VOTELEDGER_COPENSSL_SHIM_H

// The low-level SHA256_* API is the fastest path (no EVP dispatch, context on the stack) and is still
// supported in OpenSSL 3; we opt out of its deprecation markers rather than pay for EVP per leaf hash.
#define OPENSSL_SUPPRESS_DEPRECATED 1

#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <openssl/x509.h>

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

/// BIO_get_mem_data is a macro; Swift cannot call it directly.
static inline long vl_bio_mem_data(BIO *bio, char **out) {
    return BIO_get_mem_data(bio, out);
}

/// The type of an EVP_PKEY, so Swift can refuse a PEM key that is not Ed25519.
static inline int vl_pkey_is_ed25519(const EVP_PKEY *pkey) {
    return EVP_PKEY_get_id(pkey) == EVP_PKEY_ED25519;
}

/// Whether this CPU has the SSE 4.2 `crc32` instruction, which computes CRC-32C (Castagnoli).
static inline int vl_crc32c_hardware_available(void) {
#if defined(__x86_64__)
    unsigned int eax, ebx, ecx, edx;
    return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_SSE4_2) != 0;
#else
    return 0;
#endif
}

#if defined(__x86_64__)
/// Continues the CRC-32C register `crc` (before the final inversion) over `count` bytes with the `crc32`
/// instruction, 8 bytes at a time. Call it only when vl_crc32c_hardware_available() says so.
__attribute__((target("sse4.2")))
static inline uint32_t vl_crc32c_hardware(uint32_t crc, const unsigned char *bytes, size_t count) {
    uint64_t wide = crc;
    for (; count >= 8; bytes += 8, count -= 8) {
        uint64_t word;
        memcpy(&word, bytes, 8);
        wide = __builtin_ia32_crc32di(wide, word);
    }
    uint32_t narrow = (uint32_t)wide;
    for (; count > 0; bytes++, count--) narrow = __builtin_ia32_crc32qi(narrow, *bytes);
    return narrow;
}
#endif

#endif
