import Testing
@_spi(Transport) @testable import VMHostWire

@Suite("JSON object text")
struct JSONObjectTextTests {
    @Test func writesWhatSerializingTheWholeObjectWrites() throws {
        let values: [JSON] = [.null, true, 42, -1.5, "é\"\\\n\u{0}", [1, "x", [:]], ["a": [1, 2], "b": ["c": nil]]]
        for value in values {
            var text = JSONObjectText()
            text.append("jsonrpc", literal: #""2.0""#)
            text.append("id", 7)
            text.append("result", value)
            let expected: JSON = ["jsonrpc": "2.0", "id": 7, "result": value]
            #expect(text.finish() == expected.serialized())
        }
    }

    @Test func nestsTextAlreadyWritten() {
        var inner = JSONObjectText()
        inner.append("vm", "login")
        var outer = JSONObjectText()
        outer.append("params", text: inner.finish())
        #expect(String(decoding: outer.finish(), as: UTF8.self) == #"{"params":{"vm":"login"}}"#)
    }

    @Test func writesANestedObjectInTheSameText() {
        var outer = JSONObjectText.jsonRPC()
        outer.append("params") { params in
            params.append("vm", "login")
            params.append("empty") { _ in }
            params.append("values", ["ok": true])
        }
        outer.append("id", 3)
        #expect(String(decoding: outer.finish(), as: UTF8.self)
            == #"{"jsonrpc":"2.0","params":{"vm":"login","empty":{},"values":{"ok":true}},"id":3}"#)
    }

    @Test func aValueThatCannotBeWrittenThrowsAndLeavesTheTextAsItWas() {
        var text = JSONObjectText()
        text.append("id", 1)
        #expect(throws: JSONSerializationError.self) { try text.appendOrThrow("result", ["x": .double(.nan)]) }
        text.append("error", .double(.infinity))
        #expect(String(decoding: text.finish(), as: UTF8.self) == #"{"id":1,"error":null}"#)
    }

    @Test func longTextsAreWrittenWhole() throws {
        let long = JSON.array((0..<2000).map { .string("item \($0)") })
        var text = JSONObjectText()
        text.append("items", long)
        let written = text.finish()
        #expect(written.count > 20_000)
        #expect(try JSON.parse(written) == ["items": long])
    }
}
