import Foundation
import Testing
@_spi(Transport) import VMHost
@_spi(Transport) import VMHostEventLoop
import VMHostRuntime
import VMHostWire
@testable import VMHostHTTP

/// A note as the test server stores it.
struct NoteDraft: Codable, Sendable {
    var text: String
    var password: String
    var pin: String
}

struct Created: Codable, Sendable {
    var id: String
    var token: String
}

/// A small kind of an app that calls its server: `load` reads the notes, `add` posts one.
@HostActor
final class NotesViewModel: ViewModel {
    static let kind = "Notes"

    @Output var notes: [String] = []
    let load = Command(.latest, returning: Int.self) { vm in
        let notes: [Note] = try await vm.api.get("/notes", query: [("page", "1")])
        vm.notes = notes.map(\.text)
        return notes.count
    }
    let add = Command(.ignore, of: JSONObject.self, returning: String.self) { vm, value in
        let draft = NoteDraft(
            text: value["text"]?.stringValue ?? "", password: value["password"]?.stringValue ?? "", pin: value["pin"]?.stringValue ?? "")
        let created: Created = try await vm.api.send(.post, "/notes", json: draft, headers: ["X-Api-Key": "key-777"])
        vm.notes.append(draft.text)
        return created.id
    }

    let api: HTTPClient

    init(api: HTTPClient) { self.api = api }
}

/// The app's server entry: one client of `base`, made with the kinds (so that the server's
/// recording or replay carries its calls). `Authorization` is masked by default, `X-Api-Key` is
/// the app's own secret header, `pin` its own secret member (and `password`, which the UI session's
/// lines mask by that list; the HTTP lines mask it as credential-like, as they mask `token`).
func notesServer(base: String) -> Server {
    Server(
        ServerConfiguration(
            name: "notes", version: "1.0.0", secretMembers: ["pin", "password"],
            secretHeaders: HTTPSecrets.defaultHeaders.union(["X-Api-Key"])
        ) { environment in
            let api = HTTPClient(baseURL: HTTPURL(base + "/api")!, clock: environment.clock, timeout: .seconds(10))
            api.headers["Authorization"] = "Bearer sekrit-token-1"
            return ServedApp(kinds: [ViewModelFactory { (_: NoArgs) in NotesViewModel(api: api) }])
        })
}

/// An embedded host of `server` whose messages are read in order.
final class Session: Sendable {
    let host: EmbeddedHost
    private let stream: AsyncStream<JSON>
    private let input: AsyncStream<JSON>.Continuation

    init(_ server: Server, arguments: [String]) throws {
        let (stream, input) = AsyncStream<JSON>.makeStream()
        (self.stream, self.input) = (stream, input)
        host = try EmbeddedHost(server, arguments: arguments, onMessage: { body in input.yield(try! JSON.parse(body)) })
    }

    /// Sends request `id` and returns the messages up to its response (the suite's time limit
    /// bounds the wait).
    func call(_ id: Int, _ method: String, _ params: JSON) async throws -> [JSON] {
        let message: JSON = ["jsonrpc": "2.0", "id": .int(Int64(id)), "method": .string(method), "params": params]
        try host.send(message: message.description)
        var messages: [JSON] = []
        for await message in stream {
            messages.append(message)
            if message["id"] == .int(Int64(id)) { return messages }
        }
        Issue.record("the host ended before answering \(method)")
        return messages
    }

    func close() async -> Int32 {
        let status = await host.close()
        input.finish()
        return status
    }
}

@Suite(.timeLimit(.minutes(1)))
struct HTTPReplayTests {
    /// The session both runs play: open the screen, load, add a note with secrets, read.
    func play(_ session: Session) async throws -> [JSON] {
        var messages: [JSON] = []
        messages += try await session.call(1, "vm.create", ["kind": "Notes", "id": "n"])
        messages += try await session.call(2, "vm.send", ["vm": "n", "input": "load"])
        messages += try await session.call(
            3, "vm.send", ["vm": "n", "input": "add", "value": ["text": "buy milk", "password": "hunter22", "pin": "pin-4321"]])
        messages += try await session.call(4, "vm.get", ["vm": "n", "outputs": ["notes"]])
        return messages
    }

