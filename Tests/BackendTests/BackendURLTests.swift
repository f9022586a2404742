import Backend
import Testing

/// The base URL of `--backend` and the percent-encoding of what is sent, without Foundation.
@Suite struct BackendURLTests {
    @Test func anHTTPURLKeepsItsOriginAndPathPrefix() throws {
        let url = try #require(BackendURL("HTTP://Example.com:8080/api/v1/"))
        #expect(url.scheme == "http")
        #expect(url.host == "example.com")
        #expect(url.port == 8080)
        #expect(url.pathPrefix == "/api/v1")
        #expect(url.origin == "http://example.com:8080")
        #expect(url.description == "http://example.com:8080/api/v1")
    }

    @Test func theDefaultPortsAreTheSchemes() throws {
        #expect(try #require(BackendURL("https://h")).effectivePort == 443)
        #expect(try #require(BackendURL("http://h")).effectivePort == 80)
        #expect(try #require(BackendURL("http://[::1]:9")).host == "[::1]")
        #expect(try #require(BackendURL("http://[::1]:9")).port == 9)
        #expect(try #require(BackendURL("http://[::1]/x")).port == nil)
    }

    @Test func trailingSlashesAreDropped() throws {
        #expect(try #require(BackendURL("https://H//")).description == "https://h")
        #expect(try #require(BackendURL("hTtPs://h:00443/a//")).pathPrefix == "/a")
    }

    @Test(arguments: [
        "", "embedded", "ftp://h", "http://", "http:///path", "http://h:0", "http://h:65536", "http://h:+80",
        "http://h:", "http://user:pw@h", "http://h/a?b=c", "http://h/#x", "http://h h", "http://[::1",
        "http://::1]", "http://é", "http://h/é", "http://h/a\tb", "http://h:123456", "https:/h", "httpx://h", "://h",
        // A control character or DEL in the path (read as the framework's HTTPURL reads a URL).
        "http://h/a\u{01}b", "http://h/a\u{7F}",
    ])
    func anythingElseIsRefused(text: String) {
        #expect(BackendURL(text) == nil)
    }

    @Test func pathSegmentsAndQueryValuesAreEncodedSoTheyCannotChangeTheRoute() {
        #expect(PercentEncoding.encode("a/b c?#%", as: .pathSegment) == "a%2Fb%20c%3F%23%25")
        #expect(PercentEncoding.encode("a&b=c+d", as: .queryComponent) == "a%26b%3Dc%2Bd")
        #expect(PercentEncoding.encode("新品", as: .pathSegment) == "%E6%96%B0%E5%93%81")
        #expect(PercentEncoding.encode("a-b_c.d~", as: .pathSegment) == "a-b_c.d~")
    }

    @Test func decodingUndoesEncodingAndRefusesBadEscapes() {
        #expect(PercentEncoding.decode("%E6%96%B0%E5%93%81%2F") == "新品/")
        #expect(PercentEncoding.decode("%zz") == nil)
        #expect(PercentEncoding.decode("%E6") == nil)
        #expect(PercentEncoding.decode("%4") == nil)
    }

    @Test func whiteSpaceOfEveryWidthIsTrimmedAtBothEnds() {
        #expect(" \t新品\u{3000}\n".trimmingWhiteSpace() == "新品")
        #expect("a b".trimmingWhiteSpace() == "a b")
        #expect(" \u{3000} ".trimmingWhiteSpace() == "")
    }
}
