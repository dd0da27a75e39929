#include "CCRC32C.h"

#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

int vl_crc32c_hardware_available(void) {
#if defined(__x86_64__)
    unsigned int eax, ebx, ecx, edx;
    return __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_SSE4_2) != 0;
#else
    return 0;
#endif
}

#if defined(__x86_64__)
__attribute__((target("sse4.2")))
uint32_t vl_crc32c_hardware(uint32_t crc, const unsigned char *bytes, size_t count) {
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
#else
uint32_t vl_crc32c_hardware(uint32_t crc, const unsigned char *bytes, size_t count) {
    (void)crc, (void)bytes, (void)count;
    abort();  // never called: vl_crc32c_hardware_available() is 0 here
}
#endif
