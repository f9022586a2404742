import Testing
@_spi(Transport) @testable import VMHostWire

/// `Decodable` values read from JSON without Foundation (what the HTTP client decodes bodies with).
struct JSONValueDecoderTests {
    struct Page: Codable, Equatable {
        var items: [Item]
        var next: String?
        var total: Int
    }

    struct Item: Codable, Equatable {
        var id: String
        var price: Double
        var tags: [String]
        var kind: Kind
    }

    enum Kind: String, Codable { case food, drink }

    @Test func aNestedValueRoundTripsThroughTheEncoder() throws {
        let page = Page(items: [Item(id: "a", price: 1.5, tags: ["x"], kind: .drink), Item(id: "b", price: 2, tags: [], kind: .food)], next: nil, total: 2)
        #expect(try JSONValueDecoder.decode(Page.self, from: JSONValueEncoder.encode(page)) == page)
    }

    @Test func unknownMembersAreIgnoredAndAMissingOptionalIsNil() throws {
        let json = try JSON.parse(#"{"items":[],"total":3,"extra":{"a":1}}"#)
        #expect(try JSONValueDecoder.decode(Page.self, from: json) == Page(items: [], next: nil, total: 3))
    }

    @Test(arguments: [
        (#"{"items":[{"id":7,"price":1,"tags":[],"kind":"food"}],"total":1}"#, "$.items[0].id: expected a string, got a number"),
        (#"{"items":[],"total":1.5}"#, "$.total: expected an integer that fits Int"),
        (#"{"items":[]}"#, "$.total: is missing"),
        (#"{"items":{},"total":1}"#, "$.items: expected an array, got an object"),
        (#"[]"#, "$: expected an object, got an array"),
    ])
    func aValueOfTheWrongShapeNamesItsPath(text: String, message: String) throws {
        let error = #expect(throws: JSONDecodingError.self) { try JSONValueDecoder.decode(Page.self, from: try JSON.parse(text)) }
        #expect(error?.description == message)
    }

    @Test func anIntegerOutOfRangeIsRefused() throws {
        #expect(throws: JSONDecodingError.self) { try JSONValueDecoder.decode(UInt8.self, from: .int(300)) }
        #expect(try JSONValueDecoder.decode(Int32.self, from: .double(7)) == 7)
    }
}
