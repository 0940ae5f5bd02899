import Foundation
import Logging
import StageKit
import Testing

@testable import UploadStages

/// A shared URL signed with a temporary credential stops working when the credential expires (OSS refuses it
/// then): `oss.upload` signs it for no longer than `expiration` allows.
@Suite struct OSSSharedURLExpiryTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)
    let logger = Logger(label: "OSSSharedURLExpiryTests")

    func options(expiringIn seconds: TimeInterval?) -> OSSUploadStage.Options {
        var options = OSSUploadStage.Options()
        options.expiration = seconds.map { ISO8601DateFormatter().string(from: now.addingTimeInterval($0)) }
        return options
    }

    func seconds(expiringIn credential: TimeInterval?, shareFor: Double) throws -> Int {
        try OSSUploadStage.sharedSeconds(
            options(expiringIn: credential), shareFor: TimeSpan(seconds: shareFor), now: now, logger: logger)
    }

    @Test func aURLIsSignedNoLongerThanItsCredentialLives() throws {
        #expect(try seconds(expiringIn: 600, shareFor: 3600) == 600)
        #expect(try seconds(expiringIn: 7200, shareFor: 3600) == 3600)
        #expect(try seconds(expiringIn: nil, shareFor: 3600) == 3600)
    }

    @Test func anExpiredCredentialSignsNothing() {
        #expect(throws: StageFailure.self) { try seconds(expiringIn: -1, shareFor: 3600) }
    }
}
