import Foundation
import Testing

@testable import PipelineKit
@testable import StageKit

@Suite struct JSONParserTests {
    @Test func parsesValuesAndKeepsIntegersApartFromDoubles() throws {
        let (value, _) = try JSONParser.parse(#"{"a": 1, "b": 1.5, "c": [true, null, "x\u00e9\n"], "d": -0}"#)
        #expect(value["a"] == .int(1))
        #expect(value["b"] == .double(1.5))
        #expect(value["c"] == .array([.bool(true), .null, .string("xé\n")]))
        #expect(value["d"] == .int(0))
    }

    @Test func recordsLinesAndColumnsOfValuesAndKeys() throws {
        let text = "{\n  \"stages\": [\n    {\"id\": \"a\",\n     \"uses\": \"exec\"}\n  ]\n}"
        let (_, map) = try JSONParser.parse(text)
        let uses = JSONPath.root.appending("stages").appending(index: 0).appending("uses")
        #expect(map.location(of: uses) == SourceLocation(line: 4, column: 14))
        #expect(map.keyLocation(of: uses) == SourceLocation(line: 4, column: 6))
        #expect(uses.description == "stages[0].uses")
    }

    @Test(arguments: [
        ("", "the document is empty"),
        ("{\"a\": 1,}", "trailing comma"),
        ("{\"a\": 1} x", "after the end of the document"),
        ("{\"a\": 1, \"a\": 2}", "duplicate key \"a\""),
        ("{\"a\": 99999999999999999999}", "out of range"),
        ("{\"a\": 1e999}", "out of range"),
        ("{'a': 1}", "double quotes"),
        ("{\"a\": tru}", "expected a JSON value"),
        ("{\"a\": \"\\x\"}", "invalid escape"),
        ("{\"a\": \"\u{01}\"}", "control character"),
        ("{\"a\": 01}", "leading zeros"),
        ("[\"\\ud800\"]", "unpaired surrogate"),
        ("{\"a\": \"unterminated", "unterminated string"),
    ])
    func rejectsMalformedDocuments(text: String, expected: String) {
        #expect {
            _ = try JSONParser.parse(text)
        } throws: { error in
            "\(error)".contains(expected)
        }
    }

    @Test func rejectsInvalidUTF8WithItsPosition() {
        var bytes = Array("{\n  \"name\": \"caf".utf8)
        bytes += [0xE9, 0x22, 0x7D]
        do {
            _ = try JSONParser.parse(Data(bytes))
            Issue.record("invalid UTF-8 was accepted")
        } catch {
            #expect(error.message.contains("invalid UTF-8"))
            #expect(error.location == SourceLocation(line: 2, column: 15))
        }
    }

    @Test func refusesNestingDeeperThanTheLimit() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(throws: JSONSyntaxError.self) { _ = try JSONParser.parse(deep) }
        let fine = String(repeating: "[", count: 50) + String(repeating: "]", count: 50)
        #expect(throws: Never.self) { _ = try JSONParser.parse(fine) }
    }

    @Test func serializationIsCanonicalAndRoundTrips() throws {
        let value: JSONValue = ["b": [1, 2.5, "x\"y"], "a": ["z": nil, "c": true]]
        #expect(value.serialized() == #"{"a":{"c":true,"z":null},"b":[1,2.5,"x\"y"]}"#)
        #expect(try JSONParser.parse(value.serialized(pretty: true)).value == value)
    }

    @Test func serializationEscapesOnlyWhatJSONMust() throws {
        let texts = ["plain/path é 🎬", "tab\there", "quote \" and \\ back", "bell\u{07}", "line\nbreak", ""]
        let serialized = JSONValue.array(texts.map(JSONValue.string)).serialized()
        #expect(
            serialized
                == #"["plain/path é 🎬","tab\there","quote \" and \\ back","bell\u0007","line\nbreak",""]"#)
        #expect(try JSONParser.parse(serialized).value == .array(texts.map(JSONValue.string)))
    }

    @Test func decodingKeepsEveryKindOfValue() throws {
        let text = #"{"s": "1", "t": "true", "i": 1, "d": 1.5, "b": false, "n": null, "a": ["x", 2], "o": {"k": "v"}}"#
        let decoded = try JSONDecoder().decode(JSONValue.self, from: Data(text.utf8))
        #expect(
            decoded
                == [
                    "s": "1", "t": "true", "i": 1, "d": 1.5, "b": false, "n": nil, "a": ["x", 2], "o": ["k": "v"],
                ])
    }
}
