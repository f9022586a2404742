import Backend
import Testing
@_spi(Transport) import VMHostEventLoop
import VMHostRuntime
import VMHostTesting
@_spi(Transport) import VMHostWire
@testable import Login

/// A storage that keeps the session in memory and records what was asked of it; `failure`, when
/// set, fails every save and delete.
@HostActor
final class MemorySessionStorage: SessionStorage {
    var stored: StoredLogin?
    var log: [String] = []
    var failure: SessionStorageError?

    init(stored: (token: String, username: String?)? = nil) {
        self.stored = stored.map { StoredLogin(token: $0.token, username: $0.username, loginID: LoginID.random()) }
    }

    func loadSession() -> StoredLogin? { stored }
    func saveSession(_ login: StoredLogin) async throws(SessionStorageError) {
        if let failure { throw failure }
        stored = login
        log.append("save \(login.username ?? "nil")")
    }
    func deleteSession(_ loginID: String) async throws(SessionStorageError) {
        if let failure { throw failure }
        if stored?.loginID == loginID { stored = nil }
        log.append("delete")
    }
}

extension LoginSuites {
    /// The `Session` kind and the app's one session behind it: logins start it, `logout` and a 401
    /// to a call made with the token end it, every live `Session` follows, and storage keeps it.
    @Suite("Session")
    @HostActor
    struct SessionTests {
        let clock = ManualClock()
        let backend: EmbeddedBackend
        let storage = MemorySessionStorage()
        let session: AppSession
        let api: AuthenticatedAPI

        init() {
            backend = EmbeddedBackend(clock: clock)
            session = AppSession(storage: storage)
            api = AuthenticatedAPI(backend, session: session)
        }

        func makeSession(_ handle: String = "s") -> ViewModelTest<SessionViewModel> {
            ViewModelTest(locale: .zhHans, clock: clock, handle: handle) { SessionViewModel(session: session) }
        }

