import Testing
@testable import VMHostHTTP

/// The client's URLs: parsing, origins, and where a redirect's `Location` leads.
struct HTTPURLTests {
    @Test func anURLSplitsIntoOriginAndPath() throws {
        let url = try #require(HTTPURL("HTTPS://Api.Example.com:8443/v2?x=1#frag"))
        #expect(url.origin == "https://api.example.com:8443")
        #expect(url.pathAndQuery == "/v2?x=1")
        #expect(HTTPURL("http://h")?.pathAndQuery == "/")
        #expect(HTTPURL("http://h:80/x")?.origin == "http://h")
    }

    @Test func hostsPortsAndQueriesAreReadAsWritten() throws {
        let literal = try #require(HTTPURL("http://[::1]:8080/x"))
        #expect(literal.host == "[::1]")
        #expect(literal.port == 8080)
        #expect(HTTPURL("http://[::1]/x")?.port == nil)
        #expect(HTTPURL("http://H?q=1")?.pathAndQuery == "/?q=1")
        #expect(HTTPURL("https://h:00443")?.effectivePort == 443)
        #expect(HTTPURL("http://h/a#b c")?.text == "http://h/a")
        // "#" starts the fragment whatever follows it (a combining mark too: bytes, not characters).
        #expect(HTTPURL("http://h/a#\u{301}x")?.text == "http://h/a")
        #expect(HTTPURL("hTtP://h/a://b")?.pathAndQuery == "/a://b")
    }

    @Test(arguments: [
        "ftp://h/x", "http://user:pw@h/x", "http:///x", "http://h:0", "http://h:70000", "http://h/a b", "h/x",
        "http://h:", "http://h:8a", "http://h:123456", "http://é/x", "http://h\tx/", "http://h/\u{7F}", "http://h/é",
        "http://[::1/x", "http://::1]/x", "httpx://h", "http:/h", "://h", "",
    ])
    func anythingElseIsRefused(text: String) {
        #expect(HTTPURL(text) == nil)
    }

    @Test func pathsAreAppendedAfterThePrefix() {
        #expect(HTTPURL("http://h/api/")?.appending("/items?page=2")?.text == "http://h/api/items?page=2")
    }

    @Test func aLocationResolvesAgainstTheURL() throws {
        let url = try #require(HTTPURL("http://h:8080/a/b?q=1"))
        #expect(url.resolving("/x")?.text == "http://h:8080/x")
        #expect(url.resolving("c")?.text == "http://h:8080/a/c")
        #expect(url.resolving("//other/y")?.text == "http://other/y")
        #expect(url.resolving("https://other:9/z")?.isSameOrigin(as: url) == false)
        #expect(url.resolving("http://h:8080/k")?.isSameOrigin(as: url) == true)
    }

    @Test func queryComponentsArePercentEncoded() {
        #expect(URLComponentEncoding.query([("q", "a b&c=d/é"), ("n", "1")]) == "q=a%20b%26c%3Dd%2F%C3%A9&n=1")
    }
}
