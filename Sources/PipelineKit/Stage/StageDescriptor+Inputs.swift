import StageKit

extension StageDescriptor {
    /// What a workflow says of the file this stage reads with `with` (the option its type names, left out or
    /// `${input.path}`: the input file) and of the input files it may be, before anything runs.
    func inputSummary(with: JSONValue, inputs: InputSelection?) -> InputSummary {
        let named = inputFileOption.flatMap { with[$0] }
        let isInputFile = named == nil || named == "${input.path}"
        let path = named?.stringValue.flatMap { $0.contains("${") ? nil : $0 }
        return InputSummary(
            path: isInputFile ? nil : path, isInputFile: isInputFile, include: inputs?.include ?? [],
            containers: inputs?.limits.containers ?? [])
    }

    /// Whether the stage reads the item's own file as media with `with`: the run then skips input files FFmpeg
    /// cannot read, with the probe's reason, before the stage fails on them.
    func readsMediaInputFile(with: JSONValue) -> Bool {
        readsMediaInput && inputSummary(with: with, inputs: nil).isInputFile
    }
}
