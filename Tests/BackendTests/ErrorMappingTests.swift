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

    @Test func numericEnvelopeCodeIsKeptAsAString() {
        let body = Array(#"{"success":false,"code":42,"message":"x"}"#.utf8)
        #expect(throws: DomainError.business(code: "42", message: "x")) {
            try ErrorMapping.envelope(status: 200, body: body)
        }
    }

    @Test(arguments: [
        "", "not json", #"{"success":tru"#, "[]", "null", #"{"code":"0"}"#, #"{"success":"yes"}"#,
        #"{"success":true,"message":7}"#, #"{"success":true,"page":{"index":1}}"#,
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
