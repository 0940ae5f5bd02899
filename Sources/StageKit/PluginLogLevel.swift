package import Logging

extension Logger.Level {
    /// The level's number across the plugin boundary (`CPipelinePlugin.h`): a plugin stage's log lines reach the
    /// host as these numbers, so both sides read them from here.
    package var pluginCode: Int32 {
        switch self {
        case .trace: 0
        case .debug: 1
        case .info: 2
        case .notice: 3
        case .warning: 4
        case .error: 5
        case .critical: 6
        }
    }

    /// The level a plugin sent as `code`; `info` for a number the boundary does not define.
    package init(pluginCode code: Int32) {
        self = Self.allCases.first { $0.pluginCode == code } ?? .info
    }
}
