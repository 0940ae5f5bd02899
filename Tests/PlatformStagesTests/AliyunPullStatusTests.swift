import Foundation
import StageKit
import Testing

@testable import PlatformStages

/// How `aliyun.vod.pull` reads a job's status: VOD's documents write it several ways (`SUCCESS` in the English
/// example, `Normal` with ErrorCode `200` in the Chinese one, `success`/`fail` in the UploadByURLComplete event).
@Suite struct AliyunPullStatusTests {
    @Test(arguments: ["SUCCESS", "success", "Success", "Normal", "UploadSucc", "Transcoding", "Checking"])
    func aJobWithAMediaIdPastTheUploadIsDone(status: String) {
        #expect(VODPull.hasPulled(status, mediaId: "a1b2c3"))
        #expect(!VODPull.hasFailed(status))
    }

    @Test(arguments: ["SUCCESS", "Normal", "DOWNLOAD_FAIL", "UPLOAD_FAIL"])
    func aJobWithoutAMediaIdIsNotDone(status: String) {
        #expect(!VODPull.hasPulled(status, mediaId: ""))
    }

    @Test(arguments: ["PENDING", "DOWNLOADING", "Processing", "Uploading"])
    func aJobUnderWayIsNotDone(status: String) {
        #expect(!VODPull.hasPulled(status, mediaId: "a1b2c3"))
    }

    /// VOD's job statuses are its video's: a job with a MediaId that ends in a failure (`TranscodeFail`, …) made
    /// its video, which is the pull's output (the wait reports the failure); pulling again would make a second.
    @Test(arguments: ["TranscodeFail", "UploadFail", "ProduceFail", "fail"])
    func aFailedJobWithAMediaIdHasPulledItsFile(status: String) {
        #expect(VODPull.hasPulled(status, mediaId: "a1b2c3"))
    }

    @Test(arguments: ["DOWNLOAD_FAIL", "UPLOAD_FAIL", "fail", "Failed"])
    func aStatusEndingInFailIsAFailureWhateverItsCase(status: String) {
        #expect(VODPull.hasFailed(status))
    }
}

/// When `aliyun.vod.pull` may submit again after a submission that may have made a job its look-up did not find:
/// only while VOD still refuses the repeated SessionId (10 minutes; the stage counts 9).
@Suite struct AliyunPullResubmissionTests {
    let sent = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func withinTheSessionWindowTheRepeatMayGo() {
        let earlier = CreateIntent(marker: "pipeline-k-0", sentAt: sent)
        #expect(VODPull.resubmissionProblem(after: earlier, link: "l", now: sent.addingTimeInterval(60)) == nil)
        #expect(VODPull.resubmissionProblem(after: earlier, link: "l", now: sent.addingTimeInterval(539)) == nil)
    }

    @Test func pastTheWindowItFailsRetryablyInsteadOfSubmitting() throws {
        let earlier = CreateIntent(marker: "pipeline-k-0", sentAt: sent)
        let problem = try #require(
            VODPull.resubmissionProblem(after: earlier, link: "l", now: sent.addingTimeInterval(540)))
        #expect(problem.disposition.isRetryable)
        #expect(problem.message.contains("pipeline-k-0") && problem.message.contains("--reprocess"))
    }

    @Test func aSubmissionOfUnknownTimeIsNotRepeated() {
        let earlier = CreateIntent(marker: "pipeline-k-0")
        #expect(VODPull.resubmissionProblem(after: earlier, link: "l", now: sent) != nil)
    }
}

/// When a presigned link stops working, read from its own query, so that an expired one fails before VOD queues it.
@Suite struct AliyunPullLinkExpiryTests {
    @Test func anOSSV4LinkExpiresItsSecondsAfterItsDate() {
        let link =
            "https://b.oss-cn-shanghai.aliyuncs.com/a.mp4?x-oss-signature-version=OSS4-HMAC-SHA256&x-oss-date=20261129T100000Z&x-oss-expires=3600&x-oss-signature=ab"
        #expect(VODPull.expiry(ofLink: link) == Date(timeIntervalSince1970: 1_795_946_400 + 3600))
    }

    @Test func anS3LinkAndAnOSSV1LinkSayTheirsToo() {
        let s3 = "https://s3.example/b/a.mp4?X-Amz-Date=20261129T100000Z&X-Amz-Expires=60&X-Amz-Signature=ab"
        #expect(VODPull.expiry(ofLink: s3) == Date(timeIntervalSince1970: 1_795_946_460))
        let v1 = "https://b.example/a.mp4?OSSAccessKeyId=k&Expires=1795950000&Signature=x"
        #expect(VODPull.expiry(ofLink: v1)?.timeIntervalSince1970 == 1_795_950_000)
    }

    @Test func aPlainLinkHasNone() {
        #expect(VODPull.expiry(ofLink: "https://example.com/a.mp4") == nil)
    }
}
