import Hummingbird
import Testing
@testable import VMHostWebSocket

/// The checks of every request and handshake: `Host` (DNS rebinding), `Origin`, the token; and the
/// connection guard's reading of a request head, a byte at a time.
@Suite struct HandshakeGateTests {
    static let token = "s3cret-TOKEN"
    static let gate = HandshakeGate(allowedOrigins: ["http://localhost:3000"], allowedHosts: ["vmhost.example"], listenHost: "192.168.1.20", token: nil)
    static let guarded = HandshakeGate(allowedOrigins: [], allowedHosts: [], listenHost: "127.0.0.1", token: token)

    static func request(host: String?, path: String = "/rpc", origin: String? = nil, authorization: String? = nil) -> HTTPRequest {
        var request = HTTPRequest(method: .get, scheme: nil, authority: host, path: path)
        if let origin { request.headerFields[.origin] = origin }
        if let authorization { request.headerFields[.authorization] = authorization }
        return request
    }

    static func status(_ gate: HandshakeGate, _ request: HTTPRequest) -> Int? {
        gate.check(request).status?.code
    }

    // MARK: Host

    @Test(arguments: [
        "127.0.0.1", "127.0.0.1:8787", "10.1.2.3:1", "[::1]", "[::1]:8787", "[fe80::1]:65535",
        "localhost", "localhost:8787", "LOCALHOST", "localhost.", "localhost..", "app.localhost", "a.b.localhost:1",
        "192.168.1.20:8787",  // the listen address
        "vmhost.example", "VMHost.Example.:443",  // an --allow-host name, in any case, with a trailing dot
    ])
    func aHostThatNamesTheServerPasses(host: String) {
        #expect(Self.gate.checkHost(Self.request(host: host)).status == nil, "\(host)")
    }

    @Test(arguments: [
        "evil.example", "evil.example:8787",  // a rebound name
        "localhost.evil.example", "evillocalhost", "localhost-evil", "xlocalhost:80",
        "vmhost.example.evil", "sub.vmhost.example",  // near an allowed name
        "", ":8787", "127.0.0.1:80x", "127.0.0.1:8787:1", "localhost:-1", "localhost: 80",
        "::1", "[::1", "[::1]x", "[::1]:x", "[127.0.0.1]", "[evil.example]",  // malformed or not addresses
        "127.1", "0x7f.0.0.1", "1.2.3.4.5", "127.0.0.01",  // inet_aton forms, not addresses
        "localhost\u{0}.evil.example", "local host",
    ])
    func anyOtherHostIsRefused403(host: String) {
        #expect(Self.gate.checkHost(Self.request(host: host)).status?.code == 403, "\(host)")
        #expect(Self.status(Self.gate, Self.request(host: host)) == 403, "\(host)")
    }

    @Test func aRequestWithoutHostIsRefused403() {
        #expect(Self.gate.checkHost(Self.request(host: nil)).status?.code == 403)
    }

    @Test func theHostIsCheckedBeforeTheToken() {
        // A refused name learns nothing about the token.
        #expect(Self.status(Self.guarded, Self.request(host: "evil.example")) == 403)
        #expect(Self.status(Self.guarded, Self.request(host: "evil.example", authorization: "Bearer \(Self.token)")) == 403)
    }

    // MARK: Origin

    @Test(arguments: [
        ("127.0.0.1:8787", nil as String?),  // not a browser
        ("127.0.0.1:8787", "http://127.0.0.1:8787"),  // the server's own
        ("127.0.0.1:8787", "http://127.0.0.1:8787/"),
        ("127.0.0.1:8787", "HTTP://127.0.0.1:8787"),
        ("LocalHost:8787", "http://localhost:8787"),
        ("127.0.0.1:8787", "http://localhost:3000"),  // --allow-origin
        ("127.0.0.1:8787", "http://LOCALHOST:3000//"),
    ])
    func anOwnOrAllowedOriginPasses(host: String, origin: String?) {
        #expect(Self.status(Self.gate, Self.request(host: host, origin: origin)) == nil)
    }

    @Test(arguments: [
        "http://evil.example", "http://127.0.0.1:8788", "https://127.0.0.1:8787", "http://127.0.0.1",
        "null", "", "http://127.0.0.1:8787.evil.example", "http://localhost:30000", "http://localhost:3000/x",
    ])
    func anyOtherOriginIsRefused403(origin: String) {
        let verdict = Self.gate.check(Self.request(host: "127.0.0.1:8787", origin: origin))
        #expect(verdict.status?.code == 403, "\(origin)")
        #expect(verdict.reason == "its Origin is not allowed")
    }

    // MARK: Token

    @Test(arguments: [
        (nil as String?, "/rpc?token=s3cret-TOKEN"),
        ("Bearer s3cret-TOKEN", "/rpc"),
        ("bearer s3cret-TOKEN", "/rpc"),
        ("BEARER   s3cret-TOKEN", "/rpc"),
        ("  Bearer s3cret-TOKEN", "/rpc"),
        (nil, "/rpc?a=1&token=s3cret%2DTOKEN&b=2"),  // percent-encoded
        ("Bearer wrong", "/rpc?token=s3cret-TOKEN"),  // either one
    ])
    func theTokenInTheHeaderOrTheQueryPasses(authorization: String?, path: String) {
        #expect(Self.status(Self.guarded, Self.request(host: "127.0.0.1", path: path, authorization: authorization)) == nil)
    }

