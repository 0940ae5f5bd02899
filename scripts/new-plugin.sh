#!/usr/bin/env bash
# Writes a new stage plugin package: NAME/Package.swift (against the SDK in sdk/, which pulls only what StageKit
# needs), one stage, its test, and a workflow that uses it. `make plugin NAME=acme-tools [DIR=path]` runs it.
#
#   scripts/new-plugin.sh NAME [FOLDER]
#
# NAME is the package's name: lower-case letters, digits and '-', starting with a letter (acme-tools). The module
# is NAME in UpperCamelCase (AcmeTools), the stage type NAME.size. FOLDER defaults to ./NAME and must not exist.
# Then: cd FOLDER && swift build && swift test.
set -euo pipefail

usage() { echo "usage: $0 NAME [FOLDER]   (NAME: lower-case letters, digits and '-', e.g. acme-tools)" >&2; exit 2; }
[ $# -ge 1 ] && [ $# -le 2 ] || usage
name=$1
[[ $name =~ ^[a-z][a-z0-9-]*$ ]] || usage
folder=${2:-$name}
if [ -e "$folder" ]; then
  echo "new-plugin: $folder already exists; give another NAME or FOLDER" >&2
  exit 1
fi

repository=$(cd "$(dirname "$0")/.." && pwd)
module=$(echo "$name" | awk -F- '{ for (i = 1; i <= NF; i++) printf "%s%s", toupper(substr($i, 1, 1)), substr($i, 2) }')
mkdir -p "$folder/Sources/$module" "$folder/Tests/${module}Tests"
folder=$(cd "$folder" && pwd)
sdk=$(realpath --relative-to="$folder" "$repository/sdk")

cat > "$folder/Package.swift" <<EOF
// swift-tools-version: 6.1
// A stage plugin for pipeline. \`swift build\`, then \`pipeline run workflow.json\` (the workflow lists the plugin),
// or \`pipeline run OTHER.json --plugin .build/debug/lib$module.so\`.
import PackageDescription

let package = Package(
    name: "$name",
    platforms: [.macOS(.v15)],
    products: [
        // A dynamic library: pipeline loads it at run time.
        .library(name: "$module", type: .dynamic, targets: ["$module"])
    ],
    dependencies: [
        // The stage author's SDK: StageKit and PipelinePluginSDK, with swift-log, swift-crypto and swift-nio only.
        .package(path: "$sdk")
    ],
    targets: [
        .target(
            name: "$module",
            dependencies: [
                .product(name: "PipelinePluginSDK", package: "sdk"),
                .product(name: "StageKit", package: "sdk"),
            ]
        ),
        .testTarget(
            name: "${module}Tests",
            dependencies: ["$module", .product(name: "StageKit", package: "sdk")]
        ),
    ]
)
EOF

cat > "$folder/Sources/$module/SizeStage.swift" <<EOF
import Foundation
import StageKit

/// \`$name.size\`: the size of a file in bytes. Replace it with your own stage.
struct SizeStage: Stage {
    struct Options: StageOptions {
        @Option("The file (default: the input file).") var file: String?
    }

    struct Outputs: StageOutputs {
        @Output("The file's size in bytes.") var bytes: Int64 = 0
    }

    static let stageType = "$name.size"
    static let summary = "Counts the bytes of a file."

    init() {}

    func run(_ options: Options, context: StageContext) async throws -> Outputs {
        let path = options.file ?? context.item.path
        // A file system call may block: it goes through BlockingWork, never on Swift's shared threads.
        let size = try await BlockingWork.run {
            (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? NSNumber)?.int64Value
        }
        guard let size else {
            // Fatal, of kind invalid-input: trying again cannot help.
            throw StageFailure("cannot read \(path)", kind: .invalidInput)
        }
        context.reportProgress(StageProgress(completed: size, total: size, unit: .bytes))
        return Outputs(bytes: size)
    }
}
EOF

cat > "$folder/Sources/$module/Plugin.swift" <<EOF
import PipelinePluginSDK

/// The plugin's entry point: pipeline calls it when it loads the library. List every stage of the plugin here.
@_cdecl("pipeline_plugin_register")
public func registerStages(_ registrar: PluginRegistrar?) -> Int32 {
    PluginExport.register([SizeStage.self], with: registrar)
}
EOF

cat > "$folder/Tests/${module}Tests/SizeStageTests.swift" <<EOF
import Foundation
import StageKit
import Testing

@testable import $module

/// Runs the stage alone with StageHarness, as a workflow would: defaults filled in, outputs as JSON.
@Suite struct SizeStageTests {
    /// A folder of its own for each test, removed at the end.
    private func withFolder(_ body: (URL) async throws -> Void) async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("$name-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try await body(folder)
    }

    @Test func countsTheBytesOfTheInputFile() async throws {
        try await withFolder { folder in
            let file = folder.appendingPathComponent("clip.mp4")
            try Data(count: 1234).write(to: file)
            let item = InputItem(path: file.path, relativePath: "clip.mp4", size: 1234, modified: 0)
            let run = await StageHarness(stateFolder: folder).run(SizeStage.self, options: [:], item: item)
            #expect(try run.outputs.get() == ["bytes": 1234])
            #expect(run.progress.last?.completed == 1234)
        }
    }

    @Test func aMissingFileIsInvalidInput() async throws {
        try await withFolder { folder in
            let run = await StageHarness(stateFolder: folder).run(
                SizeStage.self, options: ["file": .string(folder.appendingPathComponent("missing").path)])
            #expect(throws: StageFailure.self) { try run.outputs.get() }
            if case .failure(let failure as StageFailure) = run.outputs {
                #expect(failure.kind == .invalidInput)
                #expect(failure.disposition == .fatal)
            }
        }
    }
}
EOF

cat > "$folder/workflow.json" <<EOF
{
  "version": 1,
  "name": "$name",
  "plugins": [".build/debug/lib$module.so"],
  "inputs": { "path": "media", "include": ["*.mp4", "*.mov"] },
  "stages": [
    { "id": "size", "uses": "$name.size" }
  ]
}
EOF

cat > "$folder/.gitignore" <<EOF
.build/
.swiftpm/
.pipeline/
Package.resolved
EOF

echo "new-plugin: wrote $folder (module $module, stage $name.size). Next:"
echo "  cd $folder && swift build && swift test"
echo "  pipeline run workflow.json --input FOLDER_OF_VIDEOS"
