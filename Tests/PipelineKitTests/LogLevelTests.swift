import Logging
import StageKit
import Testing

@testable import PipelineKit

/// Log levels travel as swift-log's `Logger.Level`: they reach `--json` under the names they always had, and cross
/// the plugin boundary as the numbers `CPipelinePlugin.h` gives them.
@Suite struct LogLevelTests {
    /// A log line's `--json` form names its level as before the levels were a type.
    @Test func aLogLineNamesItsLevelAsBefore() {
        let line = LogLine(level: .warning, item: "a.mp4", stage: nil, message: "slow")
        #expect(
            JSONValue.object(line.fields).serialized()
                == #"{"item":"a.mp4","level":"warning","message":"slow","stage":null}"#)
        let names = Logger.Level.allCases.map { LogLine(level: $0, item: nil, stage: nil, message: "").fields["level"] }
        #expect(names == ["trace", "debug", "info", "notice", "warning", "error", "critical"])
    }

    /// Each level has the number the plugin header documents (0 trace … 6 critical), read back as the same level;
    /// a number the boundary does not define reads as info.
    @Test func theLevelsCrossThePluginBoundaryAsTheHeaderNumbersThem() {
        let numbered: [(Logger.Level, Int32)] = [
            (.trace, 0), (.debug, 1), (.info, 2), (.notice, 3), (.warning, 4), (.error, 5), (.critical, 6),
        ]
        for (level, code) in numbered {
            #expect(level.pluginCode == code)
            #expect(Logger.Level(pluginCode: code) == level)
        }
        #expect(Logger.Level(pluginCode: 7) == .info && Logger.Level(pluginCode: -1) == .info)
    }
}
