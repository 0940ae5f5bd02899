import Foundation
import NIOHTTP1
import StageKit
import Testing

@testable import Sandbox

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `Expect: 100-continue` must be answered at once (curl otherwise waits a second per request).
/// Driven over a raw socket, since HTTP clients hide the interim response.
@Suite("Expect: 100-continue")
struct ExpectContinueTests {
    @Test("the interim 100 Continue arrives before the body is sent, then the final response")
    func interimResponse() async throws {
        try await withSandbox { sandbox, client in
            let body = Fixture.bytes(2 << 20, seed: 4)
            let video = try #require(try await client.createVideo(approach: "streaming", size: body.count).json)
            let link = try #require(video.value(at: "upload.upload_link")?.stringValue)
            let target = String(link.dropFirst(sandbox.baseURL.count))
            let head =
                "PUT \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(sandbox.port)\r\n"
                + "Content-Length: \(body.count)\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n"

            let exchange = try await RawExchange.run(port: sandbox.port, head: Array(head.utf8), body: body)
            #expect(exchange.interim.hasPrefix("HTTP/1.1 100 Continue"), "got: \(exchange.interim)")
            #expect(exchange.final.hasPrefix("HTTP/1.1 200"), "got: \(exchange.final)")
            #expect(try await client.storedSHA256(video: Fixture.videoID(video)) == Fixture.sha256Hex(body))
        }
    }
}

/// One HTTP exchange over a blocking socket on its own thread: send the head, read the interim
/// response (with a 0.8 s timeout, shorter than curl's 1 s wait), send the body, read the rest.
enum RawExchange {
    struct Exchange: Sendable {
        var interim: String
        var final: String
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static func run(port: Int, head: [UInt8], body: [UInt8]) async throws -> Exchange {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread {
                continuation.resume(with: Result { try self.exchange(port: port, head: head, body: body) })
            }
            thread.start()
        }
    }

    /// Sends `bytes` and closes the connection without waiting for an answer: a client that
    /// goes away in the middle of a body.
    static func sendThenClose(port: Int, bytes: [UInt8]) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let thread = Thread {
                continuation.resume(
                    with: Result {
                        let descriptor = try self.connected(port: port)
                        defer { close(descriptor) }
                        try self.sendAll(descriptor, bytes)
                    }
                )
            }
            thread.start()
        }
    }

    private static func exchange(port: Int, head: [UInt8], body: [UInt8]) throws -> Exchange {
        let descriptor = try self.connected(port: port)
        defer { close(descriptor) }
        var timeout = timeval(tv_sec: 0, tv_usec: 800_000)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        try self.sendAll(descriptor, head)
        let interim = self.receive(descriptor, untilClosed: false)
        try self.sendAll(descriptor, body)
        timeout.tv_sec = 10
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let final = self.receive(descriptor, untilClosed: true)
        return Exchange(interim: interim, final: final)
    }

    private static func connected(port: Int) throws -> Int32 {
        #if canImport(Glibc)
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw Failure(description: "socket failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(descriptor)
            throw Failure(description: "connect failed")
        }
        return descriptor
    }

    private static func sendAll(_ descriptor: Int32, _ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let result = bytes[sent...].withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, 0) }
            guard result > 0 else { throw Failure(description: "send failed") }
            sent += result
        }
    }

    /// Reads one interim response (up to its blank line), or everything until the peer closes.
    private static func receive(_ descriptor: Int32, untilClosed: Bool) -> String {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, 1, 0) }
            guard count > 0 else { break }
            received.append(buffer[0])
            if !untilClosed, received.count >= 4, received.suffix(4) == [13, 10, 13, 10] { break }
        }
        return String(decoding: received, as: UTF8.self)
    }
}
