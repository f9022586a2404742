import Testing
@testable import VMHostHTTP

/// Header fields: names compare without regard to case, order is kept.
struct HTTPHeadersTests {
    @Test func namesCompareWithoutRegardToCase() {
        var headers: HTTPHeaders = ["Accept": "application/json", "X-Device-Id": "d", "uuid": "d"]
        #expect(headers["ACCEPT"] == "application/json")
        #expect(headers["x-device-id"] == "d")
        headers["x-DEVICE-id"] = "e"
        #expect(headers.fields.map(\.name) == ["Accept", "x-DEVICE-id", "uuid"])
        #expect(headers["X-Device-Id"] == "e")
        headers["Accept"] = nil
        #expect(headers.fields.map(\.name) == ["x-DEVICE-id", "uuid"])
        #expect(headers["X-Device-I"] == nil)
        #expect(headers["X-Device-Idd"] == nil)
    }

    @Test func aLiteralKeepsTheLastOfANameInTheFirstPlace() {
        let headers: HTTPHeaders = ["A": "1", "B": "2", "a": "3"]
        #expect(headers.fields.map(\.name) == ["a", "B"])
        #expect(headers["A"] == "3")
    }

    @Test func namesOutsideASCIIAreComparedLowerCased() {
        var headers = HTTPHeaders()
        headers.add("Ärger", "1")
        #expect(headers["ärger"] == "1")
        #expect(headers["\u{212A}ey"] == nil)
        headers.add("key", "2")
        // KELVIN SIGN lower-cases to "k".
        #expect(headers["\u{212A}ey"] == "2")
    }

    @Test func mergingSetsEachNameOver() {
        let base: HTTPHeaders = ["Accept": "application/json", "Authorization": "Bearer t"]
        let merged = base.merging(["authorization": "Bearer u", "X-Trace": "7"])
        #expect(merged.fields.map(\.name) == ["Accept", "authorization", "X-Trace"])
    }
}
