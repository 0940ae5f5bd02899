// CRC-32C (Castagnoli), the checksum S3 carries in `x-amz-checksum-crc32c`: with the CPU's CRC32
// instruction where there is one (SSE 4.2 on x86-64, the CRC extension on arm64), else with tables.
#ifndef CCRC32C_H
#define CCRC32C_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Continues `crc` (0 for a start) over `length` bytes and returns the CRC-32C of all the bytes so
/// far: crc32c_update(crc32c_update(0, a), b) is the CRC-32C of a followed by b.
uint32_t crc32c_update(uint32_t crc, const void *bytes, size_t length);

/// The same with tables only, as on a CPU without the instruction (exported for tests).
uint32_t crc32c_update_portable(uint32_t crc, const void *bytes, size_t length);

#ifdef __cplusplus
}
#endif

#endif
