// swift-tools-version: 6.1
// The stage author's SDK: StageKit and PipelinePluginSDK, and only the packages they need (swift-log, swift-crypto,
// swift-nio). A plugin that depends on this package builds without the engine's dependencies.
//
// The targets' folders are links to the main package's own (Sources/StageKit, Sources/PipelinePluginSDK,
// Sources/CPipelinePlugin): one copy of the sources, built by two manifests. Keep the targets' dependencies as the
// main package declares them; EndToEndTests' SDKManifestTests compares the two manifests.
import PackageDescription

let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "media-pipeline-sdk",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "StageKit", targets: ["StageKit"]),
        .library(name: "PipelinePluginSDK", targets: ["PipelinePluginSDK"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.0.0"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
    ],
    targets: [
        .target(
            name: "StageKit",
            dependencies: [
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(name: "CPipelinePlugin"),
        .target(
            name: "PipelinePluginSDK",
            dependencies: [
                "StageKit", "CPipelinePlugin", .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
    ]
)
