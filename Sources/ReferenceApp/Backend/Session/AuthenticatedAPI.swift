import VMHost

/// An ``APIClient`` that ties another one to the app's ``AppSession``: a successful login starts
/// the session, every call is sent with the session's token, and a call made with the token that
/// the server answers with HTTP 401 ends the session and fails as `unauthorized` (code 401).
///
/// - A login, a code login and sending a code are no calls of the session: a 401 to them is an
///   ordinary `server` error (a wrong password on a second login fails that login, and the session
///   open stays), and their answer is used whatever the session did meanwhile.
/// - Every other call belongs to the session it began in: when the session ended or another login
///   replaced it while the call ran, its result is dropped and the call ends as cancelled
///   (`CancellationError`), so that nothing fetched with one login is shown to, or saved for, the
///   next one or a logged-out screen.
///
/// The view-models of the reference app talk to the backend through it, so that the session has
/// one owner whatever the transport (HTTP, the embedded backend, a stub in tests).
///
/// Several may share one base, each with its own session (`vmhost-web`: one per connection, over
/// one HTTP client and its connection pool): every call gives the base its session's token just
/// before it starts, and the base reads the token as the call starts, before it first suspends
/// (both clients do), so a call never carries another session's token.
@HostActor
public final class AuthenticatedAPI: APIClient {
    /// The client that makes the calls.
    public let base: any APIClient
    /// The session the calls belong to.
    public let session: AppSession

    /// Wraps `base`, giving it the session's token (a session restored from storage included).
    public init(_ base: any APIClient, session: AppSession) {
        self.base = base
        self.session = session
        base.token = session.token
    }

    /// The session's token, as the base client sends it with this session's calls.
    public var token: String? {
        get { session.token }
        set { base.token = newValue }
    }

    public func products(page: Int, pageSize: Int) async throws -> Page<Product> {
        try await authenticated { try await base.products(page: page, pageSize: pageSize) }
    }

    public func login(username: String, password: String) async throws -> Session {
        let result = try await outsideTheSession { try await base.login(username: username, password: password) }
        try await session.signIn(token: result.token, username: username)
        return result
    }

    public func sendSMSCode(phone: String) async throws {
        try await outsideTheSession { try await base.sendSMSCode(phone: phone) }
    }

    public func loginWithCode(phone: String, code: String) async throws -> Session {
        let result = try await outsideTheSession { try await base.loginWithCode(phone: phone, code: code) }
        try await session.signIn(token: result.token, username: phone)
        return result
    }

    public func groups(menuUid: String) async throws -> [MenuGroup] {
        try await authenticated { try await base.groups(menuUid: menuUid) }
    }

    public func createGroup(menuUid: String, name: String) async throws -> MenuGroup {
        try await authenticated { try await base.createGroup(menuUid: menuUid, name: name) }
    }

    public func renameGroup(menuUid: String, groupId: String, name: String) async throws -> MenuGroup {
        try await authenticated { try await base.renameGroup(menuUid: menuUid, groupId: groupId, name: name) }
    }

    public func deleteGroup(menuUid: String, groupId: String) async throws {
        try await authenticated { try await base.deleteGroup(menuUid: menuUid, groupId: groupId) }
    }

    /// Runs a call of the session with its token: a 401 to a call that carried it ends the
    /// session; a call the session outlived not (see the type's notes) is dropped.
    private func authenticated<T>(_ call: @HostActor () async throws -> T) async throws -> T {
        let sentToken = session.token
        let generation = session.generation
        base.token = sentToken
        let outcome: Result<T, any Error>
        do {
            outcome = .success(try await call())
        } catch {
            outcome = .failure(error)
        }
        // Asked by a session that is over: nothing of it reaches the screen or the saved lists.
        guard session.generation == generation else { throw CancellationError() }
        do {
            return try outcome.get()
        } catch let error as BackendError where error.kind == .server && error.code == .int(401) && sentToken != nil {
            base.token = nil
            session.end(.unauthorized)
            throw BackendError.unauthorized()
        }
    }

    /// Runs a call that opens a session rather than belonging to one (a login, sending a code):
    /// whatever it fails with (a 401 included) is its own failure and ends nothing.
    private func outsideTheSession<T>(_ call: @HostActor () async throws -> T) async throws -> T {
        base.token = session.token
        return try await call()
    }
}
