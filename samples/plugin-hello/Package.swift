// swift-tools-version: 6.1
// A stage plugin loaded by `pipeline` at run time: `swift build`, then
// `pipeline run workflow.json --plugin .build/debug/libHelloPlugin.so` (or list it in the workflow's "plugins").
import PackageDescription

let package = Package(
    name: "plugin-hello",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "HelloPlugin", type: .dynamic, targets: ["HelloPlugin"])
    ],
    dependencies: [
        .package(name: "media-pipeline", path: "../..")
    ],
    targets: [
        .target(
            name: "HelloPlugin",
            dependencies: [
                .product(name: "PipelinePluginSDK", package: "media-pipeline"),
                .product(name: "StageKit", package: "media-pipeline"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        )
    ]
)
