import Foundation
import StageKit
import StageRuntime
import TestSupport
import Testing

@testable import MediaStages

/// The file hashes that checkpoints keep (an output's fingerprint, a segment's SHA-256, an item's content
/// fingerprint) give the bytes Python's hashlib gives for the same rules: a finished output or a segment recorded
/// by an earlier run is still recognised.
@Suite struct FileHashingTests {
    /// Sizes around the rules' edges: empty, small, one MiB and a byte on each side, two MiB and a byte over,
    /// and larger than a sampled fingerprint's 4 MiB.
    static let sizes = [0, 5, (1 << 20) - 1, 1 << 20, (1 << 20) + 1, (2 << 20) + 1, (5 << 20) + 333]

    @Test(arguments: sizes) func theHashesMatchAnIndependentReading(size: Int) async throws {
        let folder = FileManager.default.temporaryDirectory.appending(path: "hashing-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appending(path: "bytes")
        let random = SeededRandom("\(#function) \(size)")
        var bytes = Data(capacity: size + 8)
        while bytes.count < size { withUnsafeBytes(of: random.next()) { bytes.append(contentsOf: $0) } }
        try bytes.prefix(size).write(to: file)

        let expected = await runTool("/usr/bin/python3", ["-c", Self.script, file.path])
        try #require(expected.status == 0, "\(expected.stderr)")
        let lines = expected.text.split(separator: "\n").map(String.init)
        try #require(lines.count == 4)
        #expect(try SegmentedTranscode.sha256(of: file) == lines[0])
        #expect(try MediaOutput.fingerprint(of: file) == lines[1])
        #expect(try ContentFingerprint.compute(path: file.path, size: Int64(size), method: .full) == lines[2])
        #expect(try ContentFingerprint.compute(path: file.path, size: Int64(size), method: .sampled) == lines[3])
    }

    @Test func aMissingFileIsAnErrorInWords() {
        let path = "/nonexistent-\(UUID().uuidString)"
        #expect(throws: MediaError.self) { try SegmentedTranscode.sha256(of: URL(filePath: path)) }
        #expect(throws: ContentFingerprint.ReadError.self) {
            try ContentFingerprint.compute(path: path, size: 10, method: .full)
        }
    }

    /// The rules, written again from their descriptions: the whole file; the size in decimal, the first MiB and,
    /// over 2 MiB, the last; the size (8 bytes, little-endian) and every byte, or 16 blocks of 256 KiB evenly
    /// spaced from the start to the end, the first 16 bytes of the digest in hex.
    static let script = """
        import hashlib, os, sys
        path = sys.argv[1]
        data = open(path, 'rb').read()
        size = len(data)
        print(hashlib.sha256(data).hexdigest())
        mib = 1 << 20
        output = str(size).encode() + data[:mib] + (data[size - mib:] if size > 2 * mib else b'')
        print(hashlib.sha256(output).hexdigest())
        prefix = size.to_bytes(8, 'little')
        print('full:%d:%s' % (size, hashlib.sha256(prefix + data).hexdigest()[:32]))
        budget, block = 4 * mib, 256 << 10
        if size <= budget:
            print('full:%d:%s' % (size, hashlib.sha256(prefix + data).hexdigest()[:32]))
        else:
            blocks = budget // block
            stride = (size - block) // (blocks - 1)
            sampled = b''.join(data[i * stride:i * stride + block] for i in range(blocks))
            print('sampled:%d:%s' % (size, hashlib.sha256(prefix + sampled).hexdigest()[:32]))
        """
}
