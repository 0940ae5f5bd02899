import Foundation
import TestSupport
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// PostgreSQL over TLS, with a certificate authority of the test's own (made with openssl in the test's folder):
/// `submit` and `worker` refuse the server while the address trusts only the system's authorities, or another one,
/// and work over TLS once the address names the authority with `sslrootcert`.
@Suite struct DatabaseTLSTests {
    @Test func aServerSignedByAnAuthorityOfItsOwnIsTrustedOnlyWithThatAuthority() async throws {
        let scratch = try Scratch()
        try makeCertificates(in: scratch.root)
        let server = try await PostgresServer.start()
        try await server.restartWithTLS(certificate: scratch.path("server.crt"), key: scratch.path("server.key"))
        try scratch.write("in/one.txt", "one\n")
        try scratch.write(
            "wf.json",
            """
            {"version": 1, "name": "tls", "inputs": {"path": "in"}, "stages": [
              {"id": "mark", "uses": "exec", "with": {"command": ["sh", "-c", "echo ran >> \(scratch.path("ran").path)"]}}
            ]}
            """)
        let base = "postgres://pipeline@127.0.0.1:\(server.port)/pipeline?sslmode=verify-full"
        for (query, why) in [
            ("", "the system's authorities"), ("&sslrootcert=\(scratch.path("other.crt").path)", "another authority"),
        ] {
            let refused = try await Binary.run(["submit", "wf.json", "--db", base + query], in: scratch.root)
            #expect(refused.status == 1, "trusting \(why): \(refused.stdout)\(refused.stderr)")
            #expect(
                refused.stderr.contains("TLS handshake") && refused.stderr.contains("sslrootcert"),
                "trusting \(why): \(refused.stderr)")
        }
        let trusted = base + "&sslrootcert=\(scratch.path("ca.crt").path)"
        let submitted = try await Binary.run(["submit", "wf.json", "--db", trusted], in: scratch.root)
        #expect(submitted.status == 0, "\(submitted.stdout)\(submitted.stderr)")
        let worker = try Binary.start(["worker", "--db", trusted, "--poll", "50ms"], in: scratch.root)
        defer { if worker.isRunning { worker.signal(SIGKILL) } }
        let ran = scratch.path("ran")
        try await waitUntil("the worker ran the item") { FileManager.default.fileExists(atPath: ran.path) }
        let encrypted = try await server.psql(
            """
            SELECT count(*) FROM pg_stat_ssl JOIN pg_stat_activity USING (pid)
            WHERE datname = 'pipeline' AND usename = 'pipeline' AND application_name <> 'psql' AND NOT ssl
                AND backend_type = 'client backend' AND pid <> pg_backend_pid()
            """)
        #expect(encrypted == "0", "the worker's sessions all use TLS")
        worker.signal(SIGTERM)
        #expect(await worker.exit() == 0, "\(worker.stderr.soFar)")
        let status = try await Binary.run(["status", "--db", trusted], in: scratch.root)
        #expect(status.status == 0, "\(status.stdout)\(status.stderr)")
        let succeeded = try await server.psql("SELECT count(*) FROM items WHERE status = 'succeeded'")
        #expect(succeeded == "1")
        try await server.stop()
    }

    /// An authority (`ca.crt`), a server certificate it signed for 127.0.0.1 and localhost (`server.crt`,
    /// `server.key`), and another authority that signed nothing here (`other.crt`).
    private func makeCertificates(in folder: URL) throws {
        let script = """
            set -e
            openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=pipeline-test-ca -keyout ca.key -out ca.crt
            openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=other-ca -keyout other.key -out other.crt
            openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -keyout server.key -out server.csr
            printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\nbasicConstraints=CA:FALSE\\nextendedKeyUsage=serverAuth\\n' > server.ext
            openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile server.ext -out server.crt
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", script]
        process.currentDirectoryURL = folder
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let status = waitForExit(of: process)
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(status == 0, "openssl: \(message)")
    }
}
