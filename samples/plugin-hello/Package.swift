// swift-tools-version: 6.1
// A stage plugin loaded by `pipeline` at run time: `swift build`, then
// `pipeline run workflow.json --plugin .build/debug/libHelloPlugin.so` (or list it in the workflow's "plugins").
// It depends on the stage author's SDK (sdk/), which builds StageKit and PipelinePluginSDK with swift-log,
// swift-crypto and swift-nio only, not on the whole media-pipeline package.
import PackageDescription

let package = Package(
    name: "plugin-hello",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "HelloPlugin", type: .dynamic, targets: ["HelloPlugin"])
    ],
    dependencies: [
        .package(path: "../../sdk")
    ],
    targets: [
        .target(
            name: "HelloPlugin",
            dependencies: [
                .product(name: "PipelinePluginSDK", package: "sdk"),
                .product(name: "StageKit", package: "sdk"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        )
    ]
)