    @Test(arguments: [
        (nil as String?, "/rpc"),
        ("Bearer", "/rpc"), ("Bearer ", "/rpc"), ("Basic s3cret-TOKEN", "/rpc"), ("Bearers3cret-TOKEN", "/rpc"),
        ("Bearer s3cret-TOKE", "/rpc"),  // one byte short
        ("Bearer s3cret-TOKENx", "/rpc"),  // one byte more
        ("Bearer s3cret-token", "/rpc"),  // the token's case counts
        (nil, "/rpc?token="), (nil, "/rpc?token"), (nil, "/rpc?Token=s3cret-TOKEN"), (nil, "/rpc?xtoken=s3cret-TOKEN"),
        (nil, "/rpc?token=s3cret-TOKE"), (nil, "/rpc?token=s3cret-TOKEN%"), (nil, "/rpc?token=s3cret-TOKEN%0"),
        (nil, "/rpc?token=s3cret-TOKEN%00"), (nil, "/rpc?token=%FF"),
        (nil, "/rpc?token=wrong&token=s3cret-TOKEN"),  // the first one counts
        (nil, "/rpc#token=s3cret-TOKEN"),
    ])
    func noTokenOrAnotherIsRefused401AndTheReasonNeverQuotesIt(authorization: String?, path: String) {
        let verdict = Self.guarded.check(Self.request(host: "127.0.0.1", path: path, authorization: authorization))
        #expect(verdict.status?.code == 401, "\(String(describing: authorization)) \(path)")
        #expect(!verdict.reason.contains("s3cret") && !verdict.reason.contains("TOKE"))
    }

    @Test func comparingTokensLooksAtEveryByte() {
        #expect(HandshakeGate.same("abc", "abc"))
        #expect(!HandshakeGate.same("abd", "abc"))
        #expect(!HandshakeGate.same("ab", "abc"))
        #expect(!HandshakeGate.same("abc\u{0}", "abc"))
        #expect(!HandshakeGate.same("", "abc"))
        #expect(!HandshakeGate.same(nil, "abc"))
        #expect(HandshakeGate.same("", ""))
    }

    @Test func thePathIsWhatComesBeforeTheQuery() {
        #expect(HandshakeGate.path(of: Self.request(host: "h", path: "/rpc?token=x")) == "/rpc")
        #expect(HandshakeGate.path(of: Self.request(host: "h", path: "/rpc?")) == "/rpc")
        #expect(HandshakeGate.path(of: Self.request(host: "h", path: "?token=x")) == "")
        #expect(HandshakeGate.path(of: Self.request(host: "h", path: "/a/b")) == "/a/b")
    }

    // MARK: The connection guard's request head

    static let head = Array("GET /rpc HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n".utf8)

    @Test func theEndOfAHeadIsFoundByteByByteAtItsLastByte() {
        // As ConnectionGuard reads: each read appended, the search starting 3 bytes back.
        var seen: [UInt8] = []
        for (index, byte) in (Self.head + Array("\u{81}\u{85}".utf8)).enumerated() {
            let searchFrom = max(0, seen.count - 3)
            seen.append(byte)
            let end = ConnectionGuard.endOfHead(seen, from: searchFrom)
            if index < Self.head.count - 1 {
                #expect(end == nil, "at byte \(index)")
            } else {
                #expect(end == Self.head.count, "at byte \(index)")
                break
            }
        }
    }

    @Test func theEndOfAHeadIsFoundWhereverTheReadsAreCut() {
        let bytes = Self.head + [0x81, 0x85, 1, 2, 3, 4]
        for cut in 1..<bytes.count {
            let first = Array(bytes[..<cut])
            var end = ConnectionGuard.endOfHead(first, from: 0)
            if end == nil { end = ConnectionGuard.endOfHead(bytes, from: max(0, first.count - 3)) }
            #expect(end == Self.head.count, "cut at \(cut)")
        }
    }

    @Test(arguments: [
        ("Upgrade: websocket", true), ("upgrade:WebSocket", true), ("UPGRADE :  websocket ", true), ("Upgrade: h2c, websocket", true),
        ("Upgrade: h2c", false), ("X-Upgrade: websocket", false), ("Upgraded: websocket", false), ("Connection: websocket", false),
    ])
    func anUpgradeIsToldByItsHeaderAlone(line: String, isUpgrade: Bool) {
        let head = Array("GET /rpc HTTP/1.1\r\nHost: h\r\n\(line)\r\n\r\n".utf8)
        #expect(ConnectionGuard.isUpgrade(head[...]) == isUpgrade, "\(line)")
        // The request line is not a header.
        #expect(!ConnectionGuard.isUpgrade(Array("GET /upgrade:websocket HTTP/1.1\r\n\r\n".utf8)[...]))
    }
}
