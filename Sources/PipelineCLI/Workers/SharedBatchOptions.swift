import ArgumentParser
import PipelineKit
import SharedBatch

/// `--db URL`, shared by the commands of a batch that workers share through PostgreSQL.
struct SharedBatchOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "The PostgreSQL database the workers share: postgres://user[:password]@host[:port]/database[?sslmode=disable|prefer|require] (a password may also come from PGPASSWORD).",
            valueName: "URL"))
    var db: String

    /// Connects; a database that cannot be reached or read ends the command with exit code 1.
    func open() async throws -> BatchDatabase {
        do {
            return try await BatchDatabase(url: db)
        } catch {
            Output.error("pipeline: \(error)")
            throw ExitCode(1)
        }
    }
}
