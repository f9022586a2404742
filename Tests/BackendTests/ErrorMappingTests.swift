import Backend
@testable import HTTPBackend
import VMHostHTTP
import VMHostRuntime
import Testing
@_spi(Transport) import VMHostWire

/// The mapping table of `ErrorMapping`: every kind of failure, and cancellation, which is none.
@Suite struct ErrorMappingTests {
    static let okBody = Array(#"{"success":true,"code":"0","message":"ok","data":{"token":"t"}}"#.utf8)

    @Test(arguments: [400, 401, 404, 405, 500, 502, 503, 599])
    func statusFromFourHundredUpIsServerWithTheStatusAsCode(status: Int) {
        // Even a body that would be a success envelope is not looked at.
        #expect(throws: BackendError.server(status: status)) {
            try ErrorMapping.envelope(status: status, body: Self.okBody)
        }
    }

    @Test(arguments: [200, 201, 204, 299])
    func statusBelowFourHundredReadsTheEnvelope(status: Int) throws {
        let envelope = try ErrorMapping.envelope(status: status, body: Self.okBody)
        #expect(envelope.data == ["token": "t"])
    }

    @Test func envelopeFailureIsBusinessWithItsCodeAndMessage() {
        let body = Array(#"{"success":false,"code":"1001","message":"用户名或密码错误","data":null}"#.utf8)
        #expect(throws: BackendError.business(code: "1001", message: "用户名或密码错误")) {
            try ErrorMapping.envelope(status: 200, body: body)
        }
    }

    /// The business error of a failure envelope with `message`.
    func business(message: String, code: String = "1001") throws -> BackendError {
        let body = JSON.object(["success": false, "code": .string(code), "message": .string(message)]).serialized()
        do {
            _ = try ErrorMapping.envelope(status: 200, body: body)
        } catch {
            return error
        }
        throw TestFailure("a failure envelope succeeded")
    }

    struct TestFailure: Error { let text: String; init(_ text: String) { self.text = text } }

    @Test func aMessageOfAMebibyteReachesTheScreenBoundedAndTheDetailBoundedToo() throws {
        let error = try business(message: String(repeating: "错", count: 1024 * 1024))
        #expect(error.message(in: .zhHans) == String(repeating: "错", count: ServerText.shownLimit - 1) + "…")
        #expect(error.detail.hasPrefix(#"the server reported failure code "1001"; its message, shown cleaned and bounded, was sent as ""#))
        #expect(error.detail.hasSuffix("\"… (\(3 * 1024 * 1024) bytes in all)"))
        #expect(error.detail.count < ServerText.quotedLimit + 200)
        // Short and clean, a message is shown as sent and the detail says nothing more.
        let plain = try business(message: "用户名或密码错误")
        #expect(plain == BackendError.business(code: "1001", message: "用户名或密码错误"))
    }

    /// Messages as sent and as shown; passed by index, so that the test's own report prints none
    /// of their control characters.
    static let controlled = [
        ("密码\u{1B}[2J\u{1B}[H错误", "密码[2J[H错误"),
        ("第一行\r\n\t伪造的第二行  ", "第一行 伪造的第二行"),
        ("\u{202E}tnuocca\u{202C} locked\u{0}\u{7F}\u{85}", "tnuocca locked"),
        ("\u{0}\u{1}\n", ""),
    ]

    @Test(arguments: controlled.indices)
    func controlCharactersNeverReachTheScreenAndTheDetailEscapesThem(index: Int) throws {
        let (sent, shown) = Self.controlled[index]
        let error = try business(message: sent)
        #expect(error.serverMessage == shown)
        #expect(!error.detail.unicodeScalars.contains { ServerText.isControl($0) })
        #expect(error.detail.contains("was sent as \""))
        // Nothing left to show: the kind's friendly text instead.
        if shown.isEmpty { #expect(error.message(in: .zhHans) == BackendErrorText.business(.zhHans)) }
    }

    @Test func aCodeOfControlsAndLengthIsCleanedAndBoundedToo() throws {
        let error = try business(message: "失败", code: "E\u{1B}1" + String(repeating: "9", count: 100_000))
        #expect(error.code == .string("E1" + String(repeating: "9", count: 61) + "…"))
        #expect(error.detail.contains("(as sent: \"E\\u{1B}1"))
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
        #expect(throws: BackendError.business(code: code, message: message)) {
            try ErrorMapping.envelope(status: 200, body: Array(body.utf8))
        }
    }

