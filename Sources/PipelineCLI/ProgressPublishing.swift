import Foundation
import PipelineKit

extension RunnerSettings {
    /// Keeps the running stages of `workflow` in the progress file of the state folder at `folder` as the runner
    /// reports them, for `pipeline serve` beside `run` or `watch` (``ProgressFile``). The command removes the file
    /// when it ends.
    mutating func publishProgress(of workflow: String, in folder: URL) {
        sink = ProgressBoard(next: sink) { ProgressFile.write($0, workflow: workflow, in: folder) }
    }
}
