import Testing
@_spi(Transport) @testable import VMHostWire

@Suite("JSON through jansson")
struct JSONTests {
    @Test func integersStayIntegersAndRealsStayReals() throws {
        let value = try JSON.parse("[1, 1.0, -9223372036854775808, 9223372036854775807, 0.1, 1e300]")
        #expect(value == [.int(1), .double(1.0), .int(.min), .int(.max), .double(0.1), .double(1e300)])
        #expect(try JSON.parse(String(decoding: value.serialized(), as: UTF8.self)) == value)
    }

    @Test(arguments: [0.1, 1.0 / 3.0, 123456.789, -2.5e-10, Double.leastNonzeroMagnitude, 1.7976931348623157e308])
    func realsRoundTrip(_ number: Double) throws {
        let text = JSON.double(number).description
        #expect(try JSON.parse(text) == .double(number))
    }

    @Test func realsAreWrittenWithTheFewestDigitsThatReadBackExactly() {
        #expect(JSON.double(4.35).description == "4.35")
        #expect(JSON.array([.double(0.1), .double(2.5)]).description == "[0.1,2.5]")
        #expect(JSON.double(1.0 / 3.0).description == "0.33333333333333331")
    }

    @Test func integersBeyond64BitsAreRejected() {
        #expect(throws: JSONParseError.self) { try JSON.parse("18446744073709551616") }
    }

    @Test func invalidUTF8IsRejected() {
        #expect(throws: JSONParseError.self) { try JSON.parse([UInt8(ascii: "\""), 0xC3, 0x28, UInt8(ascii: "\"")]) }
        #expect(throws: JSONParseError.self) { try JSON.parse([UInt8(ascii: "\""), 0xFF, UInt8(ascii: "\"")]) }
    }

    @Test func unicodeAndEscapesSurvive() throws {
        let value = try JSON.parse(#"{"s":"在售 \u00e9 \ud83d\ude00 \"q\" \n \u0000 end"}"#)
        #expect(value["s"] == .string("在售 é 😀 \"q\" \n \u{0} end"))
        #expect(try JSON.parse(value.serialized()) == value)
    }

    @Test func objectKeyOrderIsKeptOnOutput() throws {
        let value: JSON = ["zeta": 1, "alpha": 2, "mid": ["b": true, "a": nil]]
        #expect(value.description == #"{"zeta":1,"alpha":2,"mid":{"b":true,"a":null}}"#)
        let parsed = try JSON.parse(#"{"z":1,"a":2,"m":3}"#)
        #expect(parsed.objectValue?.keys == ["z", "a", "m"])
        #expect(parsed.description == #"{"z":1,"a":2,"m":3}"#)
    }

    @Test func anyValueIsAcceptedAtTheTop() throws {
        #expect(try JSON.parse("null") == .null)
        #expect(try JSON.parse(" \"x\" ") == "x")
        #expect(try JSON.parse("false") == false)
    }

    @Test(arguments: ["", "{", "[1,]", "{\"a\" 1}", "nul", "[1] [2]", "{'a':1}"])
    func malformedTextIsAParseError(_ text: String) {
        #expect(throws: JSONParseError.self) { try JSON.parse(text) }
    }

    @Test func parseErrorsSayWhere() {
        do {
            _ = try JSON.parse("{\"a\":\n x}")
            Issue.record("expected a parse error")
        } catch let error as JSONParseError {
            #expect(error.line == 2)
            #expect(!error.message.isEmpty)
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func nonFiniteRealsCannotBeWritten() {
        #expect(throws: JSONSerializationError.self) { try JSON.double(.nan).serializedOrThrow() }
        #expect(JSON.array([.double(.infinity)]).description == "null")
    }

    @Test func deepNestingIsBoundedByJansson() {
        let deep = String(repeating: "[", count: 5000) + String(repeating: "]", count: 5000)
        #expect(throws: JSONParseError.self) { try JSON.parse(deep) }
        let fine = String(repeating: "[", count: 500) + String(repeating: "]", count: 500)
        #expect((try? JSON.parse(fine)) != nil)
    }

    @Test func objectSubscriptSetsInPlace() {
        var object: JSONObject = ["a": 1, "b": 2]
        object["a"] = 3
        object["c"] = 4
        object["b"] = nil
        #expect(JSON.object(object).description == #"{"a":3,"c":4}"#)
    }
}

@Suite("Typed decoding")
struct DecodingTests {
    @Test func errorsNameTheParamAndWhy() throws {
        let reader = try JSONReader(["kind": 5, "args": ["pageSize": 1.5]], path: "params")
        #expect(throws: JSONDecodingError(path: "params.kind", problem: "expected a string, got a number")) {
            try reader.required("kind", as: String.self)
        }
        #expect(throws: JSONDecodingError(path: "params.vm", problem: "is required (a string)")) {
            try reader.required("vm", as: String.self)
        }
        let args = try JSONReader(reader.object["args"], path: "params.args")
        #expect(throws: JSONDecodingError(path: "params.args.pageSize", problem: "expected an integer, got a fractional number")) {
            try args.required("pageSize", as: Int.self)
        }
        #expect(JSONDecodingError(path: "params.kind", problem: "expected a string, got a number").description
            == "params.kind: expected a string, got a number")
    }

    @Test func arraysNameTheIndex() throws {
        let reader = try JSONReader(["outputs": ["a", 2]], path: "params")
        #expect(throws: JSONDecodingError(path: "params.outputs[1]", problem: "expected a string, got a number")) {
            try reader.required("outputs", as: [String].self)
        }
    }

    @Test func paramsMustBeAnObject() {
        #expect(throws: JSONDecodingError(path: "params", problem: "expected an object, got an array")) {
            try JSONReader([1, 2], path: "params")
        }
        #expect((try? JSONReader(nil, path: "params"))?.object.isEmpty == true)
    }

    @Test func unknownMembersAreNamed() throws {
        let reader = try JSONReader(["kind": "x", "kindd": 1], path: "params")
        #expect(throws: JSONDecodingError(path: "params.kindd", problem: "is not a known member (expected one of: args, id, kind)")) {
            try reader.rejectUnknown(["kind", "args", "id"])
        }
    }

    @Test func optionalAcceptsNullAndMissing() throws {
        let reader = try JSONReader(["a": nil], path: "p")
        #expect(try reader.optional("a", as: Int.self) == nil)
        #expect(try reader.optional("b", as: Int.self) == nil)
    }
}
