import Foundation
@_spi(Transport) import VMHostEventLoop
import VMHostRuntime
import Testing
@testable import VMHostHTTP

struct Note: Codable, Equatable, Sendable {
    var id: String
    var text: String
    var pinned: Bool?
}

/// An app's own error kinds, which the framework does not know.
enum AppFailure: Error, Equatable {
    case notFound
    case refused(code: String)
    case offline(String)
    case slow
    case unreadable
}

/// The app's mapping: a status, an envelope `{"ok": false, "code": …}`, and transport failures.
struct AppFailures: HTTPFailureMapping {
    func check(_ response: HTTPResponse) throws {
        if response.status == 404 { throw AppFailure.notFound }
        if let json = try? response.json(), json["ok"] == .bool(false) {
            throw AppFailure.refused(code: json["code"]?.stringValue ?? "")
        }
    }

    func error(for failure: HTTPError) -> any Error {
        switch failure.kind {
        case .timedOut: AppFailure.slow
        case .undecodable: AppFailure.unreadable
        default: AppFailure.offline(failure.detail)
        }
    }
}

/// The framework's HTTP client against a real server on loopback, on a manual clock.
@Suite(.timeLimit(.minutes(1)))
@HostActor
struct HTTPClientTests {
    let clock = ManualClock()

    func client(_ server: TestServer, prefix: String = "", failures: any HTTPFailureMapping = DefaultHTTPFailures(),
                redirects: HTTPRedirectPolicy = .none, maxResponseBytes: Int = 1024) -> HTTPClient {
        HTTPClient(
            baseURL: HTTPURL(server.base + prefix)!, clock: clock, timeout: .seconds(10), maxResponseBytes: maxResponseBytes,
            redirects: redirects, failures: failures)
    }