    func temporaryPath(_ name: String) -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(UUID().uuidString).ndjson").path
    }

    @Test func aRecordedSessionReplaysWithTheServerGoneAndSecretsMasked() async throws {
        let server = try TestServer { request in
            switch (request.method, request.path) {
            case ("GET", "/api/notes"):
                .respond(200, headers: ["Content-Type: application/json"], body: Array(#"[{"id":"a","text":"first"}]"#.utf8))
            case ("POST", "/api/notes"):
                .respond(201, headers: ["Content-Type: application/json", "Set-Cookie: sid=cookie-55"],
                         body: Array(#"{"id":"n2","token":"tok-secret-9"}"#.utf8))
            default: .respond(404)
            }
        }
        let path = temporaryPath("notes")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let app = notesServer(base: server.base)

        let recording = try Session(app, arguments: ["--clock", "manual", "--record", path])
        let recorded = try await play(recording)
        #expect(await recording.close() == 0)
        #expect(server.requests.count == 2)
        server.stop()

        let text = try String(contentsOfFile: path, encoding: .utf8)
        let lines = try RecordingSteps.values(of: Array(text.utf8))
        let http = lines.compactMap { $0["http"] }
        #expect(http.count == 2)
        #expect(http.first?["method"] == "GET")
        #expect(http.first?["path"] == "/api/notes?page=1")
        #expect(lines.first?["offlineArgs"] == ["--clock", "manual", "--http-replay", "$transcript"])
        for secret in ["sekrit-token-1", "key-777", "hunter22", "pin-4321", "tok-secret-9", "cookie-55"] {
            #expect(!text.contains(secret), "\(secret) is in the recording")
        }
        let post = try #require(http.last)
        #expect(post["body"]?["text"] == "buy milk")
        #expect(post["body"]?["password"]?.stringValue?.hasPrefix("$secret:") == true)
        #expect(post["body"]?["pin"]?.stringValue?.hasPrefix("$secret:") == true)
        let headers = post["headers"]?.arrayValue ?? []
        #expect(headers.contains { $0.arrayValue?.first == "X-Api-Key" && $0.arrayValue?.last?.stringValue?.hasPrefix("$secret:") == true })
        #expect(headers.contains { $0.arrayValue?.first == "Authorization" && $0.arrayValue?.last?.stringValue?.hasPrefix("$secret:") == true })
        #expect(post["response"]?["body"]?["token"]?.stringValue?.hasPrefix("$secret:") == true)

        // The server is gone: the same session answers the same from the recording.
        let replay = try Session(app, arguments: ["--clock", "manual", "--http-replay", path])
        let replayed = try await play(replay)
        #expect(await replay.close() == 0)
        #expect(replayed == recorded)
        #expect(recorded.contains { $0["result"]?["value"] == "n2" })
    }

    @Test func withoutTheServerOrTheRecordingTheCallFails() async throws {
        let server = try TestServer { _ in .respond(404) }
        let base = server.base
        server.stop()
        let session = try Session(notesServer(base: base), arguments: ["--clock", "manual"])
        let messages = try await session.call(2, "vm.send", ["vm": "n", "input": "load"])
        _ = await session.close()
        #expect(messages.last?["error"] != nil)
    }

    /// The clients an app made, per connection.
    @HostActor final class Clients { var made: [HTTPClient] = [] }

    @Test @HostActor func eachConnectionsClientsAreRecordedInThatConnectionsRecording() async throws {
        let server = try TestServer { _ in .respond(200, headers: ["Content-Type: application/json"], body: Array("[]".utf8)) }
        let clients = Clients()
        let app = Server(ServerConfiguration(name: "notes", version: "1.0.0") { environment in
            ServedApp(kinds: [], connectionKinds: { _ in
                clients.made.append(HTTPClient(baseURL: HTTPURL(server.base)!, clock: environment.clock))
                return []
            })
        })
        let served = try app.prepareApp(arguments: ["--clock", "manual"])
        let path = temporaryPath("connection")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let recorder = SessionRecorder(fd: try SessionRecorder.create(path: path), arguments: ["--clock", "manual"], manualClock: true)
        _ = served.connectionHost(recorder: recorder)
        _ = served.connectionHost()  // a connection not recorded
        let _: [Note] = try await clients.made[0].get("/recorded")
        let _: [Note] = try await clients.made[1].get("/elsewhere")
        recorder.finish()
        let lines = try RecordingSteps.values(of: Array(String(contentsOfFile: path, encoding: .utf8).utf8))
        #expect(lines.compactMap { $0["http"]?["path"] } == ["/recorded"])
        #expect(lines.first?["offlineArgs"] == ["--clock", "manual", "--http-replay", "$transcript"])
        #expect(server.requests.map(\.path) == ["/recorded", "/elsewhere"])
    }

    // MARK: The replay's matching

    /// A client answering from `lines` (a recording's), with `ignoring`.
    @HostActor
    func replaying(_ lines: [String], ignoring: HTTPReplayIgnoring = HTTPReplayIgnoring()) throws -> HTTPClient {
        let replay = try HTTPReplay(recording: Array(lines.joined(separator: "\n").utf8), ignoring: ignoring, source: "session.ndjson")
        return HTTPClient(baseURL: HTTPURL("http://127.0.0.1:9/api")!, clock: ManualClock(), transport: replay)
    }

    static let recordedPost =
        #"{"http":{"method":"POST","path":"/api/notes?ts=100&page=1","headers":[["Content-Type","application/json"],["X-Request-Id","r-1"],["Authorization","$secret:Authorization:6"]],"body":{"text":"hi","meta":{"sentAt":100}},"ms":0,"response":{"status":201,"headers":[],"body":{"id":"n1","token":"$secret:token:3"}}}}"#

    @HostActor
    func post(_ api: HTTPClient, ts: String, requestID: String, sentAt: Int) async throws -> HTTPResponse {
        try await api.send(
            HTTPRequest(
                .post, "/notes", query: [("ts", ts), ("page", "1")],
                headers: ["Content-Type": "application/json", "X-Request-Id": requestID, "Authorization": "Bearer real"],
                body: Array(#"{"text":"hi","meta":{"sentAt":\#(sentAt)}}"#.utf8)))
    }

    @Test @HostActor func aMatchingRequestGetsTheRecordedAnswerOnce() async throws {
        let api = try replaying([#"{"args":[]}"#, Self.recordedPost])
        let response = try await post(api, ts: "100", requestID: "r-1", sentAt: 100)
        #expect(response.status == 201)
        #expect(try response.json()["id"] == "n1")
        // Used: the same request again was not recorded twice.
        let error = await #expect(throws: HTTPError.self) { try await post(api, ts: "100", requestID: "r-1", sentAt: 100) }
        #expect(error?.kind == .notRecorded)
        #expect(error?.detail.contains("1 recorded for this method and path, 1 used") == true)
    }

    @Test @HostActor func aRequestWithNoRecordedAnswerFailsNamingIt() async throws {
        let api = try replaying([Self.recordedPost])
        let error = await #expect(throws: HTTPError.self) {
            let _: [Note] = try await api.get("/threads/7", query: [("token", "do-not-show")])
        }
        #expect(error?.kind == .notRecorded)
        #expect(error?.detail.hasPrefix("GET /api/threads/7 was not recorded") == true)
        #expect(error?.detail.contains("session.ndjson") == true)
        #expect(error?.detail.contains("do-not-show") == false)
    }

    @Test @HostActor func whatChangesFromRunToRunIsLeftOutWhenTheTesterSaysSo() async throws {
        // Another request id, timestamp parameter and body member: not recorded as such.
        let strict = try replaying([Self.recordedPost])
        let error = await #expect(throws: HTTPError.self) { try await post(strict, ts: "200", requestID: "r-2", sentAt: 200) }
        #expect(error?.kind == .notRecorded)
        #expect(error?.detail.contains("the others with other query parameters, header fields or body") == true)

        let ignoring = try HTTPReplayIgnoring(list: "header:x-request-id,query:ts,body:sentAt")
        let tolerant = try replaying([Self.recordedPost], ignoring: ignoring)
        #expect(try await post(tolerant, ts: "200", requestID: "r-2", sentAt: 200).status == 201)
    }

    @Test @HostActor func eachIgnoreOptionLeavesOutItsOwnPartOnly() async throws {
        for (list, ts, requestID, sentAt) in [
            ("header:X-Request-Id", "100", "r-2", 100), ("query:ts", "200", "r-1", 100), ("body:sentAt", "100", "r-1", 200),
        ] {
            let api = try replaying([Self.recordedPost], ignoring: try HTTPReplayIgnoring(list: list))
            #expect(try await post(api, ts: ts, requestID: requestID, sentAt: sentAt).status == 201, "\(list)")
            let other = try replaying([Self.recordedPost], ignoring: try HTTPReplayIgnoring(list: list))
            await #expect(throws: HTTPError.self, "\(list) leaves out more") {
                try await post(other, ts: "300", requestID: "r-3", sentAt: 300)
            }
        }
    }

    @Test func aBadIgnoreListIsRefused() {
        #expect(throws: HTTPReplayError.self) { try HTTPReplayIgnoring(list: "cookie:sid") }
        #expect(throws: HTTPReplayError.self) { try HTTPReplayIgnoring(list: "header:") }
    }

    @Test @HostActor func aRecordedFailureOrCancellationIsReplayed() async throws {
        let clock = ManualClock()
        let replay = try HTTPReplay(
            recording: Array(
                """
                {"http":{"method":"GET","path":"/api/a","headers":[],"ms":0,"error":{"kind":"cannotConnect","detail":"could not connect to the server"}}}
                {"http":{"method":"GET","path":"/api/b","headers":[],"ms":0,"cancelled":true}}
                """.utf8),
            ignoring: HTTPReplayIgnoring(), source: "f")
        let api = HTTPClient(baseURL: HTTPURL("http://h/api")!, clock: clock, timeout: .seconds(5), transport: replay)
        let failed = await #expect(throws: HTTPError.self) { try await api.send(HTTPRequest(.get, "/a")) }
        #expect(failed?.kind == .cannotConnect)
        // Cancelled when it was recorded: no answer comes, until the deadline passes.
        var timedOut: HTTPError?
        let call = EventLoop.startTask {
            do { _ = try await api.send(HTTPRequest(.get, "/b")) } catch { timedOut = error as? HTTPError }
        }
        await clock.advance(by: .milliseconds(4999))
        #expect(timedOut == nil)
        await clock.advance(by: .milliseconds(1))
        await call.value
        #expect(timedOut?.kind == .timedOut)
    }

    @Test @HostActor func aRecordingThatCannotBeReadSaysWhere() {
        let error = #expect(throws: HTTPReplayError.self) {
            try HTTPReplay(recording: Array(#"{"send":{}}\#n{"http":{"method":"GET","path":"x","ms":0,"cancelled":true}}"#.utf8),
                           ignoring: HTTPReplayIgnoring(), source: "f.ndjson")
        }
        #expect(error?.message == "f.ndjson:2: http: path: expected a string starting with /")
    }

    @Test func bodiesThatAreNotJSONKeepTheirBytes() {
        let bytes: [UInt8] = [0, 1, 2, 250, 251, 252, 253]
        #expect(Base64.decode(Base64.encode(bytes)) == bytes)
        #expect(Base64.encode(Array("ab".utf8)) == "YWI=")
        #expect(RecordedHTTPExchange.Body(Array("a=b&c".utf8)) == .text("a=b&c"))
        #expect(RecordedHTTPExchange.Body(bytes) == .bytes(bytes))
    }

    @Test func aResponsesVerdictCodeIsKeptWhereARequestsCodeIsMasked() {
        let body: JSON = ["code": "1001", "errorCode": "E2", "data": ["smsCode": "9999", "token": "t-1"]]
        let mask: (String, String) -> String = { _, name in "$secret:\(name)" }
        let response = RecordedHTTPExchange.masking(body, secrets: HTTPSecrets(), inResponse: true, placeholder: mask)
        #expect(response == ["code": "1001", "errorCode": "E2", "data": ["smsCode": "$secret:smsCode", "token": "$secret:token"]])
        let request = RecordedHTTPExchange.masking(["phone": "138", "code": "4321"], secrets: HTTPSecrets(), placeholder: mask)
        #expect(request == ["phone": "138", "code": "$secret:code"])
    }

    @Test func credentialLikeQueryParametersAreMasked() {
        let masked = RecordedHTTPExchange.maskingQuery(
            "/feed?api_key=k-123&page=2", secrets: HTTPSecrets(), placeholder: { _, name in "$secret:\(name):2" })
        #expect(masked == "/feed?api_key=%24secret%3Aapi_key%3A2&page=2")
    }
}
