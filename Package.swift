// swift-tools-version: 6.1
import PackageDescription

/// Settings every target shares: dependencies enter a public API only through `public import`.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("MemberImportVisibility"),
    .enableUpcomingFeature("InternalImportsByDefault"),
]

/// libvmaf's x86 CPU check (Sources/CVMAF/src/x86) is built on x86_64 only; elsewhere CVMAF leaves it out and runs
/// the C paths (src/config.h sets ARCH_X86 on x86_64). The manifest's `arch` is the host's: cross-compiling from
/// x86_64 to another architecture is not supported.
#if arch(x86_64)
    let vmafNotOnThisArchitecture: [String] = []
#else
    let vmafNotOnThisArchitecture = ["src/x86"]
#endif

let package = Package(
    name: "media-pipeline",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "pipeline", targets: ["pipeline"]),
        .library(name: "StageKit", targets: ["StageKit"]),
        .library(name: "PipelineKit", targets: ["PipelineKit"]),
        .library(name: "CoreStages", targets: ["CoreStages"]),
        .library(name: "MediaStages", targets: ["MediaStages"]),
        .library(name: "HTTPTransport", targets: ["HTTPTransport"]),
        .library(name: "UploadStages", targets: ["UploadStages"]),
        .library(name: "PlatformStages", targets: ["PlatformStages"]),
        .library(name: "PipelinePluginSDK", targets: ["PipelinePluginSDK"]),
        .library(name: "Sandbox", targets: ["Sandbox"]),
        .library(name: "SharedBatch", targets: ["SharedBatch"]),
        .library(name: "PipelineCLI", targets: ["PipelineCLI"]),
        .library(name: "SampleHelloPlugin", type: .dynamic, targets: ["SampleHelloPlugin"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-crypto", "3.0.0"..<"5.0.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.21.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.80.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.24.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.0.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.0.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.26.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.27.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.5.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.0.0"),
    ],
    targets: [
        // The stage author's SDK: everything a stage, a plugin or a stage test needs, and nothing of the engine.
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
        // What the engine and the media and upload stages share beyond the stage author's SDK: the stream of an
        // export, the segment farm and store, resource slots, content fingerprints. Package-visible only.
        .target(
            name: "StageRuntime",
            dependencies: [
                "StageKit",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // The engine: workflows, expressions, the runner and its state.
        .target(
            name: "PipelineKit",
            dependencies: [
                "StageKit", "StageRuntime",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "GRDBSQLite", package: "GRDB.swift"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(name: "CProcessSpawn"),
        // FFmpeg's headers (libavformat-dev libavcodec-dev libavutil-dev libswscale-dev libswresample-dev
        // libavfilter-dev), found on the compiler's default path. Deliberately without `pkgConfig`: its -l flags would make
        // every start of `pipeline` load FFmpeg, which CMediaShim instead opens on first use.
        .systemLibrary(name: "CFFmpeg"),
        .systemLibrary(name: "CMalloc"),
        .target(name: "CCRC32C"),
        // libvmaf's AVX2 code of integer VIF, ADM and motion, upstream's files (feature/, not compiled directly)
        // each included by an avx2_*.c that gives their functions target("avx,avx2,fma") by pragma, not by flags
        // (SwiftPM refuses unsafe flags in a package depended upon by version): Sources/CVMAFx86/avx2_target.h.
        // libvmaf calls it only when the CPU has AVX2; on another architecture it compiles to nothing.
        .target(
            name: "CVMAFx86",
            exclude: ["feature"],
            cSettings: [
                .headerSearchPath("../CVMAF/src"), .headerSearchPath("../CVMAF/src/feature"),
                .headerSearchPath("../CVMAF/src/feature/common"), .define("_GNU_SOURCE"),
                .define("OC_NEW_STYLE_INCLUDES"),
            ]
        ),
        // Netflix's libvmaf (BSD-2-Clause-Patent), the part the default model vmaf_v0.6.1 needs, in C and C++,
        // with its AVX2 code (CVMAFx86) and without CUDA: Sources/CVMAF/README.md, scripts/vendor-libvmaf.sh.
        .target(
            name: "CVMAF",
            dependencies: ["CVMAFx86"],
            exclude: ["README.md", "LICENSE"] + vmafNotOnThisArchitecture,
            cSettings: [
                .headerSearchPath("src"), .headerSearchPath("src/feature"), .headerSearchPath("src/feature/common"),
                .define("_GNU_SOURCE"), .define("OC_NEW_STYLE_INCLUDES"),
            ],
            cxxSettings: [.headerSearchPath("src"), .define("_GNU_SOURCE")],
            linkerSettings: [.linkedLibrary("m")]
        ),
        .target(name: "CMediaShim", dependencies: ["CFFmpeg", "CVMAF"]),
        .target(
            name: "MediaStages",
            dependencies: [
                "StageKit", "StageRuntime", "CMediaShim",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "CoreStages",
            dependencies: [
                "StageKit", "CProcessSpawn", .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "HTTPTransport",
            dependencies: [
                "StageKit",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "UploadStages",
            dependencies: [
                "StageKit", "StageRuntime", "HTTPTransport", "CCRC32C",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "PlatformStages",
            dependencies: [
                "StageKit", "HTTPTransport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOFoundationCompat", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "Sandbox",
            dependencies: [
                "StageKit",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // Batches shared by workers on several machines, through PostgreSQL.
        .target(
            name: "SharedBatch",
            dependencies: [
                "PipelineKit", "StageKit", "StageRuntime",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // `pipeline serve`: the dashboard and status API over a state folder or a shared batch.
        .target(
            name: "Dashboard",
            dependencies: [
                "PipelineKit", "StageKit", "SharedBatch",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: swiftSettings
        ),
        // A batch's notifications: webhooks (generic JSON, Slack, Discord), each sent once.
        .target(
            name: "Notifications",
            dependencies: [
                "PipelineKit", "StageKit",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Crypto", package: "swift-crypto"),
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
        .target(
            name: "PluginHost",
            dependencies: [
                "PipelineKit", "StageKit", "CPipelinePlugin", .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "PipelineCLI",
            dependencies: [
                "PipelineKit",
                "StageKit",
                "StageRuntime",
                "CoreStages",
                "MediaStages",
                "HTTPTransport",
                "UploadStages",
                "PlatformStages",
                "PluginHost",
                "Sandbox",
                "SharedBatch",
                "Dashboard",
                "Notifications",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "pipeline",
            dependencies: ["PipelineCLI", "CMalloc"],
            swiftSettings: swiftSettings
        ),
        // The two samples' sources, built with this package so that the tests run them without a second build
        // of the whole graph. Their own manifests (samples/*/Package.swift) are what a user builds; the tests
        // check that those ask only for products this package declares. Settings as in those manifests.
        .target(
            name: "SampleHelloPlugin",
            dependencies: ["PipelinePluginSDK", "StageKit"],
            path: "samples/plugin-hello/Sources/HelloPlugin",
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .executableTarget(
            name: "SampleCustomPipeline",
            dependencies: ["PipelineCLI", "StageKit", .product(name: "Crypto", package: "swift-crypto")],
            path: "samples/custom-pipeline/Sources/custom-pipeline",
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .testTarget(
            name: "PipelineKitTests",
            dependencies: [
                "PipelineKit", "StageKit", "StageRuntime", "TestSupport",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            swiftSettings: swiftSettings
        ),
        // The stage the DocC tutorial builds (Sources/StageKit/StageKit.docc), its tests, and a check that the
        // tutorial's listings are these files. Settings as a plugin's (samples/plugin-hello, the template).
        .testTarget(
            name: "StageTutorialTests",
            dependencies: ["StageKit"],
            swiftSettings: [.enableUpcomingFeature("ExistentialAny")]
        ),
        .testTarget(
            name: "CoreStagesTests",
            dependencies: ["CoreStages", "StageKit", "TestSupport"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "MediaStagesTests",
            dependencies: [
                "MediaStages", "CMediaShim", "StageKit", "StageRuntime", "TestSupport",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .target(
            name: "TestSupport",
            dependencies: [
                "StageKit", .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ],
            path: "Tests/TestSupport",
            exclude: ["Peers"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "UploadStagesTests",
            dependencies: [
                "UploadStages", "HTTPTransport", "StageKit", "StageRuntime", "TestSupport", "CCRC32C", "Sandbox",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            exclude: ["Fixtures", "botocore_sign.py"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SharedBatchTests",
            dependencies: [
                "SharedBatch", "PipelineKit", "StageKit", "StageRuntime", "TestSupport",
                .product(name: "PostgresNIO", package: "postgres-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "PlatformStagesTests",
            dependencies: [
                "PlatformStages", "HTTPTransport", "StageKit",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SandboxTests",
            dependencies: [
                "Sandbox", "StageKit", "TestSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Logging", package: "swift-log"),
            ],
            exclude: ["tuspy_client.py", "aliyun_sdk_client.py", "Fixtures"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "DashboardServerTests",
            dependencies: [
                "Dashboard", "PipelineKit", "SharedBatch", "StageKit", "TestSupport",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            swiftSettings: swiftSettings
        ),
        // The commands in this process: their arguments, exit codes and failures, without the built binary.
        .testTarget(
            name: "PipelineCLITests",
            dependencies: [
                "PipelineCLI", "PipelineKit", "PluginHost", "SharedBatch", "Sandbox", "StageKit", "TestSupport",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "pipeline", "PipelineCLI", "PluginHost", "StageKit", "StageRuntime", "TestSupport", "Sandbox",
                "SharedBatch", "PipelineKit",
                "Notifications", .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            exclude: ["Fixtures"],
            swiftSettings: swiftSettings
        ),
    ]
)
