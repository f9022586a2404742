import Foundation
import Testing
@_spi(Transport) @testable import VMHostWire

/// The host writes a recording's steps in the layout the replayers' `--update` writes
/// (protocol/conformance/README.md, "Layout"), byte for byte: checked against the cases every
/// writer is checked against, and read back as the same steps.
@Suite("The layout of a recording's steps")
struct RecordingLayoutTests {
    static let cases = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("protocol/conformance/layout.json")

    static func layoutCases() throws -> [JSON] {
        let text = try String(contentsOf: cases, encoding: .utf8)
        return try #require(try JSON.parse(text)["cases"]?.arrayValue)
    }

    @Test func everyCaseOfTheSharedLayoutIsWrittenByteForByte() throws {
        let cases = try Self.layoutCases()
        #expect(cases.count >= 10)
        for layout in cases {
            let step = try #require(layout["step"])
            let expected = try #require(layout["text"]?.stringValue)
            let written = String(decoding: RecordingSteps.text(of: step), as: UTF8.self)
            #expect(written == expected, "\(layout["why"]?.stringValue ?? "")")
        }
    }

    /// A file of the steps written so reads back as those steps, each numbered by its first line.
    @Test func laidOutStepsReadBackAsTheSameSteps() throws {
        let steps = try Self.layoutCases().map { try #require($0["step"]) }
        var file: [UInt8] = []
        var firstLines: [Int] = []
        var line = 1
        for step in steps {
            let text = RecordingSteps.text(of: step)
            firstLines.append(line)
            line += 1 + text.count(where: { $0 == UInt8(ascii: "\n") })
            file += text + [UInt8(ascii: "\n")]
        }
        let read = RecordingSteps.steps(of: file)
        #expect(read.map(\.line) == firstLines)
        #expect(try read.map { try RecordingSteps.parse($0.text, at: $0.line) } == steps)
        #expect(try RecordingSteps.values(of: file) == steps)
    }

    /// An object holding a key twice is laid out as its compact text reads: the key at its first
    /// place, with its last value.
    @Test func aKeyHeldTwiceIsLaidOutAsItsCompactTextReads() throws {
        let long = JSON.string(String(repeating: "x", count: 200))
        let step: JSON = .object(JSONObject(members: [
            .init(key: "expect", value: .object(JSONObject(members: [
                .init(key: "a", value: 1), .init(key: "b", value: long), .init(key: "a", value: 2),
            ]))),
        ]))
        let text = RecordingSteps.text(of: step)
        #expect(String(decoding: text, as: UTF8.self) == "{\"expect\":{\n  \"a\":2,\n  \"b\":\(String(decoding: long.serialized(), as: UTF8.self))\n}}")
        #expect(try JSON.parse(text) == JSON.parse(step.serialized()))
    }
}
