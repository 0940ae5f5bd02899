import PipelineCLI

await PipelineCommand.main(registering: [ChecksumStage.self, FileSize.self])
