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
        // Reals: fractions, exponents of both signs and cases, and the edges of Double: its
        // largest, its smallest normal and subnormal, an underflow to 0 (jansson keeps it), and
        // integers beyond 64 bits once written as reals.
        "1.5", "-0.0", "0.0", "-0.5e-3", "1e3", "1E3", "1e+3", "1E-3", "0e0", "-0E+00", "10.010e010",
        "1.7976931348623157e308", "-1.7976931348623157E+308", "2.2250738585072014e-308",
        "4.9406564584124654e-324", "2.4703282292062328e-324", "1e-400", "-1e-99999999999999999999",
        "18446744073709551616.0", "-9223372036854775809e0", "123456789012345678901234567890.5",
        "0.1000000000000000055511151231257827021181583404541015625",
        "[1.5,-2e-2,[0.0],{\"x\":3.25E2}]",
    ]

    static let leftToJansson: [String] = [
        "", " ", "-", "01", "-01", "9223372036854775808", "-9223372036854775809", "18446744073709551616",
        "99999999999999999999999999", "1.", "1.e3", ".5", "-.5", "1e", "1e+", "1E-", "+1", "1.5.5", "1e5e5",
        "0x10", "1e400", "-1e400", "1.7976931348623159e308", "1e99999999999999999999", "[1.5,1e309]",
        "00.5", "-01.5", "1,5", "Infinity", "NaN",
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

    /// `-0` is the integer 0 to jansson, `-0.0` the real -0.0, its sign kept.
    @Test func negativeZero() {
        #expect(swift(Array("-0".utf8)) == .int(0))
        for text in ["-0.0", "-0e0", "-0.0E-5", "-1e-400"] {
            guard case .double(let value)? = swift(Array(text.utf8)), case .double(let theirs)? = jansson(Array(text.utf8)) else {
                Issue.record("\(text) is not a real to both")
                continue
            }
            #expect(value.bitPattern == theirs.bitPattern && value.sign == .minus, "\(text)")
        }
    }

    /// Reals of every size and precision read to the very double jansson's `strtod` reads
    /// (bit for bit), or are left to it where it refuses them (an overflow).
    @Test func realsAreReadToTheSameDoubleAsJansson() {
        var generator = SplitMix64(seed: 33)
        var read = 0
        for _ in 0..<20_000 {
            let digits = 1 + Int(generator.next() % 25)
            var text = generator.next() % 2 == 0 ? "-" : ""
            let whole = (0..<digits).map { _ in String(generator.next() % 10) }.joined()
            text += whole.count > 1 && whole.first == "0" ? "1" + whole.dropFirst() : whole
            if generator.next() % 3 != 0 {
                text += "." + (0..<(1 + Int(generator.next() % 20))).map { _ in String(generator.next() % 10) }.joined()
            }
            if generator.next() % 3 != 0 {
                text += ["e", "E", "e+", "e-", "E-"][Int(generator.next() % 5)] + String(generator.next() % 340)
            }
            let bytes = Array(text.utf8)
            let theirs = jansson(bytes)
            guard let ours = swift(bytes) else {
                // Left to jansson: an integer beyond 64 bits or a real beyond Double, both errors to it.
                #expect(theirs == nil, "\(text)")
                continue
            }
            read += 1
            switch (ours, theirs) {
            case (.double(let a), .double(let b)?): #expect(a.bitPattern == b.bitPattern, "\(text)")
            case (.int(let a), .int(let b)?): #expect(a == b, "\(text)")
            default: Issue.record("\(text): \(ours) against \(String(describing: theirs))")
            }
        }
        #expect(read > 15_000)
    }

    /// Nesting up to 512 is read here, deeper is jansson's (which reads up to its own limit).
    @Test func nestingDeeperThan512IsLeftToJansson() {
        for (depth, readHere) in [(512, true), (513, false)] {
            let arrays = Array((String(repeating: "[", count: depth) + String(repeating: "]", count: depth)).utf8)
            let objects = Array((String(repeating: #"{"a":"#, count: depth) + "1" + String(repeating: "}", count: depth)).utf8)
            #expect((swift(arrays) != nil) == readHere)
            #expect((swift(objects) != nil) == readHere)
            #expect(jansson(arrays) != nil && jansson(objects) != nil)
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

/// A message's top-level array past a bound is checked, not kept (``JSON/parseMessage``): what it
/// reads is what ``JSON/parse`` reads, but for the members of a long array, which it counts.
@Suite("A message's long array, counted")
struct JSONMessageTests {
    private func message(_ text: String, keeping limit: Int) -> Result<JSONMessage, JSONParseError> {
        Array(text.utf8).withUnsafeBytes { bytes in
            Result { () throws(JSONParseError) in try JSON.parseMessage(bytes, keepingArrayMembers: limit) }
        }
    }

    private func parsed(_ text: [UInt8]) -> Result<JSON, JSONParseError> {
        text.withUnsafeBytes { bytes in Result { () throws(JSONParseError) in try JSON.parse(bytes) } }
    }

    @Test func anArrayUpToTheBoundIsKeptPastItCounted() throws {
        let members = [#"1"#, #"-2.5e-3"#, #""x""#, #""\u00e9\n""#, #""在售""#, "[1,[2]]", #"{"a":{"b":[]}}"#, "true", "null", "{}"]
        let text = "[" + members.joined(separator: " , ") + "]"
        #expect(try message(text, keeping: 10).get() == .value(try JSON.parse(text)))
        #expect(try message(text, keeping: 9).get() == .longArray(members: 10))
        #expect(try message(text, keeping: 0).get() == .longArray(members: 10))
        #expect(try message(" \n[1,2,3] ", keeping: 2).get() == .longArray(members: 3))
        // The bound is the top level's: nested arrays and other values are kept whole.
        #expect(try message("[[1,2,3]]", keeping: 1).get() == .value([[1, 2, 3]]))
        #expect(try message(#"{"a":[1,2,3]}"#, keeping: 1).get() == .value(["a": [1, 2, 3]]))
        #expect(try message("[]", keeping: 0).get() == .value([]))
        // A real past the bound that cannot overflow is checked without being converted.
        #expect(try message("[1,1e300,-9.99e299,0.5e-400]", keeping: 1).get() == .longArray(members: 4))
    }

    /// Past the bound a text that is not JSON, or that jansson refuses, throws as ``JSON/parse``
    /// throws, with jansson's error.
    @Test func pastTheBoundAnErrorIsTheParseError() {
        let bad = ["[1,2,x]", "[1,2,1e400]", "[1,2,-1e309]", "[1,2,9223372036854775808]", "[1,2,01]", "[1,2,1.]",
                   "[1,2,\"\u{1}\"]", #"[1,2,"\ud800"]"#, #"[1,2,"\q"]"#, #"[1,2,{"a\u0000":1}]"#, "[1,2,[}]",
                   "[1,2,", "[1,2,3", "[1,2,3]x", "[1,2,truex]", "[1,2,\"unterminated]"]
        for text in bad {
            guard case .failure(let expected) = parsed(Array(text.utf8)) else {
                Issue.record("\(text) parses")
                continue
            }
            #expect(message(text, keeping: 1) == .failure(expected), "\(text)")
        }
        let badUTF8: [UInt8] = Array("[1,2,\"".utf8) + [0xC3, 0x28] + Array("\"]".utf8)
        guard case .failure(let expected) = parsed(badUTF8) else {
            Issue.record("invalid UTF-8 parses")
            return
        }
        #expect(badUTF8.withUnsafeBytes { bytes in
            Result { () throws(JSONParseError) in try JSON.parseMessage(bytes, keepingArrayMembers: 1) }
        } == .failure(expected))
    }

    /// What Swift leaves to jansson past the bound (a key held twice, nesting past 512) comes
    /// back whole, as jansson reads it.
    @Test func aTextLeftToJanssonComesBackWhole() throws {
        let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
        for text in ["[1,2," + deep + "]", #"[1,2,{"a":1,"a":2}]"#] {
            #expect(try message(text, keeping: 1).get() == .value(try JSON.parse(text)), "\(text.prefix(20))")
        }
    }

    /// Long arrays cut, repeated and changed byte by byte: parseMessage throws what parse throws,
    /// or reads what it reads, or counts the members of the array parse reads.
    @Test func mutatedLongArraysAgreeWithParse() {
        var generator = SplitMix64(seed: 5)
        let alphabet = Array(#"{}[]":,\ -019eE.tfnrue"ab/u"#.utf8) + [0x00, 0x1F, 0x7F, 0xC3, 0xA9, 0xED, 0xFF]
        let sources = [
            #"[1,-2,3.5e2,"a",[4,[5]],{"k":"v","n":[6]},true,false,null,"\u00e9\ud83d\ude00",-0,0.25]"#,
            #"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"x","params":[1,2]},7,"8"]"#,
        ]
        var counted = 0
        for source in sources {
            let base = Array(source.utf8)
            for _ in 0..<2_000 {
                var text = base
                for _ in 0..<(1 + Int(generator.next() % 3)) {
                    let index = Int(generator.next() % UInt64(text.count))
                    switch generator.next() % 3 {
                    case 0 where text.count > 1: text.remove(at: index)
                    case 1: text.insert(alphabet[Int(generator.next() % UInt64(alphabet.count))], at: index)
                    default: text[index] = alphabet[Int(generator.next() % UInt64(alphabet.count))]
                    }
                }
                let limit = Int(generator.next() % 5)
                let ours = text.withUnsafeBytes { bytes in
                    Result { () throws(JSONParseError) in try JSON.parseMessage(bytes, keepingArrayMembers: limit) }
                }
                switch (ours, parsed(text)) {
                case (.success(.longArray(let members)), .success(.array(let elements))):
                    #expect(members == elements.count && members > limit)
                    counted += 1
                case (.success(.value(let value)), .success(let whole)):
                    #expect(value == whole)
                    // Kept whole only when read by jansson (the reader leaves it a key held twice, say).
                    if case .array(let elements) = whole, elements.count > limit,
                       text.withUnsafeBytes({ JSONReading.value(of: $0) }) != nil {
                        Issue.record("a long array kept: \(String(decoding: text, as: UTF8.self))")
                    }
                case (.failure(let a), .failure(let b)):
                    #expect(a == b)
                case (let a, let b):
                    Issue.record("\(String(decoding: text, as: UTF8.self)): \(a) against \(b)")
                }
            }
        }
        #expect(counted > 500)
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
