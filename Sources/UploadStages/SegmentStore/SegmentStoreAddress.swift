package import AsyncHTTPClient
import Foundation
import StageKit
package import StageRuntime

/// Opens the segment store an option names (`--segments`): a folder's path or a `file://` URL gives a
/// ``StageRuntime/FolderSegmentStore`` (the folder must exist: a shared filesystem that is not mounted must not
/// pass for an empty store), `s3://bucket/prefix` an ``S3SegmentStore`` configured from `environment` as the
/// AWS CLI is (see ``S3SegmentStore/init(address:environment:httpClient:)``). Anything else throws
/// ``StageRuntime/SegmentStoreError/Code/invalidAddress``.
package func segmentStore(address: String, environment: [String: String], httpClient: HTTPClient) throws
    -> any SegmentStore
{
    let address = address.trimmingCharacters(in: .whitespaces)
    let scheme = address.range(of: "://").map { address[..<$0.lowerBound].lowercased() }
    let path: String
    switch scheme {
    case "s3":
        return try S3SegmentStore(address: address, environment: environment, httpClient: httpClient)
    case "file":
        guard let url = URL(string: address), url.isFileURL, [nil, "", "localhost"].contains(url.host),
            !url.path.isEmpty
        else {
            throw SegmentStoreError(
                code: .invalidAddress, message: "invalid segment store \(address): expected file:///path/to/folder")
        }
        path = url.path
    case nil where !address.isEmpty:
        path = address
    default:
        throw SegmentStoreError(
            code: .invalidAddress,
            message: "cannot open the segment store \"\(address)\": give a folder, file:///folder or s3://bucket/prefix"
        )
    }
    let root = URL(fileURLWithPath: path)
    var isFolder: ObjCBool = false
    guard FileManager.default.fileExists(atPath: root.path, isDirectory: &isFolder), isFolder.boolValue else {
        throw SegmentStoreError(
            code: .invalidAddress,
            message:
                "the segment store folder \(root.path) does not exist: create it on the filesystem the workers share")
    }
    return FolderSegmentStore(root: root)
}
