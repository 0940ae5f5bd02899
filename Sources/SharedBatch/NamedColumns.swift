import PostgresNIO

/// A row's columns by name, decoded to the type the caller expects. A query that selects a shared column list
/// (``PostgresStore/itemColumns``) and columns of its own is read this way, so that a column added to the list
/// cannot shift what the rest of the row means.
struct NamedColumns {
    private let row: PostgresRandomAccessRow

    /// The columns of `row`, a row read on its own (a claim, one item); its names are checked as ``rows(of:)``
    /// checks a result's.
    init(_ row: PostgresRow) throws {
        try Self.checkNames(of: row)
        self.init(checked: row)
    }

    /// The columns of every row of `result`, the rows of one query. They all have the result's columns, so the
    /// names are checked once, on the first row, rather than for every row: a cancel that waits for workers reads
    /// all of a workflow's items five times a second.
    static func rows(of result: [PostgresRow]) throws -> [NamedColumns] {
        guard let first = result.first else { return [] }
        try checkNames(of: first)
        return result.map(NamedColumns.init(checked:))
    }

    /// The columns of `row`, whose names were checked.
    private init(checked row: PostgresRow) {
        self.row = row.makeRandomAccess()
    }

    /// Refuses a row with two columns of one name: looked up by that name, only one of them could be read, and
    /// which one would be PostgresNIO's choice.
    private static func checkNames(of row: PostgresRow) throws {
        var names = Set<String>()
        for cell in row where !names.insert(cell.columnName).inserted {
            throw RowShapeError(message: "the row has two columns named \(cell.columnName)")
        }
    }

    /// The column `name`, decoded.
    subscript<T: PostgresDecodable>(_ name: String) -> T {
        get throws {
            guard row.contains(name) else { throw RowShapeError(message: "the row has no column \(name)") }
            return try row[name].decode(T.self)
        }
    }
}

/// A row that does not have the columns its reader expects: a query and its reader that disagree, which the
/// database layer reports as a damaged state rather than reading the wrong column.
struct RowShapeError: Error, CustomStringConvertible {
    /// What is wrong with the row, naming the column (the whole reason: the caller says which read it was).
    var message: String
    /// The message, as it reads in the caller's "cannot … in the database …" error.
    var description: String { message }
}
