package import Foundation
package import Logging
import StageKit
package import StageRuntime

/// A segmented transcode is what workers share (`pipeline worker --segments`): each worker encodes units of any
/// worker's plan with its own H.264 build, the one ``FarmedTranscode`` plans with.
extension TranscodeStage: SegmentFarming {
    package static func segmentEncoding(store: any SegmentStore, folder: URL, logger: Logger) async -> SegmentEncoding {
        let encoder = SegmentUnitEncoder(store: store, folder: folder, logger: logger)
        return SegmentEncoding(build: await MediaToolkit.encoderBuild) { claim, progress in
            let encoded = try await encoder.encode(claim, progress: progress)
            // The joining worker fetches it from the store.
            try? FileManager.default.removeItem(at: encoded.file)
            return (encoded.size, encoded.sha256)
        }
    }
}
