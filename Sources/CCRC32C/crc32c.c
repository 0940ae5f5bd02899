// CRC-32C: the CPU instruction when present (8 bytes per step), else slicing-by-8 tables.
#include "CCRC32C.h"

#include <pthread.h>
#include <string.h>

#if defined(__x86_64__)
#include <nmmintrin.h>
#elif defined(__aarch64__)
#include <arm_acle.h>
#endif

static uint32_t table[8][256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void make_table(void) {
    for (uint32_t byte = 0; byte < 256; byte++) {
        uint32_t crc = byte;
        for (int bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
        table[0][byte] = crc;
    }
    for (int byte = 0; byte < 256; byte++) {
        for (int slice = 1; slice < 8; slice++) {
            uint32_t previous = table[slice - 1][byte];
            table[slice][byte] = (previous >> 8) ^ table[0][previous & 0xFF];
        }
    }
}

uint32_t crc32c_update_portable(uint32_t crc, const void *bytes, size_t length) {
    pthread_once(&table_once, make_table);
    const uint8_t *p = bytes;
    crc = ~crc;
    while (length >= 8) {
        uint32_t low = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
        crc = table[7][low & 0xFF] ^ table[6][(low >> 8) & 0xFF] ^ table[5][(low >> 16) & 0xFF] ^ table[4][low >> 24] ^
              table[3][p[4]] ^ table[2][p[5]] ^ table[1][p[6]] ^ table[0][p[7]];
        p += 8;
        length -= 8;
    }
    while (length--) crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xFF];
    return ~crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static uint32_t with_instruction(uint32_t crc, const uint8_t *p, size_t length) {
    uint64_t c = ~crc;
    for (; length >= 8; p += 8, length -= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        c = _mm_crc32_u64(c, word);
    }
    uint32_t c32 = (uint32_t)c;
    while (length--) c32 = _mm_crc32_u8(c32, *p++);
    return ~c32;
}
static int has_instruction(void) { return __builtin_cpu_supports("sse4.2"); }
#elif defined(__aarch64__) && defined(__ARM_FEATURE_CRC32)
static uint32_t with_instruction(uint32_t crc, const uint8_t *p, size_t length) {
    uint32_t c = ~crc;
    for (; length >= 8; p += 8, length -= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        c = __crc32cd(c, word);
    }
    while (length--) c = __crc32cb(c, *p++);
    return ~c;
}
static int has_instruction(void) { return 1; }
#else
static uint32_t with_instruction(uint32_t crc, const uint8_t *p, size_t length) {
    return crc32c_update_portable(crc, p, length);
}
static int has_instruction(void) { return 0; }
#endif

uint32_t crc32c_update(uint32_t crc, const void *bytes, size_t length) {
    return has_instruction() ? with_instruction(crc, bytes, length) : crc32c_update_portable(crc, bytes, length);
}
