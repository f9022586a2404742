import Testing
@testable import Wire
@Test func parses() throws { #expect(try JSON.parse("{\"a\":1}") == ["a": 1]) }
