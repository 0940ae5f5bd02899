import Foundation
import HTTPTypes
import StageKit

extension VimeoState {
    /// Creates a picture of a video; its image comes later, with a `PUT` to its link.
    func createPicture(videoID: String) throws -> PictureRecord {
        guard self.section.videos[videoID] != nil else { throw APIError.notFound("video") }
        let picture = PictureRecord(
            id: String(self.section.nextVideoNumber), videoID: videoID, active: false, token: RandomID.hex(bytes: 16),
            bytes: nil, contentType: nil, createdAt: Date())
        self.section.nextVideoNumber += 1
        self.section.pictures[picture.id] = picture
        self.core.index.persist()
        return picture
    }

    /// The picture `id`, `nil` when there is none.
    func picture(_ id: String) -> PictureRecord? {
        self.section.pictures[id]
    }

    /// A video's pictures, oldest first.
    func pictures(of videoID: String) -> [PictureRecord] {
        self.section.pictures.values.filter { $0.videoID == videoID }.sorted {
            ($0.createdAt, $0.id) < ($1.createdAt, $1.id)
        }
    }

    /// Stores a picture's image (written before the index records it, so a crash never leaves a recorded
    /// image missing).
    func storeImage(_ image: Data, contentType: String, pictureID: String, token: String?) throws {
        guard var picture = self.section.pictures[pictureID], token == picture.token else {
            throw APIError.notFound("picture")
        }
        do {
            let path = self.core.folder.uploadPath(VimeoFiles.picture(pictureID))
            try image.write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw APIError(
                status: .internalServerError, code: 8000, message: "The image could not be stored.",
                developerMessage: "\(error)")
        }
        picture.bytes = Int64(image.count)
        picture.contentType = contentType
        self.section.pictures[pictureID] = picture
        self.core.index.persist()
    }

    /// Makes a picture its video's active one (the others stop being active), or not active.
    func setActive(_ active: Bool, pictureID: String, videoID: String) throws -> PictureRecord {
        guard var picture = self.section.pictures[pictureID], picture.videoID == videoID else {
            throw APIError.notFound("picture")
        }
        if active {
            guard picture.bytes != nil else {
                throw APIError.invalidParameter(
                    "active", "The picture has no image yet: PUT the image to its link first.")
            }
            for other in self.pictures(of: videoID) where other.id != pictureID && other.active {
                self.section.pictures[other.id]?.active = false
            }
        }
        picture.active = active
        self.section.pictures[pictureID] = picture
        self.core.index.persist()
        return picture
    }

    /// The API JSON of a picture.
    func render(_ picture: PictureRecord) -> JSONValue {
        PictureRepresentation.render(picture, baseURL: self.baseURL)
    }

    /// Forgets a video's pictures and their images.
    func removePictures(of videoID: String) {
        for picture in self.pictures(of: videoID) {
            self.section.pictures.removeValue(forKey: picture.id)
            try? FileManager.default.removeItem(atPath: self.core.folder.uploadPath(VimeoFiles.picture(picture.id)))
        }
    }
}
