import PipelineCLI

await PipelineCommand.main(registering: [])
