import Testing
@_spi(Transport) @testable import VMHostWire

/// No diagnostic of the wire quotes the bytes it could not use: they may hold a password or a token
/// (a parse error of a backend body, a header block a confused client filled with anything).
@Suite struct DiagnosticsTests {
    static func parseError(_ text: String) -> JSONParseError? {
        do {
            _ = try JSON.parse(text)
            return nil
        } catch let error as JSONParseError {
            return error
        } catch {
            return nil
        }
    }

    @Test(arguments: [
        (#"{"token":"TKN-SECRET"#, "premature end of input"),
        (#"{"token":TKN-SECRET}"#, "invalid token"),
        (#"{"token":"TKN-SECRET\ud800"}"#, "invalid Unicode escape (a lone or misordered surrogate)"),
        (#"{"token":"TKN-SECRET\udc00"}"#, "invalid Unicode escape (a lone or misordered surrogate)"),
        (#"{"token":"TKN-SECRET\q"}"#, "invalid escape in string"),
        ("{\"token\":\"TKN-SECRET\u{1}\"}", "control character in string"),
        (#"{"a":1} TKN-SECRET"#, "end of file expected"),
        (#"{"a" TKN-SECRET}"#, "':' expected"),
        (#"[1 TKN-SECRET]"#, "']' expected"),
        (#"TKN-SECRET"#, "invalid token"),
    ])
    func aParseErrorSaysWhatAndWhereButQuotesNothing(text: String, message: String) throws {
        let error = try #require(Self.parseError(text))
        #expect(error.message == message)
        #expect(!error.description.contains("SECRET"))
        #expect(!error.description.contains("TKN"))
        #expect(!error.description.lowercased().contains("\\u"))
    }

    @Test(arguments: [
        "premature end of input near '\"TKN-SECRET'",
        "invalid Unicode '\\uD800'",
        "invalid Unicode '\\uDC00\\uD800'",
        "'[' or '{' expected near 'TKN'",
        "unable to decode byte 0xff near '\"'",
        "something new 'TKN-SECRET'",
        "something new 0x53",
    ])
    func everyJanssonMessageLosesItsQuote(text: String) {
        let cleaned = JSONParseError.withoutInput(text)
        #expect(!cleaned.contains("TKN") && !cleaned.contains("\\u") && !cleaned.contains("0x"), "\(cleaned)")
        #expect(!cleaned.isEmpty)
    }

    @Test func theBracketsJanssonNamesAreKept() {
        #expect(JSONParseError.withoutInput("'[' or '{' expected near 'x'") == "'[' or '{' expected")
        #expect(JSONParseError.withoutInput("string or '}' expected near 'x'") == "string or '}' expected")
    }

    static func headerProblem(_ header: String) -> String? {
        var reader = FrameReader(framing: .lsp, maxMessageBytes: 1024)
        var problem: String?
        Array(header.utf8).withUnsafeBytes { bytes in
            reader.consume(bytes) { if case .badHeader(let text) = $0 { problem = text } }
        }
        return problem
    }

    @Test(arguments: [
        ("X-Token TKN-SECRET\r\n\r\n", "malformed header line 1 of the block (expected \"Name: value\")"),
        ("Content-Type: x\r\nBearer TKN-SECRET\r\n\r\n", "malformed header line 2 of the block (expected \"Name: value\")"),
        ("Content-Length: TKN-SECRET\r\n\r\n", "the Content-Length value (header line 1) is not a non-negative integer"),
        ("Content-Length: -1\r\n\r\n", "the Content-Length value (header line 1) is not a non-negative integer"),
    ])
    func aBadHeaderIsNamedByItsLineNotItsBytes(header: String, problem: String) {
        #expect(Self.headerProblem(header) == problem)
    }
}
