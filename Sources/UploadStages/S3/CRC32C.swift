import CCRC32C

/// CRC-32C (Castagnoli), as S3's `x-amz-checksum-crc32c` carries it; computed by the CCRC32C C target
/// with the CPU's CRC32 instruction (a table-driven Swift version capped a part's checksum far below
/// the speed of the upload).
struct CRC32C {
    private var crc: UInt32 = 0

    /// Adds bytes.
    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        crc = crc32c_update(crc, bytes.baseAddress, bytes.count)
    }

    /// The checksum as 4 big-endian bytes.
    var bytes: [UInt8] {
        [UInt8(crc >> 24), UInt8((crc >> 16) & 0xFF), UInt8((crc >> 8) & 0xFF), UInt8(crc & 0xFF)]
    }
}
