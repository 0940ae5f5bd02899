import AsyncHTTPClient
import NIOCore
import NIOHTTP1
import StageKit

/// Vimeo's pull approach: the sandbox fetches `upload.link` itself, in the background, into the upload's
/// file. The upload is complete when the last byte is in. A fetch that fails (an error status, a broken
/// connection, a size other than `upload.size`) is recorded on the upload, and the video shows
/// `upload.status: error`. A pull under way when the sandbox stops is not resumed. Cancelled, it records
/// nothing, since the sandbox may have stopped and another may be using the data folder by then; the next
/// start on the folder marks it failed (``VimeoState``).
struct PullFetch {
    let vimeo: VimeoState

    /// Starts fetching the file of upload `id`, if it is a pull that nobody fetches yet.
    func start(_ id: String) async {
        let vimeo = self.vimeo
        await vimeo.startPull(id) { upload in
            guard let link = upload.sourceLink else { return }
            do {
                try await Self.fetch(link, into: upload, vimeo: vimeo)
            } catch {
                // Cancelled: the video is gone, or the sandbox is stopping and the next start marks the pull failed.
                guard !Task.isCancelled else { return }
                await vimeo.failPull(upload.id, "fetching \(link): \(error)")
            }
        }
    }

    private static func fetch(_ link: String, into upload: UploadRecord, vimeo: VimeoState) async throws {
        let uploads = vimeo.uploads
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: link), timeout: .hours(1))
        guard (200..<300).contains(response.status.code) else {
            throw PullFailure("the server answered \(response.status.code) \(response.status.reasonPhrase)")
        }
        var expected = upload.lengthDeferred == true ? nil : upload.length
        if let announced = response.headers.first(name: "Content-Length").flatMap({ Int64($0) }) {
            if let expected, announced != expected {
                throw PullFailure("the file has \(announced) bytes, not upload.size \(expected)")
            }
            if expected == nil {
                expected = try await uploads.declareLength(upload.id, announced).length
            }
        }
        var offset: Int64 = 0
        let free = await vimeo.pullLimit
        let limit = expected ?? free
        try await UploadFile.with(path: uploads.path(of: upload.id), forWriting: true) { file in
            for try await buffer in response.body {
                try Task.checkCancellation()
                if offset + Int64(buffer.readableBytes) > limit {
                    throw PullFailure(
                        expected == nil
                            ? "the file is larger than the \(limit) bytes the account can take"
                            : "the file is longer than \(limit) bytes")
                }
                try await file.write(buffer, at: offset)
                offset += Int64(buffer.readableBytes)
                await uploads.progress(upload.id, offset: offset)
            }
        }
        if let expected, offset != expected {
            throw PullFailure("the transfer ended after \(offset) of \(expected) bytes")
        }
        if expected == nil {
            _ = try await uploads.declareLength(upload.id, offset)
        }
        await vimeo.finishPull(upload.id, offset: offset)
    }
}

/// Why a pull failed, as the sandbox's log says it.
struct PullFailure: Error, CustomStringConvertible {
    var description: String

    init(_ description: String) {
        self.description = description
    }
}