        @Test func aLoginOpensTheSessionAndLogoutEndsIt() async throws {
            let recorder = makeSession()
            #expect(recorder.value("isLoggedIn") == false)
            #expect(recorder.value("username") == .null)

            _ = try await api.login(username: "13800138000", password: "123456")
            #expect(recorder.take() == [.changed("isLoggedIn", true), .changed("username", "13800138000")])
            #expect(backend.token == "demo-token-1")
            #expect(storage.log == ["save 13800138000"])

            let logout = recorder.execute("logout").accepted()
            await recorder.settle()
            #expect(recorder.take() == [
                .changed("isLoggedIn", false), .changed("username", .null), .event("navigate", ["route": "Login"]),
            ])
            #expect(logout.outcome == .succeeded(nil))
            #expect(storage.log == ["save 13800138000", "delete"])
            #expect(storage.stored == nil)
            // No session: logging out again changes nothing.
            recorder.execute("logout").accepted()
            await recorder.settle()
            #expect(recorder.take() == [])
        }

        @Test func aCodeLoginNamesTheSessionByThePhone() async throws {
            let recorder = makeSession()
            try await api.sendSMSCode(phone: "13912345678")
            _ = try await api.loginWithCode(phone: "13912345678", code: "123456")
            #expect(recorder.take() == [.changed("isLoggedIn", true), .changed("username", "13912345678")])
        }

        @Test func a401ToACallWithTheTokenEndsTheSessionForEveryScreen() async throws {
            let first = makeSession("s1")
            let second = makeSession("s2")
            _ = try await api.login(username: "13800138000", password: "123456")
            _ = first.take()
            _ = second.take()

            backend.script(.products, [.http(status: 401)])
            await #expect(throws: BackendError.unauthorized()) { _ = try await api.products(page: 1, pageSize: 20) }
            let ended: [ViewModelTest<SessionViewModel>.Record] = [
                .changed("isLoggedIn", false), .changed("username", .null), .event("navigate", ["route": "Login"]),
            ]
            #expect(first.take() == ended)
            #expect(second.take() == ended)
            #expect(backend.token == nil)
            #expect(session.token == nil)
            // The storage deletes it in the background: the token is refused already.
            await first.until("the storage to delete the login") { storage.stored == nil }
            // Later calls go without a token.
            _ = try await api.products(page: 1, pageSize: 20)
            #expect(backend.token == nil)
        }

        @Test func aLogoutTheStorageCannotMakeFailsAndTheSessionStaysOpen() async throws {
            let recorder = makeSession()
            _ = try await api.login(username: "13800138000", password: "123456")
            _ = recorder.take()
            storage.failure = SessionStorageError("state.sqlite3: locked", isBusy: true)
            let logout = recorder.execute("logout").accepted()
            await recorder.settle()
            guard case .failed(let error) = logout.outcome else {
                Issue.record("logout did not fail: \(String(describing: logout.outcome))")
                return
            }
            #expect(error.kind == BackendError.Kind.timeout.rawValue)
            #expect(error.detail.contains("the logout could not delete the stored login"))
            // No pretending: still logged in, on every screen and in the storage.
            #expect(recorder.take().filter { $0.outputName == "navigate" } == [])
            #expect(recorder.value("isLoggedIn") == true)
            #expect(session.isLoggedIn && storage.stored != nil)
            // Once the storage can, the logout goes through.
            storage.failure = nil
            let retry = recorder.execute("logout").accepted()
            await recorder.settle()
            #expect(retry.outcome == .succeeded(nil))
            #expect(!session.isLoggedIn && storage.stored == nil)
        }

        @Test func aLoginTheStorageCannotStoreFailsAndChangesNothing() async throws {
            storage.failure = SessionStorageError("state.sqlite3: disk I/O error", isBusy: false)
            await #expect(throws: BackendError.self) { _ = try await api.login(username: "13800138000", password: "123456") }
            #expect(!session.isLoggedIn)
            #expect(storage.stored == nil)
        }

        @Test func a401ToASecondLoginFailsThatLoginAndTheSessionStays() async throws {
            let recorder = makeSession()
            _ = try await api.login(username: "13800138000", password: "123456")
            _ = recorder.take()
            backend.script(.authLogin, [.http(status: 401)])
            await #expect(throws: BackendError.server(status: 401)) { _ = try await api.login(username: "13800138000", password: "wrong1") }
            #expect(recorder.take() == [])
            #expect(session.isLoggedIn && session.username == "13800138000")
            #expect(storage.log == ["save 13800138000"])
            // The same for a code login and for sending a code.
            backend.script(.authSMSCode, [.http(status: 401)])
            await #expect(throws: BackendError.server(status: 401)) { try await api.sendSMSCode(phone: "13912345678") }
            #expect(session.isLoggedIn)
        }

        @Test func aCallTheSessionEndedDuringIsDroppedAsCancelled() async throws {
            _ = try await api.login(username: "13800138000", password: "123456")
            backend.script(.products, [.delay(.seconds(1))])
            let call = Task { try await api.products(page: 1, pageSize: 20) }
            await EventLoop.shared.settle()
            try await session.logout()
            await clock.advance(by: .seconds(1))
            await #expect(throws: CancellationError.self) { _ = try await call.value }
        }

        @Test func a401WithoutASessionIsAServerErrorAndChangesNothing() async throws {
            let recorder = makeSession()
            backend.script(.products, [.http(status: 401)])
            await #expect(throws: BackendError.server(status: 401)) { _ = try await api.products(page: 1, pageSize: 20) }
            #expect(recorder.take() == [])
            #expect(storage.log == [])
        }

        @Test func otherFailuresLeaveTheSessionOpen() async throws {
            let recorder = makeSession()
            _ = try await api.login(username: "13800138000", password: "123456")
            _ = recorder.take()
            backend.script(.products, [.http(status: 403), .http(status: 500), .network])
            for _ in 0..<3 {
                await #expect(throws: BackendError.self) { _ = try await api.products(page: 1, pageSize: 20) }
            }
            #expect(recorder.take() == [])
            #expect(session.isLoggedIn)
        }

        @Test func aStoredSessionIsOpenAtStartAndSentWithTheFirstCall() async throws {
            let storage = MemorySessionStorage(stored: ("stored-token", "13800138000"))
            let session = AppSession(storage: storage)
            let backend = EmbeddedBackend(clock: clock)
            _ = AuthenticatedAPI(backend, session: session)
            #expect(backend.token == "stored-token")
            let recorder = ViewModelTest(locale: .zhHans, clock: clock) { SessionViewModel(session: session) }
            #expect(recorder.value("isLoggedIn") == true)
            #expect(recorder.value("username") == "13800138000")
        }

        @Test func aDisposedSessionScreenNoLongerFollows() async throws {
            let recorder = makeSession()
            recorder.context.dispose()
            _ = try await api.login(username: "13800138000", password: "123456")
            #expect(recorder.take() == [])
        }
    }
}
