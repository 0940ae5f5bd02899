// swift-tools-version: 6.1
// A stage plugin for pipeline. `swift build`, then `pipeline run workflow.json` (the workflow lists the plugin),
// or `pipeline run OTHER.json --plugin .build/debug/libAcmeTools.so`.
import PackageDescription

let package = Package(
    name: "acme-tools",
    platforms: [.macOS(.v15)],
    products: [
        // A dynamic library: pipeline loads it at run time.
        .library(name: "AcmeTools", type: .dynamic, targets: ["AcmeTools"])
    ],
    dependencies: [
        // The stage author's SDK: StageKit and PipelinePluginSDK, with swift-log, swift-crypto and swift-nio only.
        .package(path: "../media-pipeline/sdk")
    ],
    targets: [
        .target(
            name: "AcmeTools",
            dependencies: [
                .product(name: "PipelinePluginSDK", package: "sdk"),
                .product(name: "StageKit", package: "sdk"),
            ]
        ),
        .testTarget(
            name: "AcmeToolsTests",
            dependencies: ["AcmeTools", .product(name: "StageKit", package: "sdk")]
        ),
    ]
)
