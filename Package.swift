// swift-tools-version: 6.1
import PackageDescription

/// Settings every target shares: dependencies enter a public API only through `public import`.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

let package = Package(
    name: "media-pipeline",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "pipeline", targets: ["pipeline"]),
        .library(name: "PipelineKit", targets: ["PipelineKit"]),
        .library(name: "CoreStages", targets: ["CoreStages"]),
        .library(name: "PipelineCLI", targets: ["PipelineCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.0.0"..<"5.0.0"),
    ],
    targets: [
        .target(
            name: "PipelineKit",
            dependencies: [
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(name: "CProcessSpawn"),
        .target(
            name: "CoreStages",
            dependencies: ["PipelineKit", "CProcessSpawn", .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "PipelineCLI",
            dependencies: [
                "PipelineKit",
                "CoreStages",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "pipeline",
            dependencies: ["PipelineCLI"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PipelineKitTests",
            dependencies: ["PipelineKit", .product(name: "Logging", package: "swift-log")],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "CoreStagesTests",
            dependencies: ["CoreStages", "PipelineKit"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: ["pipeline", "PipelineKit"],
            exclude: ["Fixtures"],
            swiftSettings: swiftSettings
        ),
    ]
)