    /// With `success` present it alone decides, whatever the code says.
    @Test func successDecidesWhenPresent() throws {
        let ok = try ErrorMapping.envelope(status: 200, body: Array(#"{"success":true,"code":"7","msg":"ignored"}"#.utf8))
        #expect(ok.code == "7")
        #expect(ok.message == "")
        #expect(throws: BackendError.business(code: "0", message: "no")) {
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
        #expect(throws: BackendError.business(code: "42", message: "x")) {
            try ErrorMapping.envelope(status: 200, body: body)
        }
    }

    @Test(arguments: [
        "", "not json", #"{"success":tru"#, "[]", "null", "{}", #"{"msg":"成功"}"#, #"{"success":"yes"}"#,
        #"{"success":true,"message":7}"#, #"{"success":true,"page":{"index":1}}"#, #"{"code":"0","msg":7}"#,
        #"{"code":true,"msg":"x"}"#, #"{"code":"0","page":{"index":1}}"#,
    ])
    func unparsableOrWronglyShapedBodyIsDecode(body: String) {
        let error = #expect(throws: BackendError.self) { try ErrorMapping.envelope(status: 200, body: Array(body.utf8)) }
        #expect(error?.kind == .decode)
        #expect(error?.code == .null)
    }

    /// libcurl's failures of the connection (`CURLcode`s 7, 18, 52, 55, 56, 35, 60, 3) are `network`.
    @Test(arguments: [7, 18, 52, 55, 56, 35, 60, 3] as [Int32])
    func transportFailuresAreNetwork(code: Int32) {
        #expect(HTTPErrorMapping.transportFailure(code: code, maxResponseBytes: 1024).kind == .network)
    }

    @Test func aRefusedConnectionCouldNotConnect() {
        // CURLE_COULDNT_CONNECT, CURLE_RECV_ERROR, CURLE_COULDNT_RESOLVE_HOST
        #expect(HTTPErrorMapping.transportFailure(code: 7, maxResponseBytes: 1024) == .network("could not connect to the server"))
        #expect(HTTPErrorMapping.transportFailure(code: 56, maxResponseBytes: 1024) == .network("the connection was lost"))
        #expect(HTTPErrorMapping.transportFailure(code: 6, maxResponseBytes: 1024) == .network("the server's host name could not be resolved"))
    }

    @Test func theTransportsBackstopIsTimeout() {
        // CURLE_OPERATION_TIMEDOUT
        #expect(HTTPErrorMapping.transportFailure(code: 28, maxResponseBytes: 1024).kind == .timeout)
    }

    @Test func aBodyOverTheLimitIsDecode() {
        // CURLE_WRITE_ERROR (the write callback took no more), CURLE_FILESIZE_EXCEEDED (announced length)
        for code: Int32 in [23, 63] {
            #expect(HTTPErrorMapping.transportFailure(code: code, maxResponseBytes: 1024) == .decode(
                "the response body is larger than the limit of 1024 bytes"))
        }
    }

    @Test func anUnknownCodeIsNetwork() {
        #expect(HTTPErrorMapping.transportFailure(code: 9999, maxResponseBytes: 1024) == .network("the request failed"))
    }

    /// Where libcurl cannot be loaded (the framework's client fails as `unavailable`), a call fails
    /// as `network` naming the missing library.
    @Test func aMissingLibcurlIsNetworkSayingSo() {
        let error = HTTPErrorMapping.backendError(HTTPError(.unavailable, "libcurl (libcurl.so.4) is missing; install it (Debian: libcurl4)"))
        #expect(error.kind == .network)
        #expect(error.detail.contains("libcurl"))
        #expect(error == HTTPErrorMapping.libcurlMissing)
    }

    @Test(arguments: [301, 302, 303, 307, 308])
    func aRedirectIsServerWithItsStatus(status: Int) {
        #expect(throws: BackendError.server(status: status)) { try ErrorMapping.envelope(status: status, body: Self.okBody) }
    }
}
