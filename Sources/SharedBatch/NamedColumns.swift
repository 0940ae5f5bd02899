import PostgresNIO

/// A row's columns by name, decoded to the type the caller expects. A query that selects a shared column list
/// (``PostgresStore/itemColumns``) and columns of its own is read this way, so that a column added to the list
/// cannot shift what the rest of the row means.
struct NamedColumns {
    private let row: PostgresRandomAccessRow

    /// The columns of `row`; a row with two columns of one name is refused, as neither could be read by it.
    init(_ row: PostgresRow) throws {
        let row = row.makeRandomAccess()
        var names = Set<String>()
        for cell in row where !names.insert(cell.columnName).inserted {
            throw RowShapeError(message: "the row has two columns named \(cell.columnName)")
        }
        self.row = row
    }

    /// The column `name`, decoded.
    subscript<T: PostgresDecodable>(_ name: String) -> T {
        get throws {
            guard row.contains(name) else { throw RowShapeError(message: "the row has no column \(name)") }
            return try row[name].decode(T.self)
        }
    }
}

/// A row that does not have the columns its reader expects.
struct RowShapeError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
