import StageKit
import Testing

@testable import PlatformStages

/// How `aliyun.vod.pull` reads a job's status: VOD's documents write it several ways (`SUCCESS` in the English
/// example, `Normal` with ErrorCode `200` in the Chinese one, `success`/`fail` in the UploadByURLComplete event).
@Suite struct AliyunPullStatusTests {
    @Test(arguments: ["SUCCESS", "success", "Success", "Normal", "UploadSucc", "Transcoding", "Checking"])
    func aJobWithAMediaIdPastTheUploadIsDone(status: String) {
        #expect(VODPull.hasSucceeded(status, mediaId: "a1b2c3"))
        #expect(!VODPull.hasFailed(status))
    }

    @Test(arguments: ["SUCCESS", "Normal"])
    func aJobWithoutAMediaIdIsNotDone(status: String) {
        #expect(!VODPull.hasSucceeded(status, mediaId: ""))
    }

    @Test(arguments: ["PENDING", "DOWNLOADING", "Processing", "Uploading", "DOWNLOAD_FAIL", "fail"])
    func aJobUnderWayOrFailedIsNotDone(status: String) {
        #expect(!VODPull.hasSucceeded(status, mediaId: "a1b2c3"))
    }

    @Test(arguments: ["DOWNLOAD_FAIL", "UPLOAD_FAIL", "fail", "Failed"])
    func aStatusEndingInFailIsAFailureWhateverItsCase(status: String) {
        #expect(VODPull.hasFailed(status))
    }
}
