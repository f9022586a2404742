import Backend
import BackendTesting
@_spi(Transport) import VMHostEventLoop
import VMHostRuntime
import Testing
@_spi(Transport) import VMHostWire

/// Bodies a hostile backend may send: extreme but well-formed values are `decode` errors naming the
/// member, or read as backend.md says, never a trap; and no error quotes text of the body.
@Suite struct HostileBodyTests {
    static func productsBody(index: String, size: String = "20", total: String = "100", rate: String = "4.35") -> [UInt8] {
        Array(#"""
        {"success":true,"code":"0","message":"ok","data":[{"id":"p1","name":"n","bank":"b","annualRate":\#(rate),\#
        "saleStatus":"onSale","termDays":90,"minAmount":50000}],"page":{"index":\#(index),"size":\#(size),"total":\#(total)}}
        """#.utf8)
    }

    static func page(_ body: [UInt8]) throws(BackendError) -> Page<Product> {
        try ErrorMapping.envelope(status: 200, body: body).productPage()
    }

    /// `index × size` past `Int.max` is past any total: no more pages (it used to trap).
    @Test(arguments: ["4611686018427387904", "9223372036854775807"])
    func aHugePageIndexHasNoMorePages(index: String) throws {
        let page = try Self.page(Self.productsBody(index: index))
        #expect(page.info.index == Int(index))
        #expect(!page.hasMore)
        #expect(!PageInfo(index: .max, size: .max, total: .max).hasMore)
    }

    @Test(arguments: [
        ("-9223372036854775808", "20", "100", "page.index: out of range (must be at least 1)"),
        ("0", "20", "100", "page.index: out of range (must be at least 1)"),
        ("1", "0", "100", "page.size: out of range (must be at least 1)"),
        ("1", "-9223372036854775808", "100", "page.size: out of range (must be at least 1)"),
        ("1", "20", "-1", "page.total: out of range (must be at least 0)"),
    ])
    func anImpossiblePageIsADecodeErrorNamingTheMember(index: String, size: String, total: String, message: String) {
        #expect(throws: BackendError.decode(message)) { try Self.page(Self.productsBody(index: index, size: size, total: total)) }
    }

    @Test(arguments: ["1e17", "-1e17", "1e300", "-1e300", "1000000.01"])
    func anAnnualRateOutOfRangeIsADecodeErrorNamingTheMember(rate: String) {
        #expect(throws: BackendError.decode("data[0]: product.annualRate: out of range (must be between -1000000.0 and 1000000.0)")) {
            try Self.page(Self.productsBody(index: "1", rate: rate))
        }
    }

    @Test func theLimitsOfTheAnnualRateAreAccepted() throws {
        #expect(try Self.page(Self.productsBody(index: "1", rate: "1000000")).items[0].annualRate == 1_000_000)
        #expect(try Self.page(Self.productsBody(index: "1", rate: "-1e6")).items[0].annualRate == -1_000_000)
    }

    // MARK: Secrets

    static let secretBodies = [
        // Cut inside the token: jansson's message quoted it ("near '\"TKN-SECRET'").
        #"{"success":true,"code":"0","data":{"token":"TKN-SECRET"#,
        // A lone surrogate after the secret: the message quoted the escape.
        #"{"success":true,"code":"0","data":{"token":"TKN-SECRET\ud800"}}"#,
        #"{"success":true,"code":"0","data":{"token":"TKN-SECRET\udc00\ud800"}}"#,
        // Invalid tokens after it.
        #"{"success":true,"code":"0","data":{"token":TKN-SECRET}}"#,
        #"{"success":true,"code":"0","data":{"token":"x"} TKN-SECRET"#,
        "{\"success\":true,\"code\":\"0\",\"data\":{\"token\":\"TKN-SECRET\u{1}\"}}",
    ]

    @Test(arguments: secretBodies)
    func noDecodeErrorQuotesTheBody(body: String) {
        let error = #expect(throws: BackendError.self) { try ErrorMapping.envelope(status: 200, body: Array(body.utf8)).session() }
        #expect(error?.kind == .decode)
        #expect(error?.detail.contains("SECRET") == false, "\(error?.detail ?? "")")
        #expect(error?.detail.hasPrefix("the response body is not JSON (") == true)
    }

    @Test func aLoneSurrogateIsNamedWithoutItsText() {
        let error = #expect(throws: BackendError.self) {
            try ErrorMapping.envelope(status: 200, body: Array(#"{"success":true,"data":"SECRET\ud800"}"#.utf8))
        }
        #expect(error?.detail.contains("invalid Unicode escape (a lone or misordered surrogate)") == true)
        #expect(error?.detail.contains("SECRET") == false)
        #expect(error?.detail.lowercased().contains("ud800") == false)
    }

    @Test func anUnknownSaleStatusIsNotQuoted() {
        let body = String(decoding: Self.productsBody(index: "1"), as: UTF8.self).replacingOccurrences("onSale", "SECRET-status")
        let error = #expect(throws: BackendError.self) { try Self.page(Array(body.utf8)) }
        #expect(error?.kind == .decode)
        #expect(error?.detail.contains("saleStatus") == true)
        #expect(error?.detail.contains("SECRET") == false)
    }
}

/// The same bodies through the HTTP client and the loopback server.
@Suite(.timeLimit(.minutes(1)))
@HostActor
struct HostileBodyOverHTTPTests {
    let fixture: Fixture
    var server: LoopbackServer { fixture.server! }

    init() throws { fixture = try Fixture(.http) }

    @Test func extremePagesAndRatesEndAsDecodeErrorsOrNoMorePages() async throws {
        defer { fixture.finish() }
        server.setFault(.raw(status: 200, body: HostileBodyTests.productsBody(index: "9223372036854775807")), forPath: "/products")
        #expect(try await !fixture.client.products(page: 1, pageSize: 20).hasMore)
        server.setFault(.raw(status: 200, body: HostileBodyTests.productsBody(index: "-9223372036854775808")), forPath: "/products")
        #expect(await backendError { _ = try await fixture.client.products(page: 1, pageSize: 20) }
            == .decode("page.index: out of range (must be at least 1)"))
        server.setFault(.raw(status: 200, body: HostileBodyTests.productsBody(index: "1", rate: "1e17")), forPath: "/products")
        #expect(await backendError { _ = try await fixture.client.products(page: 1, pageSize: 20) }?.detail
            == "data[0]: product.annualRate: out of range (must be between -1000000.0 and 1000000.0)")
    }

    @Test func aTruncatedLoginBodyIsADecodeErrorThatQuotesNoToken() async throws {
        defer { fixture.finish() }
        server.setFault(.raw(status: 200, body: Array(HostileBodyTests.secretBodies[0].utf8)), forPath: "/auth/login")
        let error = await backendError { _ = try await fixture.client.login(username: "13800138000", password: "123456") }
        #expect(error?.kind == .decode)
        #expect(error?.detail.contains("SECRET") == false)
    }
}

extension String {
    fileprivate func replacingOccurrences(_ target: String, _ replacement: String) -> String {
        split(separator: target, omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
