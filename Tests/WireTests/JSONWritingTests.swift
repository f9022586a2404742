import Testing
@_spi(Transport) @testable import VMHostWire

/// The values written in Swift (JSON+Writing.swift) are the bytes jansson writes for them.
@Suite("JSON written in Swift, byte for byte as jansson")
struct JSONWritingTests {
    private func jansson(_ value: JSON) throws -> [UInt8] {
        var out: [UInt8] = []
        try value.appendByJansson(to: &out)
        return out
    }

    private func swift(_ value: JSON) -> [UInt8]? {
        var out: [UInt8] = []
        return value.appendWithoutJansson(to: &out) ? out : nil
    }

    @Test func everyCharacterBelow128AndSomeBeyond() throws {
        var scalars = (0..<128).map { Unicode.Scalar(UInt8($0)) }
        scalars += ["é", "在", "售", "\u{7FF}", "\u{800}", "\u{FFFF}", "\u{10000}", "😀", "\u{10FFFF}", "\u{2028}"]
        for scalar in scalars {
            let text = "a\(scalar)b\(scalar)"
            for value: JSON in [.string(String(scalar)), .string(text), ["k\(scalar)": .string(text)]] {
                #expect(swift(value) == (try jansson(value)), "\(scalar.value)")
            }
        }
    }

    /// Strings are scanned for escapes eight bytes at a time: each character at each position of
    /// a word, in strings long enough for several words, short and long (heap) ones.
    @Test func everyCharacterAtEveryPositionOfALongString() throws {
        var scalars = (0..<128).map { Unicode.Scalar(UInt8($0)) }
        scalars += ["é", "在", "\u{80}", "\u{FF}", "😀"]
        for scalar in scalars {
            for length in [8, 9, 15, 16, 17, 31] {
                for position in 0..<length {
                    var text = String(repeating: "a", count: position)
                    text.unicodeScalars.append(scalar)
                    text += String(repeating: "z", count: length - position - 1)
                    #expect(swift(.string(text)) == (try jansson(.string(text))), "\(scalar.value) at \(position) of \(length)")
                }
            }
        }
    }

    @Test func integersAtTheirBounds() throws {
        var numbers: [Int64] = [0, 1, 9, 10, 11, 99, 100, -1, -9, -10, .max, .min, .max - 1, .min + 1]
        var power: Int64 = 1
        for _ in 0..<18 {
            power *= 10
            numbers += [power - 1, power, power + 1, -power, -(power - 1)]
        }
        for number in numbers {
            #expect(swift(.int(number)) == (try jansson(.int(number))), "\(number)")
        }
    }

    @Test func nestedValuesInOrder() throws {
        let values: [JSON] = [
            .null, true, false, [], [:], [[]], [[:]], ["a": [:], "b": [], "c": nil],
            ["zeta": 1, "alpha": ["x": [1, "two", false, nil, ["deep": ["deeper": "\u{0}\n"]]]], "mid": "m"],
            .array((0..<40).map { .int(Int64($0)) }),
            .object(JSONObject((0..<40).map { ("key\($0)", JSON.string("value \($0)")) })),
            "", " ", "\"\\/", "line\r\nnext\ttab\u{8}\u{C}\u{1F}\u{7F}",
        ]
        for value in values {
            #expect(swift(value) == (try jansson(value)), "\(value)")
        }
    }

    @Test func realsAndRepeatedKeysAreLeftToJansson() throws {
        #expect(swift(.double(1.5)) == nil)
        #expect(swift(["a": 1, "b": [2, 2.5]]) == nil)
        let twice = JSON.object(JSONObject([("a", 1), ("b", 2), ("a", 3)]))
        #expect(swift(twice) == nil)
        let many = JSON.object(JSONObject((0..<40).map { ("k\($0 % 39)", JSON.int(Int64($0))) }))
        #expect(swift(many) == nil)
        // What is written for them is jansson's.
        for value in [JSON.double(1.5), ["a": 1, "b": [2, 2.5]], twice, many] {
            #expect(value.serialized() == (try jansson(value)))
        }
        #expect(twice.description == #"{"a":3,"b":2}"#)
    }
}
