import GRDB
import GRDBSQLite

/// The columns of the row a statement stands on, read straight from SQLite: a plan reads the ledger's rows a
/// chunk at a time, a million of them for a large batch, and makes no value per column on the way (a column
/// read through ``GRDB/Row`` checks its type and converts it first).
///
/// Columns are only valid inside the body of ``forEachRow(of:arguments:_:)``, the one way to get them: they read
/// whatever row the statement stands on at the moment, and the statement's pointer is not given out.
struct SQLiteColumns {
    /// The statement, standing on a row.
    private let statement: SQLiteStatement

    private init(_ statement: SQLiteStatement) {
        self.statement = statement
    }

    /// An integer column.
    func int64(_ column: Int32) -> Int64 {
        sqlite3_column_int64(statement, column)
    }

    /// A real column.
    func double(_ column: Int32) -> Double {
        sqlite3_column_double(statement, column)
    }

    /// A text column that is never NULL. A NULL (a corrupt ledger) or a failed allocation reads as "", where a
    /// read through ``GRDB/Row`` would trap; debug builds assert that the column is not NULL.
    func text(_ column: Int32) -> String {
        assert(sqlite3_column_type(statement, column) != SQLITE_NULL, "a NULL in a NOT NULL column")
        guard let bytes = sqlite3_column_text(statement, column) else { return "" }
        let count = Int(sqlite3_column_bytes(statement, column))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    /// A text column that may be NULL.
    func optionalText(_ column: Int32) -> String? {
        sqlite3_column_type(statement, column) == SQLITE_NULL ? nil : text(column)
    }

    /// Runs `body` on each row `statement` finds with `arguments`.
    static func forEachRow(
        of statement: Statement, arguments: StatementArguments, _ body: (SQLiteColumns) throws -> Void
    ) throws {
        let rows = try Row.fetchCursor(statement, arguments: arguments)
        let columns = SQLiteColumns(statement.sqliteStatement)
        while try rows.next() != nil { try body(columns) }
    }
}
