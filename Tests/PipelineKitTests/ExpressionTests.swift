import Testing

@testable import PipelineKit
@testable import StageKit

@Suite struct ExpressionTests {
    let scope = EvaluationScope(
        input: InputItem(path: "/media/clips/a.MOV", relativePath: "clips/a.MOV", size: 2048, modified: 0).facts,
        vars: ["api": ResolvedValue(plain: "https://api.example"), "n": ResolvedValue(plain: 3)],
        environment: ["TOKEN": "s3cr3t-value", "EMPTY": ""],
        stageOutputs: ["export": ["path": "/out/a.mp4", "size": 1234, "tags": ["x", "y"]]])

    private func resolve(_ text: String) throws -> ResolvedValue {
        try scope.resolve(.string(text))
    }

    @Test func aWholeExpressionKeepsItsType() throws {
        #expect(try resolve("${export.size}").value == .int(1234))
        #expect(try resolve("${export}").value == ["path": "/out/a.mp4", "size": 1234, "tags": ["x", "y"]])
        #expect(try resolve("${export.tags[1]}").value == "y")
        #expect(try resolve("${input.size}").value == .int(2048))
    }

    @Test func mixedTextInterpolates() throws {
        #expect(
            try resolve("${vars.api}/videos/${input.stem}.${input.ext}").value == "https://api.example/videos/a.mov")
        #expect(try resolve("n=${vars.n}").value == "n=3")
        #expect(try resolve("$${literal} ${vars.n}").value == "${literal} 3")
    }

    @Test func operatorsAndDefaults() throws {
        #expect(try resolve("${input.ext == 'mov'}").value == true)
        #expect(try resolve("${export.size > 1000 && vars.n <= 3}").value == true)
        #expect(try resolve("${!(input.ext != 'mov') || false}").value == true)
        #expect(try resolve("${env.MISSING ?? 'fallback'}").value == "fallback")
        #expect(try resolve("${export.nothing ?? vars.n}").value == 3)
    }

    @Test func secretsAreRedactedAsTheirExpression() throws {
        let whole = try resolve("${env.TOKEN}")
        #expect(whole.value == "s3cr3t-value")
        #expect(whole.redacted == "${env.TOKEN}")
        #expect(whole.isSecret)
        let mixed = try resolve("Bearer ${env.TOKEN} for ${input.stem}")
        #expect(mixed.value == "Bearer s3cr3t-value for a")
        #expect(mixed.redacted == "Bearer ${env.TOKEN} for a")
        #expect(try resolve("${vars.api}").isSecret == false)
    }

    @Test func missingValuesAreClearErrors() {
        #expect { try resolve("${env.NOPE}") } throws: { "\($0)".contains("environment variable NOPE is not set") }
        #expect { try resolve("${export.nothing}") } throws: { "\($0)".contains("export.nothing does not exist") }
        #expect { try resolve("${later.x}") } throws: { "\($0)".contains("stage 'later' has not run") }
    }

    @Test(arguments: ["${", "${}", "${a.}", "${a ==}", "${'x}", "${a[x]}", "${(a}", "${a b}"])
    func malformedTemplatesAreSyntaxErrors(text: String) {
        #expect(throws: ExpressionSyntaxError.self) { _ = try Template(parsing: text) }
    }

    @Test func quantitiesParse() {
        #expect(ByteCount(parsing: "8MiB") == ByteCount(8 << 20))
        #expect(ByteCount(parsing: "1.5 GB")?.bytes == 1_500_000_000)
        #expect(ByteCount(parsing: "12")?.bytes == 12)
        #expect(ByteCount(parsing: "-1") == nil)
        #expect(ByteCount(parsing: "lots") == nil)
        #expect(TimeSpan(parsing: "1h30m")?.seconds == 5400)
        #expect(TimeSpan(parsing: "250ms")?.seconds == 0.25)
        #expect(TimeSpan(parsing: "30")?.seconds == 30)
        #expect(TimeSpan(parsing: "5 parsecs") == nil)
    }

    @Test func redactorRoundTrips() {
        let redactor = SecretRedactor(names: ["TOKEN", "SHORT"], environment: ["TOKEN": "abcdef123", "SHORT": "1"])
        let value: JSONValue = ["url": "https://x/?t=abcdef123", "n": 1, "list": ["abcdef123", "1"]]
        let redacted = redactor.redact(value)
        #expect(!redacted.serialized().contains("abcdef123"))
        #expect(redacted["url"] == "https://x/?t=${env.TOKEN}")
        #expect(redacted["list"] == ["${env.TOKEN}", "1"])
        #expect(redactor.reveal(redacted) == value)
    }
}
