import ArgumentParser
import PipelineKit
import SharedBatch

/// `--db URL`, shared by the commands of a batch that workers share through PostgreSQL.
struct SharedBatchOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The PostgreSQL database the workers share: postgres://user[:password]@host[:port]/database[?sslmode=disable|prefer|require|verify-full][&sslrootcert=CA.pem] (a password may also come from PGPASSWORD).",
            valueName: "URL"))
    var db: String

    /// Connects for a worker: a worker is often started beside its database (a service manager, a compose file)
    /// and waits for a server that does not answer yet for its whole patience, not the 10 s an interactive
    /// command gives it; a database that refuses it or cannot be read ends the command with exit code 1.
    func openForWorker() async throws(CommandFailure) -> BatchDatabase {
        do {
            return try await BatchDatabase(
                url: db, opening: .creatingBatch, startPatience: BatchDatabase.defaultPatience)
        } catch {
            throw .failed(error)
        }
    }

    /// Runs `body` with the database at `url` (none when `url` is nil), and closes it afterwards. `opening` says
    /// whether a database without a batch gets one; `patience` is how long an operation waits for an unreachable
    /// server (by default the database's own).
    static func using<T>(
        _ url: String?, opening: BatchDatabase.Opening, patience: Duration? = nil,
        _ body: (BatchDatabase?) async throws -> T
    ) async throws -> T {
        guard let url else { return try await body(nil) }
        let database = try await open(url, opening: opening, patience: patience)
        do {
            let value = try await body(database)
            await database.close()
            return value
        } catch {
            await database.close()
            throw error
        }
    }

    /// Connects to the database at `url`; one that cannot be reached or read ends the command with exit code 1, one
    /// without a batch that `opening` does not create with exit code 3.
    static func open(_ url: String, opening: BatchDatabase.Opening, patience: Duration? = nil)
        async throws(CommandFailure) -> BatchDatabase
    {
        do {
            return try await BatchDatabase(
                url: url, opening: opening, patience: patience ?? BatchDatabase.defaultPatience)
        } catch {
            throw .failed(error)
        }
    }
}
