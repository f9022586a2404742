#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Backend
import Foundation
import VMHostRuntime
import Testing
import VMHostWire

/// The mapping table of `ErrorMapping`: every kind of failure, and cancellation, which is none.
@Suite struct ErrorMappingTests {
    static let okBody = Array(#"{"success":true,"code":"0","message":"ok","data":{"token":"t"}}"#.utf8)

    @Test(arguments: [400, 401, 404, 405, 500, 502, 503, 599])
    func statusFromFourHundredUpIsServerWithTheStatusAsCode(status: Int) {
        // Even a body that would be a success envelope is not looked at.
        #expect(throws: DomainError.server(status: status)) {
            try ErrorMapping.envelope(status: status, body: Self.okBody)
        }
    }

    @Test(arguments: [200, 201, 204, 299, 304, 399])
    func statusBelowFourHundredReadsTheEnvelope(status: Int) throws {
        let envelope = try ErrorMapping.envelope(status: status, body: Self.okBody)
        #expect(envelope.data == ["token": "t"])
    }

    @Test func envelopeFailureIsBusinessWithItsCodeAndMessage() {
        let body = Array(#"{"success":false,"code":"1001","message":"用户名或密码错误","data":null}"#.utf8)
        #expect(throws: DomainError.business(code: "1001", message: "用户名或密码错误")) {
            try ErrorMapping.envelope(status: 200, body: body)
        }
    }

    /// Without `success`, the code decides: `"0"` or `0` is success, `msg` the message (the seed's
    /// `{"code": "1", "msg": "失败"}`).
    @Test(arguments: [#"{"code":"0","msg":"成功","data":{"token":"t"}}"#, #"{"code":0,"msg":"成功","data":{"token":"t"}}"#])
    func aZeroCodeWithoutSuccessIsSuccess(body: String) throws {
        let envelope = try ErrorMapping.envelope(status: 200, body: Array(body.utf8))
        #expect(envelope.success)
        #expect(envelope.code == "0")
        #expect(envelope.message == "成功")
        #expect(envelope.data == ["token": "t"])
    }

    @Test(arguments: [
        (#"{"code":"1","msg":"失败"}"#, "1", "失败"), (#"{"code":1001,"msg":"用户名或密码错误"}"#, "1001", "用户名或密码错误"),
        (#"{"code":"2","message":"旧字段"}"#, "2", "旧字段"), (#"{"code":"3"}"#, "3", ""),
    ])
    func anotherCodeWithoutSuccessIsABusinessFailureWithItsMsg(body: String, code: String, message: String) {
        #expect(throws: DomainError.business(code: code, message: message)) {
            try ErrorMapping.envelope(status: 200, body: Array(body.utf8))
        }
    }

    /// With `success` present it alone decides, whatever the code says.
    @Test func successDecidesWhenPresent() throws {
        let ok = try ErrorMapping.envelope(status: 200, body: Array(#"{"success":true,"code":"7","msg":"ignored"}"#.utf8))
        #expect(ok.code == "7")
        #expect(ok.message == "")
        #expect(throws: DomainError.business(code: "0", message: "no")) {
            try ErrorMapping.envelope(status: 200, body: Array(#"{"success":false,"code":"0","message":"no"}"#.utf8))
        }
    }

    @Test func bothConventionsWriteAndReadBack() throws {
        for convention in EnvelopeConvention.allCases {
            for envelope in [Envelope.ok(["a": 1], page: PageInfo(index: 1, size: 20, total: 3)), .failure(code: "9", message: "坏")] {
                #expect(try Envelope(json: envelope.json(in: convention)) == envelope)
            }
        }
    }

    @Test func numericEnvelopeCodeIsKeptAsAString() {
        let body = Array(#"{"success":false,"code":42,"message":"x"}"#.utf8)
        #expect(throws: DomainError.business(code: "42", message: "x")) {
            try ErrorMapping.envelope(status: 200, body: body)
        }
    }

    @Test(arguments: [
        "", "not json", #"{"success":tru"#, "[]", "null", "{}", #"{"msg":"成功"}"#, #"{"success":"yes"}"#,
        #"{"success":true,"message":7}"#, #"{"success":true,"page":{"index":1}}"#, #"{"code":"0","msg":7}"#,
        #"{"code":true,"msg":"x"}"#, #"{"code":"0","page":{"index":1}}"#,
    ])
    func unparsableOrWronglyShapedBodyIsDecode(body: String) {
        let error = #expect(throws: DomainError.self) { try ErrorMapping.envelope(status: 200, body: Array(body.utf8)) }
        #expect(error?.kind == .decode)
        #expect(error?.code == .null)
    }

    @Test(arguments: [
        URLError.Code.cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet,
        .networkConnectionLost, .secureConnectionFailed, .badServerResponse,
    ])
    func transportFailuresAreNetwork(code: URLError.Code) {
        let mapped = ErrorMapping.transportFailure(URLError(code))
        #expect((mapped as? DomainError)?.kind == .network)
    }

    @Test func urlSessionTimeoutIsTimeout() {
        #expect((ErrorMapping.transportFailure(URLError(.timedOut)) as? DomainError)?.kind == .timeout)
    }

    @Test func cancellationIsNeverAKind() {
        #expect(ErrorMapping.transportFailure(URLError(.cancelled)) is CancellationError)
        #expect(ErrorMapping.transportFailure(CancellationError()) is CancellationError)
    }

    @Test func aDomainErrorPassesThrough() {
        #expect(ErrorMapping.transportFailure(DomainError.timeout()) as? DomainError == .timeout())
    }

    @Test func anUnknownErrorIsNetwork() {
        struct Odd: Error {}
        #expect((ErrorMapping.transportFailure(Odd()) as? DomainError)?.kind == .network)
    }
}
