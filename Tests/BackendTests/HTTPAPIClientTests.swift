import Backend
import BackendTesting
import HTTPBackend
@_spi(Transport) import VMHostEventLoop
import Foundation
import VMHostRuntime
import Testing
@_spi(Transport) import VMHostWire

/// The HTTP client against a real HTTP/1.1 server on loopback: what goes over the wire (paths,
/// bodies, headers), every kind of failure, the deadline, and cancellation closing the connection.
@Suite(.timeLimit(.minutes(1)))
@HostActor
struct HTTPAPIClientTests {
    let server: LoopbackServer
    let clock = ManualClock()
    let client: HTTPAPIClient

    init() throws {
        server = try LoopbackServer()
        client = HTTPAPIClient(baseURL: server.baseURL, clock: clock)
    }

    // MARK: What is sent

    @Test func everyEndpointSendsItsMethodPathQueryAndBody() async throws {
        _ = try await client.products(page: 2, pageSize: 15)
        _ = try await client.login(username: "13800138000", password: "123456")
        try await client.sendSMSCode(phone: "13912345678")
        _ = try await client.loginWithCode(phone: "13912345678", code: "123456")
        _ = try await client.groups(menuUid: "m1")
        _ = try await client.createGroup(menuUid: "m1", name: "新品")
        _ = try await client.renameGroup(menuUid: "m1", groupId: "g5", name: "新品2")
        try await client.deleteGroup(menuUid: "m1", groupId: "g5")

        let sent = server.requests.map { "\($0.method) \($0.path)" }
        #expect(sent == [
            "GET /products", "POST /auth/login", "POST /auth/sms-code", "POST /auth/login-code",
            "GET /menus/m1/groups", "POST /menus/m1/groups", "PUT /menus/m1/groups/g5", "DELETE /menus/m1/groups/g5",
        ])
        let requests = server.requests
        #expect(requests[0].query == ["page": "2", "pageSize": "15"])
        #expect(requests[1].json == ["username": "13800138000", "password": "123456"])
        #expect(requests[2].json == ["phone": "13912345678"])
        #expect(requests[3].json == ["phone": "13912345678", "code": "123456"])
        #expect(requests[5].json == ["name": "新品"])
        #expect(requests[6].json == ["name": "新品2"])
        for request in requests where request.method == "GET" || request.method == "DELETE" {
            #expect(request.body.isEmpty)
        }
        for request in requests where request.method == "POST" || request.method == "PUT" {
            #expect(request.header("Content-Type") == "application/json")
        }
    }

    @Test func headersCarryTheDeviceIdAndAcceptAndTheTokenAfterLogin() async throws {
        _ = try await client.products(page: 1, pageSize: 20)
        let other = HTTPAPIClient(baseURL: server.baseURL, clock: clock)
        _ = try await other.groups(menuUid: "m1")
        _ = try await client.login(username: "13800138000", password: "123456")
        _ = try await client.groups(menuUid: "m1")

        let requests = server.requests
        #expect(requests.count == 4)
        // One device id for the whole process, whichever client sends.
        #expect(Set(requests.compactMap { $0.header("X-Device-Id") }) == [HTTPAPIClient.processDeviceID])
        #expect(UUID(uuidString: HTTPAPIClient.processDeviceID) != nil)
        #expect(requests.allSatisfy { $0.header("Accept") == "application/json" })
        #expect(requests[0].header("Authorization") == nil)
        #expect(requests[1].header("Authorization") == nil)
        #expect(requests[2].header("Authorization") == nil)
        #expect(requests[3].header("Authorization") == "Bearer demo-token-1")
        #expect(client.token == "demo-token-1")
        #expect(other.token == nil)
    }

    @Test func loginWithCodeKeepsItsTokenToo() async throws {
        _ = try await client.loginWithCode(phone: "13912345678", code: "123456")
        _ = try await client.products(page: 1, pageSize: 20)
        #expect(server.requests.last?.header("Authorization") == "Bearer demo-token-1")
        client.signOut()
        _ = try await client.products(page: 1, pageSize: 20)
        #expect(server.requests.last?.header("Authorization") == nil)
    }

    @Test func aFailedLoginKeepsThePreviousToken() async throws {
        _ = try await client.login(username: "13800138000", password: "123456")
        _ = await backendError { _ = try await client.login(username: "13800138000", password: "bad") }
        #expect(client.token == "demo-token-1")
    }

    @Test func aBaseURLPathPrefixIsKept() async throws {
        let prefixed = HTTPAPIClient(baseURL: BackendURL("\(server.baseURL)/api/")!, clock: clock)
        _ = await backendError { _ = try await prefixed.products(page: 1, pageSize: 20) }
        #expect(server.requests.last?.path == "/api/products")
    }

    @Test func pathSegmentsArePercentEncoded() async throws {
        _ = await backendError { try await client.deleteGroup(menuUid: "m1", groupId: "a/b c?") }
        #expect(server.requests.last?.path == "/menus/m1/groups/a%2Fb%20c%3F")
    }

    @Test func theDeviceIdIsAlsoSentAsUuid() async throws {
        _ = try await client.products(page: 1, pageSize: 20)
        _ = try await client.login(username: "13800138000", password: "123456")
        for request in server.requests {
            #expect(request.header("uuid") == HTTPAPIClient.processDeviceID)
            #expect(request.header("X-Device-Id") == HTTPAPIClient.processDeviceID)
        }
    }

    /// A token holding a line break would cut its header in two and add one of the server's choosing:
    /// it is never sent, and the call fails as `network`.
    @Test func aTokenWithALineBreakIsNeverSent() async throws {
        for token in ["t\r\nX-Injected: 1", "t\nX-Injected: 1", "t\u{0}x"] {
            client.token = token
            let error = await backendError { _ = try await client.products(page: 1, pageSize: 20) }
            #expect(error?.kind == .network)
            #expect(error?.detail.contains("X-Injected") == false)
        }
        #expect(server.requests.isEmpty)
        #expect(clock.pendingCount == 0)
    }

    // MARK: Redirects and the size limit

    /// A redirect to another origin is not followed: the other server sees nothing (so never the
    /// token) and the call fails as `server` with the redirect's status.
    @Test(arguments: [301, 302, 303, 307, 308])
    func aRedirectToAnotherOriginIsNeverFollowed(status: Int) async throws {
        let other = try LoopbackServer()
        defer { other.stop() }
        _ = try await client.login(username: "13800138000", password: "123456")
        server.setFault(.redirect(status: status, location: "\(other.baseURL)/products?page=1&pageSize=20"), forPath: "/products")
        let error = await backendError { _ = try await client.products(page: 1, pageSize: 20) }
        #expect(error == .server(status: status))
        #expect(other.requests.isEmpty)
        #expect(server.requests.filter { $0.path == "/products" }.count == 1)
        #expect(client.token == "demo-token-1")
        #expect(clock.pendingCount == 0)
    }

    @Test func aRedirectWithinTheOriginIsNotFollowedEither() async throws {
        server.setFault(.redirect(status: 302, location: "/menus/m1/groups"), forPath: "/products")
        let error = await backendError { _ = try await client.products(page: 1, pageSize: 20) }
        #expect(error == .server(status: 302))
        #expect(server.requests.map(\.path) == ["/products"])
    }

    @Test func aBodyAtTheLimitIsRead() async throws {
        let body = Array(#"{"success":true,"code":"0","message":"ok","data":null}"#.utf8)
        server.setFault(.raw(status: 200, body: body), forPath: "/auth/sms-code")
        let exact = HTTPAPIClient(baseURL: server.baseURL, clock: clock, maxResponseBytes: body.count)
        try await exact.sendSMSCode(phone: "13912345678")
        let under = HTTPAPIClient(baseURL: server.baseURL, clock: clock, maxResponseBytes: body.count - 1)
        #expect(await backendError { try await under.sendSMSCode(phone: "13912345678") } == .decode(
            "the response body is larger than the limit of \(body.count - 1) bytes"))
    }

    @Test func aBodyAnnouncedOverTheLimitFailsAsDecode() async throws {
        let limited = HTTPAPIClient(baseURL: server.baseURL, clock: clock, maxResponseBytes: 1024)
        server.setFault(.raw(status: 200, body: [UInt8](repeating: UInt8(ascii: " "), count: 1025)), forPath: "/products")
        let error = await backendError { _ = try await limited.products(page: 1, pageSize: 20) }
        #expect(error == .decode("the response body is larger than the limit of 1024 bytes"))
        #expect(clock.pendingCount == 0)
    }

    /// A body without a length is read up to the limit and no further: the connection is closed.
    @Test func aBodyGrowingOverTheLimitFailsAsDecodeAndItsConnectionIsClosed() async throws {
        let limited = HTTPAPIClient(baseURL: server.baseURL, clock: clock, maxResponseBytes: 256 * 1024)
        server.setFault(.endlessBody, forPath: "/products")
        let error = await backendError { _ = try await limited.products(page: 1, pageSize: 20) }
        #expect(error == .decode("the response body is larger than the limit of 262144 bytes"))
        try await server.connectionClosedByClient(path: "/products")
        #expect(clock.pendingCount == 0)
    }

    @Test func theDefaultLimitIsEightMebibytes() {
        #expect(HTTPAPIClient.defaultMaxResponseBytes == 8 * 1024 * 1024)
        #expect(client.maxResponseBytes == HTTPAPIClient.defaultMaxResponseBytes)
    }

    // MARK: Failures, of every endpoint

    /// A way for a call to fail, and the ``BackendError`` it must come back as.
    enum Fault: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// Nothing listens on the port.
        case refused
        /// The server resets the connection (RST) instead of answering.
        case reset
        /// The server closes the connection without answering.
        case dropped
        /// The body ends before its `Content-Length`.
        case truncatedBody
        /// A complete body that is not JSON.
        case malformed
        case status404
        case status500
        case status503
        /// `200` with `success: false`.
        case business

        var testDescription: String { rawValue }

        /// What the loopback server does; nil when the client talks to a port nothing listens on.
        var loopback: LoopbackFault? {
            switch self {
            case .refused: nil
            case .reset: .resetConnection
            case .dropped: .dropConnection
            case .truncatedBody: .truncatedBody
            case .malformed: .malformed
            case .status404: .status(404)
            case .status500: .status(500)
            case .status503: .status(503)
            case .business: .business(code: "1009", message: "系统繁忙")
            }
        }

        var kind: BackendError.Kind {
            switch self {
            case .refused, .reset, .dropped, .truncatedBody: .network
            case .malformed: .decode
            case .status404, .status500, .status503: .server
            case .business: .business
            }
        }

        /// The whole error where it is fixed by the contract; transport and parser messages vary.
        var exactError: BackendError? {
            switch self {
            case .refused: .network("could not connect to the server")
            case .status404: .server(status: 404)
            case .status500: .server(status: 500)
            case .status503: .server(status: 503)
            case .business: .business(code: "1009", message: "系统繁忙")
            case .reset, .dropped, .truncatedBody, .malformed: nil
            }
        }
    }

    /// The path the loopback server sees for `endpoint`'s call in ``call(_:on:)`` (faults are set per path).
    static func path(_ endpoint: BackendEndpoint) -> String {
        switch endpoint {
        case .products: "/products"
        case .authLogin: "/auth/login"
        case .authSMSCode: "/auth/sms-code"
        case .authLoginCode: "/auth/login-code"
        case .groupsList, .groupsCreate: "/menus/m1/groups"
        case .groupsRename, .groupsDelete: "/menus/m1/groups/g1"
        }
    }

    /// Calls `endpoint` once, with arguments the demo contract accepts.
    static func call(_ endpoint: BackendEndpoint, on client: HTTPAPIClient) async throws {
        switch endpoint {
        case .products: _ = try await client.products(page: 1, pageSize: 20)
        case .authLogin: _ = try await client.login(username: "13800138000", password: "123456")
        case .authSMSCode: try await client.sendSMSCode(phone: "13912345678")
        case .authLoginCode: _ = try await client.loginWithCode(phone: "13912345678", code: "123456")
        case .groupsList: _ = try await client.groups(menuUid: "m1")
        case .groupsCreate: _ = try await client.createGroup(menuUid: "m1", name: "新品")
        case .groupsRename: _ = try await client.renameGroup(menuUid: "m1", groupId: "g1", name: "新品2")
        case .groupsDelete: try await client.deleteGroup(menuUid: "m1", groupId: "g1")
        }
    }

    /// Every endpoint, every way of failing: the right kind (and code and message where the contract
    /// fixes them), no token kept from a failed login, no deadline left behind; and the same call
    /// succeeds once the server answers again.
    @Test(arguments: BackendEndpoint.allCases, Fault.allCases)
    func everyFailureOfEveryEndpointHasItsKind(endpoint: BackendEndpoint, fault: Fault) async throws {
        let path = Self.path(endpoint)
        let failing = fault == .refused ? HTTPAPIClient(baseURL: try LoopbackServer.unusedURL(), clock: clock) : client
        server.setFault(fault.loopback, forPath: path)
        let error = try #require(await backendError { try await Self.call(endpoint, on: failing) })
        #expect(error.kind == fault.kind, "\(error)")
        if let exact = fault.exactError { #expect(error == exact) } else { #expect(error.code == .null) }
        #expect(failing.token == nil)
        #expect(clock.pendingCount == 0)
        #expect(server.requests.filter { $0.path == path }.count == (fault == .refused ? 0 : 1))

        server.setFault(nil, forPath: path)
        try await Self.call(endpoint, on: client)
        #expect(client.token == (endpoint == .authLogin || endpoint == .authLoginCode ? "demo-token-1" : nil))
    }

    @Test func aBodyOfTheWrongShapeIsDecodeNamingTheMember() async throws {
        let body = #"{"success":true,"code":"0","message":"ok","data":[{"id":1}],"page":{"index":1,"size":20,"total":1}}"#
        server.setFault(.raw(status: 200, body: Array(body.utf8)), forPath: "/products")
        let error = await backendError { _ = try await client.products(page: 1, pageSize: 20) }
        #expect(error?.kind == .decode)
        #expect(error?.detail.hasPrefix("data[0]: product.id") == true)

        server.setFault(.raw(status: 200, body: Array(#"{"success":true,"data":[]}"#.utf8)), forPath: "/products")
        #expect(await backendError { _ = try await client.products(page: 1, pageSize: 20) } == .decode("envelope.page is missing"))
    }

    @Test(arguments: BackendEndpoint.allCases)
    func aServerThatNeverAnswersTimesOutOnTheHostClockAndTheConnectionIsClosed(endpoint: BackendEndpoint) async throws {
        let path = Self.path(endpoint)
        server.setFault(.neverAnswer, forPath: path)
        var error: BackendError?
        let task = EventLoop.startTask { error = await backendError { try await Self.call(endpoint, on: client) } }
        _ = try await server.request(path: path)
        await clock.advance(by: .milliseconds(14999))
        #expect(error == nil)
        await clock.advance(by: .milliseconds(1))
        await task.value
        #expect(error == .timeout())
        try await server.connectionClosedByClient(path: path)
        #expect(clock.pendingCount == 0)
        #expect(client.token == nil)

        server.setFault(nil, forPath: path)
        try await Self.call(endpoint, on: client)
    }

    // MARK: Cancellation

    @Test func cancellingACallClosesItsConnectionAndAppliesNothing() async throws {
        server.setFault(.neverAnswer, forPath: "/auth/login")
        let task = EventLoop.startTask { try await client.login(username: "13800138000", password: "123456") }
        _ = try await server.request(path: "/auth/login")
        task.cancel()
        #expect(isCancellation(await task.result))
        try await server.connectionClosedByClient(path: "/auth/login")
        #expect(client.token == nil)
        // The deadline went with the call.
        #expect(clock.pendingCount == 0)
    }

    @Test func aCallFromAnAlreadyCancelledTaskSendsNothing() async throws {
        let task = EventLoop.startTask {
            withUnsafeCurrentTask { $0?.cancel() }
            return try await client.products(page: 1, pageSize: 20)
        }
        #expect(isCancellation(await task.result))
        // A later call is the first the server sees.
        _ = try await client.groups(menuUid: "m1")
        #expect(server.requests.map(\.path) == ["/menus/m1/groups"])
    }
}