    @Test func aJSONBodyGoesOutAndADecodableComesBack() async throws {
        let server = try TestServer { request in
            .respond(201, headers: ["Content-Type: application/json"], body: Array(#"{"id":"n1","text":"hi","extra":[1]}"#.utf8))
        }
        let api = client(server, prefix: "/api")
        api.headers["Authorization"] = "Bearer t1"
        let note: Note = try await api.send(.post, "/notes", json: Note(id: "", text: "hi ✓", pinned: true), headers: ["X-Trace": "7"])
        #expect(note == Note(id: "n1", text: "hi", pinned: nil))
        let request = try #require(server.requests.first)
        #expect(request.method == "POST")
        #expect(request.path == "/api/notes")
        #expect(request.headers["content-type"] == "application/json")
        #expect(request.headers["authorization"] == "Bearer t1")
        #expect(request.headers["x-trace"] == "7")
        #expect(String(decoding: request.body, as: UTF8.self) == #"{"id":"","text":"hi ✓","pinned":true}"#)
        #expect(clock.pendingCount == 0)
    }

    @Test func queryItemsArePercentEncodedAndResponseHeadersRead() async throws {
        let server = try TestServer { _ in .respond(200, headers: ["X-Total: 42"], body: Array("[]".utf8)) }
        let response = try await client(server).send(HTTPRequest(.get, "/search", query: [("q", "a b&c/é"), ("page", "2")]))
        #expect(response.headers["x-total"] == "42")
        #expect(try response.decode([Note].self) == [])
        #expect(server.requests.first?.query == ["q": "a b&c/é", "page": "2"])
    }

    @Test func theAppsMappingTurnsStatusesEnvelopesAndBadBodiesIntoItsErrors() async throws {
        let server = try TestServer { request in
            switch request.path {
            case "/missing": .respond(404)
            case "/refused": .respond(200, body: Array(#"{"ok":false,"code":"E42"}"#.utf8))
            default: .respond(200, body: Array(#"{"id":7}"#.utf8))
            }
        }
        let api = client(server, failures: AppFailures())
        await #expect(throws: AppFailure.notFound) { let _: Note = try await api.get("/missing") }
        await #expect(throws: AppFailure.refused(code: "E42")) { let _: Note = try await api.get("/refused") }
        await #expect(throws: AppFailure.unreadable) { let _: Note = try await api.get("/shape") }
        // The default mapping: a status outside 2xx is HTTPError .status, a bad shape names its member.
        let plain = client(server)
        let status = await #expect(throws: HTTPError.self) { _ = try await plain.send(HTTPRequest(.get, "/missing")) }
        #expect(status?.kind == .status(404))
        let shape = await #expect(throws: HTTPError.self) { let _: Note = try await plain.get("/shape") }
        #expect(shape?.kind == .undecodable)
        #expect(shape?.detail.contains("$.id: expected a string, got a number") == true)
    }

    @Test func theDeadlineRunsOnTheHostClockAndClosesTheConnection() async throws {
        let server = try TestServer { _ in .neverAnswer }
        let api = client(server, failures: AppFailures())
        var outcome: (any Error)?
        var finished = false
        let task = EventLoop.startTask {
            do { _ = try await api.send(HTTPRequest(.get, "/slow")) } catch { outcome = error }
            finished = true
        }
        _ = try await server.requests(count: 1)
        await clock.advance(by: .milliseconds(9999))
        #expect(!finished)
        await clock.advance(by: .milliseconds(1))
        await task.value
        #expect(outcome as? AppFailure == .slow)
        try await server.closedByClient(path: "/slow")
        #expect(clock.pendingCount == 0)
    }

    @Test func aRequestsOwnTimeoutWins() async throws {
        let server = try TestServer { _ in .neverAnswer }
        let api = client(server)
        var failure: HTTPError?
        let task = EventLoop.startTask {
            do { _ = try await api.send(HTTPRequest(.get, "/slow", timeout: .seconds(1))) } catch { failure = error as? HTTPError }
        }
        _ = try await server.requests(count: 1)
        await clock.advance(by: .seconds(1))
        await task.value
        #expect(failure?.kind == .timedOut)
    }

    @Test func cancellingTheCallingTaskAbortsTheTransfer() async throws {
        let server = try TestServer { _ in .neverAnswer }
        let api = client(server)
        let task = EventLoop.startTask { try await api.send(HTTPRequest(.get, "/wait")) }
        _ = try await server.requests(count: 1)
        task.cancel()
        guard case .failure(let error) = await task.result else {
            Issue.record("a cancelled call succeeded")
            return
        }
        #expect(error is CancellationError)
        try await server.closedByClient(path: "/wait")
        #expect(clock.pendingCount == 0)
    }

    @Test func aBodyOverTheLimitAbortsTheTransfer() async throws {
        let server = try TestServer { _ in .endlessBody }
        let error = await #expect(throws: HTTPError.self) { _ = try await client(server).send(HTTPRequest(.get, "/big")) }
        #expect(error == HTTPError(.responseTooLarge, "the response body is larger than the limit of 1024 bytes"))
        try await server.closedByClient(path: "/big")
    }

    @Test func aHeadOverItsBoundFailsApartFromTheBodysLimit() async throws {
        let long = String(repeating: "a", count: 40_000)
        let server = try TestServer { _ in .respond(200, headers: ["X-One: \(long)", "X-Two: \(long)"], body: Array("{}".utf8)) }
        let error = await #expect(throws: HTTPError.self) {
            _ = try await client(server, maxResponseBytes: 1 << 20).send(HTTPRequest(.get, "/head"))
        }
        #expect(error == HTTPError(.responseTooLarge, "the response head is larger than the limit of 65536 bytes"))
    }

    @Test func aRedirectIsNotFollowedByDefault() async throws {
        let server = try TestServer { _ in .respond(302, headers: ["Location: /elsewhere"]) }
        let response = try await client(server, failures: AppFailures()).send(HTTPRequest(.get, "/old"))
        #expect(response.status == 302)
        #expect(server.requests.map(\.path) == ["/old"])
    }

    @Test func aFollowedRedirectKeepsCredentialsWithinTheOrigin() async throws {
        let other = try TestServer { _ in .respond(200, body: Array("{}".utf8)) }
        let otherBase = other.base
        let server = try TestServer { request in
            switch request.path {
            case "/old": .respond(307, headers: ["Location: /new"])
            case "/new": .respond(302, headers: ["Location: \(otherBase)/landing"])
            default: .respond(500)
            }
        }
        let api = client(server, redirects: .follow(max: 3, credentialHeaders: ["X-Api-Key"]))
        api.headers["Authorization"] = "Bearer secret"
        api.headers["X-Api-Key"] = "k"
        api.headers["Accept"] = "application/json"
        let response = try await api.send(HTTPRequest(.post, "/old", headers: ["Cookie": "s=1"], body: Array("x".utf8)))
        #expect(response.status == 200)
        let same = try await server.requests(count: 2)
        #expect(same.map(\.method) == ["POST", "POST"])
        #expect(same[1].headers["authorization"] == "Bearer secret")
        #expect(same[1].body == Array("x".utf8))
        let landing = try #require(other.requests.first)
        #expect(landing.path == "/landing")
        #expect(landing.method == "GET")
        #expect(landing.headers["authorization"] == nil)
        #expect(landing.headers["cookie"] == nil)
        #expect(landing.headers["x-api-key"] == nil)
        #expect(landing.headers["accept"] == "application/json")
    }

    @Test func tooManyRedirectsFail() async throws {
        let server = try TestServer { _ in .respond(301, headers: ["Location: /loop"]) }
        let error = await #expect(throws: HTTPError.self) {
            _ = try await client(server, redirects: .follow(max: 2)).send(HTTPRequest(.get, "/loop"))
        }
        #expect(error?.kind == .invalidRequest)
        #expect(server.requests.count == 3)
    }

    @Test func theClientsHeadersGoToItsOriginOnly() async throws {
        let other = try TestServer { _ in .respond(200) }
        let server = try TestServer { _ in .respond(200) }
        let api = client(server)
        api.headers["Authorization"] = "Bearer secret"
        _ = try await api.send(HTTPRequest(.get, other.base + "/x"))
        #expect(other.requests.first?.headers["authorization"] == nil)
        #expect(server.requests.isEmpty)
    }

    @Test func aHeaderWithALineBreakIsNeverSent() async throws {
        let server = try TestServer { _ in .respond(200) }
        let api = client(server)
        api.headers["Authorization"] = "Bearer x\r\nX-Injected: 1"
        let error = await #expect(throws: HTTPError.self) { _ = try await api.send(HTTPRequest(.get, "/x")) }
        #expect(error?.kind == .invalidRequest)
        #expect(error?.detail.contains("X-Injected") == false)
        #expect(server.requests.isEmpty)
        #expect(clock.pendingCount == 0)
    }

    @Test func aRefusedConnectionIsCannotConnect() async throws {
        let server = try TestServer { _ in .respond(200) }
        let base = server.base
        server.stop()
        let api = HTTPClient(baseURL: HTTPURL(base)!, clock: clock)
        let error = await #expect(throws: HTTPError.self) { _ = try await api.send(HTTPRequest(.get, "/x")) }
        #expect(error?.kind == .cannotConnect)
    }
}
