import Foundation
import StageKit
import TestSupport
import Testing

/// A package manifest as `swift package dump-package` prints it.
struct PackageManifest {
    let json: JSONValue

    /// The manifest of the package in `folder`. A scratch build folder of its own: `swift test` holds the lock of
    /// the package's `.build`.
    static func dump(_ folder: URL) async throws -> PackageManifest {
        let scratch = try Scratch()
        let output = try await Binary.run(
            [
                "swift", "package", "--package-path", folder.path, "--scratch-path", scratch.path("build").path,
                "dump-package",
            ],
            in: folder, executable: URL(fileURLWithPath: "/usr/bin/env"))
        #expect(output.status == 0, "\(folder.path): \(output.stderr)")
        return PackageManifest(json: try JSONValue(parsing: output.stdout))
    }

    /// The products the package declares.
    var products: Set<String> {
        Set((json["products"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue })
    }

    /// The products its targets ask of the package `identity`.
    func products(from identity: String) -> Set<String> {
        Set(
            (json["targets"]?.arrayValue ?? []).flatMap { target in
                (target["dependencies"]?.arrayValue ?? []).compactMap { dependency -> String? in
                    guard let product = dependency["product"]?.arrayValue, product.count > 1,
                        product[1].stringValue == identity
                    else { return nil }
                    return product[0].stringValue
                }
            })
    }

    /// The target named `name`.
    func target(_ name: String) -> JSONValue? {
        json["targets"]?.arrayValue?.first { $0["name"]?.stringValue == name }
    }
}

/// The SDK package (sdk/) builds StageKit, CPipelinePlugin and PipelinePluginSDK from the main package's own
/// folders, through links, with only the packages they need. These tests keep the two manifests in step: a
/// dependency added to one of these targets in Package.swift must be added in sdk/Package.swift too.
@Suite struct SDKManifestTests {
    static let sdkTargets = ["StageKit", "CPipelinePlugin", "PipelinePluginSDK"]

    @Test func theSDKsTargetsAreTheMainPackagesWithTheSameDependencies() async throws {
        let main = try await PackageManifest.dump(repositoryRoot)
        let sdk = try await PackageManifest.dump(repositoryRoot.appendingPathComponent("sdk"))
        #expect(
            Set((sdk.json["targets"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue }) == Set(Self.sdkTargets))
        for name in Self.sdkTargets {
            let (ours, theirs) = (try #require(sdk.target(name)), try #require(main.target(name)))
            #expect(
                ours["dependencies"] == theirs["dependencies"], "\(name): sdk/Package.swift differs from Package.swift")
            #expect(ours["settings"] == theirs["settings"], "\(name): its settings differ between the manifests")
        }
        #expect(sdk.products.isSubset(of: main.products))
    }

    @Test func theSDKsSourceFoldersAreLinksToTheMainPackages() throws {
        for name in Self.sdkTargets {
            let link = repositoryRoot.appendingPathComponent("sdk/Sources/\(name)")
            let destination = try FileManager.default.destinationOfSymbolicLink(atPath: link.path)
            #expect(destination == "../../Sources/\(name)", "sdk/Sources/\(name) should link to Sources/\(name)")
        }
    }

    @Test func theSDKNeedsOnlySwiftLogSwiftCryptoAndSwiftNIO() async throws {
        let sdk = try await PackageManifest.dump(repositoryRoot.appendingPathComponent("sdk"))
        let packages = (sdk.json["dependencies"]?.arrayValue ?? []).compactMap {
            $0["sourceControl"]?.arrayValue?.first?["identity"]?.stringValue
        }
        #expect(Set(packages) == ["swift-log", "swift-crypto", "swift-nio"])
    }
}
