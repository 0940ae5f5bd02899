#if canImport(Glibc)
    import Glibc
#endif

extension String {
    /// Whether the string comes before `other` in the byte order of their UTF-8: the order of the ledger's
    /// indexes (SQLite's BINARY collation), in which a plan reads it a range of paths at a time.
    func precedesInByteOrder(_ other: String) -> Bool {
        byteOrder(other) < 0
    }

    /// Negative, zero or positive as the string comes before, is equal to or comes after `other` in the byte
    /// order of their UTF-8. Reads the strings in place (no copy, no reference counting).
    func byteOrder(_ other: String) -> Int {
        let order = utf8.withContiguousStorageIfAvailable { left in
            other.utf8.withContiguousStorageIfAvailable { right -> Int in
                let common = Swift.min(left.count, right.count)
                if common > 0, let a = left.baseAddress, let b = right.baseAddress {
                    let order = memcmp(a, b, common)
                    if order != 0 { return Int(order) }
                }
                return left.count - right.count
            }
        }
        if let order = order ?? nil { return order }
        return utf8.lexicographicallyPrecedes(other.utf8) ? -1 : (utf8.elementsEqual(other.utf8) ? 0 : 1)
    }
}
