import Testing
@_spi(Transport) @testable import VMHostWire

/// The texts read in Swift (JSON+Reading.swift) are read as jansson reads them; the rest are left
/// to jansson.
@Suite("JSON read in Swift, as jansson reads it")
struct JSONReadingTests {
    private func swift(_ text: [UInt8]) -> JSON? {
        text.withUnsafeBytes { JSONReading.value(of: $0) }
    }

    private func jansson(_ text: [UInt8]) -> JSON? {
        text.withUnsafeBytes { try? JSON.parseByJansson($0) }
    }

    /// Whatever Swift reads, jansson reads, to the same value.
    private func agree(_ text: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) {
        guard let value = swift(text) else { return }
        #expect(jansson(text) == value, "\(String(decoding: text, as: UTF8.self))", sourceLocation: sourceLocation)
    }

    static let read: [String] = [
        #"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
        #"{"jsonrpc":"2.0","id":"c","method":"vm.send","params":{"vm":"login","input":"username","value":"13800138000"}}"#,
        " \t\r\n[ 1 , -2 ,0,-0, 9223372036854775807, -9223372036854775808, true,false, null, \"\" , [], {} ] \n",
        #"{"a":{"b":{"c":[[[]]]}},"e\u00e9":"\"\\\/\b\f\n\r\t\u0000\u001f\u20AC\ud83d\ude00","z":"在售 😀"}"#,
        "\"\u{7F}\"", "0", "-1", "\"x\"", "true", "null",
        // The protocol's words (read as constant strings), their neighbours of the same length,
        // escaped, and as values.
        #"{"id":"vm","vm":"id","2.0":"2.1","input":"inpuT","value":"valu€","method":"params","params":"method"}"#,
        #"{"jsonrpc":"jsonrpd","vm.send":"vm.sen\u0064","\u0069d":"i\u0064","j":["2.0","2.00","vm.","id "]}"#,
    ]

    static let leftToJansson: [String] = [
        "", " ", "1.5", "1e3", "1E3", "-", "01", "-01", "9223372036854775808", "-9223372036854775809",
        "[1,]", "{\"a\":1,}", "{\"a\" 1}", "{'a':1}", "[1] [2]", "truex", "[true1]", "nul", "[1a]",
        "\"\\ud800\"", "\"\\udc00\"", "\"\\ud800\\u0041\"", "\"\\x\"", "\"\\u12\"", "\"a\u{1}b\"",
        "{\"a\":1,\"a\":2}", "{\"a\\u0000b\":1}", "\"unterminated", "[", "{", "\u{FEFF}1",
        String(repeating: "[", count: 600) + String(repeating: "]", count: 600),
    ]

    @Test(arguments: read)
    func readInSwift(_ text: String) {
        #expect(swift(Array(text.utf8)) != nil)
        agree(Array(text.utf8))
    }

    @Test(arguments: leftToJansson)
    func notReadInSwift(_ text: String) {
        #expect(swift(Array(text.utf8)) == nil)
    }

    @Test func invalidUTF8IsLeftToJansson() {
        for bad: [UInt8] in [[0x22, 0xC3, 0x28, 0x22], [0x22, 0xFF, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22],
                             [0x22, 0xC0, 0xAF, 0x22], [0x22, 0x5C, 0x6E, 0xFF, 0x22]] {
            #expect(swift(bad) == nil)
            #expect(jansson(bad) == nil)
        }
    }

    @Test func objectsOfManyMembersAreLeftToJansson() {
        let text = "{" + (0..<40).map { "\"k\($0)\":\($0)" }.joined(separator: ",") + "}"
        #expect(swift(Array(text.utf8)) == nil)
        #expect(jansson(Array(text.utf8)) != nil)
    }

    /// Every text made by cutting, repeating and changing bytes of the texts above: what Swift
    /// reads, jansson reads the same (a fixed generator, so the texts are the same every run).
    @Test func mutatedTextsAgree() {
        var generator = SplitMix64(seed: 27)
        let alphabet = Array(#"{}[]":,\ -019eE.tfnrue"ab/u"#.utf8) + [0x00, 0x1F, 0x7F, 0xC3, 0xA9, 0xED, 0xFF]
        var checked = 0
        for source in Self.read + Self.leftToJansson {
            let base = Array(source.utf8)
            for _ in 0..<300 {
                var text = base
                for _ in 0..<(1 + Int(generator.next() % 3)) {
                    let index = text.isEmpty ? 0 : Int(generator.next() % UInt64(text.count))
                    switch generator.next() % 3 {
                    case 0 where !text.isEmpty: text.remove(at: index)
                    case 1: text.insert(alphabet[Int(generator.next() % UInt64(alphabet.count))], at: index)
                    default: if !text.isEmpty { text[index] = alphabet[Int(generator.next() % UInt64(alphabet.count))] }
                    }
                }
                agree(text)
                checked += 1
            }
        }
        #expect(checked > 10_000)
    }
}

/// A small deterministic generator for the mutations.
private struct SplitMix64 {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E3779B97F4A7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58476D1CE4E5B9
        z = (z ^ (z >> 27)) &* 0x94D049BB133111EB
        return z ^ (z >> 31)
    }
}
