// swift-tools-version: 6.1
// A `pipeline` with extra stages compiled in: the built-in stages plus `checksum.blocks` and `acme.size`.
// `swift build`, then `.build/debug/custom-pipeline run workflow.json`.
import PackageDescription

let package = Package(
    name: "custom-pipeline",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "media-pipeline", path: "../.."),
        .package(url: "https://github.com/apple/swift-crypto", "3.0.0"..<"5.0.0"),
    ],
    targets: [
        .executableTarget(
            name: "custom-pipeline",
            dependencies: [
                .product(name: "PipelineCLI", package: "media-pipeline"),
                .product(name: "StageKit", package: "media-pipeline"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        )
    ]
)
