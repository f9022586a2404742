import Backend
import BackendTesting
import HTTPBackend
import Testing
@_spi(Transport) import VMHostEventLoop
import VMHostRuntime

/// Several sessions over one HTTP client (`vmhost-web`: one ``AppSession`` per connection, one
/// client and connection pool for all): each call carries its own session's token, whatever the
/// other sessions did before or do at the same time.
@Suite(.timeLimit(.minutes(1)))
@HostActor
struct SharedClientSessionsTests {
    let server: LoopbackServer
    let clock = ManualClock()
    let client: HTTPAPIClient
    let first = AppSession()
    let second = AppSession()
    let firstAPI: AuthenticatedAPI
    let secondAPI: AuthenticatedAPI

    init() throws {
        server = try LoopbackServer()
        client = HTTPAPIClient(baseURL: server.baseURL, clock: clock)
        firstAPI = AuthenticatedAPI(client, session: first)
        secondAPI = AuthenticatedAPI(client, session: second)
    }

    /// The `Authorization` header of the request for products page `page` (each test asks for each
    /// page once, from one session).
    func authorization(page: Int) -> String?? {
        server.requests.first { $0.path == "/products" && $0.query["page"] == String(page) }.map { $0.header("Authorization") }
    }

    @Test func aLoginInOneSessionIsNotSentByAnother() async throws {
        _ = try await firstAPI.login(username: "13800138000", password: "123456")
        _ = try await secondAPI.products(page: 1, pageSize: 20)
        _ = try await firstAPI.products(page: 2, pageSize: 20)

        #expect(first.isLoggedIn && !second.isLoggedIn)
        #expect(firstAPI.token == "demo-token-1")
        #expect(secondAPI.token == nil)
        #expect(authorization(page: 1) == .some(nil))
        #expect(authorization(page: 2) == "Bearer demo-token-1")
    }

    @Test func callsInFlightTogetherEachCarryTheirSessionsToken() async throws {
        _ = try await firstAPI.login(username: "13800138000", password: "123456")
        _ = try await secondAPI.login(username: "13800138000", password: "123456")
        async let a = firstAPI.products(page: 1, pageSize: 20)
        async let b = secondAPI.products(page: 2, pageSize: 20)
        async let c = firstAPI.products(page: 3, pageSize: 20)
        _ = try await (a, b, c)

        #expect(authorization(page: 1) == "Bearer demo-token-1")
        #expect(authorization(page: 2) == "Bearer demo-token-2")
        #expect(authorization(page: 3) == "Bearer demo-token-1")
    }
}
