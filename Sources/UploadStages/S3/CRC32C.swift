/// CRC-32C (Castagnoli), as S3's `x-amz-checksum-crc32c` carries it, computed slicing-by-8.
struct CRC32C {
    private static let tables: [[UInt32]] = {
        var tables = [[UInt32]](repeating: [UInt32](repeating: 0, count: 256), count: 8)
        for byte in 0..<256 {
            var crc = UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
            tables[0][byte] = crc
        }
        for byte in 0..<256 {
            for slice in 1..<8 {
                let previous = tables[slice - 1][byte]
                tables[slice][byte] = (previous >> 8) ^ tables[0][Int(previous & 0xFF)]
            }
        }
        return tables
    }()

    private var crc: UInt32 = 0xFFFF_FFFF

    /// Adds bytes.
    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        let t = Self.tables
        var crc = self.crc
        var index = 0
        let count = bytes.count
        while index + 8 <= count {
            let low = crc ^ (UInt32(bytes[index]) | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2]) << 16 | UInt32(bytes[index + 3]) << 24)
            crc = t[7][Int(low & 0xFF)] ^ t[6][Int((low >> 8) & 0xFF)] ^ t[5][Int((low >> 16) & 0xFF)] ^ t[4][Int(low >> 24)]
                ^ t[3][Int(bytes[index + 4])] ^ t[2][Int(bytes[index + 5])] ^ t[1][Int(bytes[index + 6])] ^ t[0][Int(bytes[index + 7])]
            index += 8
        }
        while index < count {
            crc = (crc >> 8) ^ t[0][Int((crc ^ UInt32(bytes[index])) & 0xFF)]
            index += 1
        }
        self.crc = crc
    }

    /// The checksum as 4 big-endian bytes.
    var bytes: [UInt8] {
        let value = ~crc
        return [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }
}
