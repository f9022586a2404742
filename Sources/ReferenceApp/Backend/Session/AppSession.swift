import VMHost

/// The app's session: who is logged in, with which token. One per host (one per connection in
/// `vmhost-web`), shared by every view-model of it (a `Session` kind shows it; `Login` starts it;
/// any call answered 401 ends it).
///
/// Each login gets a random ``loginID``: what the login saves (its lists) is kept under it, so it is
/// shown to that login only, and deleted when the login ends.
///
/// With a ``SessionStorage`` (the host's `--state-dir`) a login is stored before it counts and a
/// logout counts once the storage deleted it: a session never shows a state the storage does not
/// hold. A storage that cannot do it (its database stayed locked, say) fails the login or the
/// logout with a domain error, and the session stays as it was.
///
/// - Important: Isolated to the host actor. The token is a secret: never log it.
@HostActor
public final class AppSession {
    /// Why a session ended.
    public enum End: String, Sendable {
        /// The user logged out.
        case logout
        /// A call made with the token was answered HTTP 401.
        case unauthorized
    }

    /// The bearer token of the logged-in user; nil when logged out.
    public private(set) var token: String?
    /// The name the user logged in with (the account, or the phone number); nil when logged out.
    public private(set) var username: String?
    /// The random id of the current login; nil when logged out. A new login gets a new one.
    public private(set) var loginID: String?
    /// Changes with every login and every end: work that began at another generation belongs to a
    /// session that is over (``AuthenticatedAPI`` drops its results).
    public private(set) var generation = 0
    /// Whether a user is logged in.
    public var isLoggedIn: Bool { token != nil }

    private let storage: (any SessionStorage)?
    private var observers: [Int: @HostActor (End?) -> Void] = [:]
    private var nextObserver = 0

    /// A session, restored from `storage` when it holds one.
    public init(storage: (any SessionStorage)? = nil) {
        self.storage = storage
        if let stored = storage?.loadSession() {
            token = stored.token
            username = stored.username
            loginID = stored.loginID
        }
    }

    /// A login succeeded: the session now belongs to `username`, with `token`, once the storage
    /// (if any) holds it. The login it replaces, if any, ends with what it saved.
    ///
    /// Throws a domain error when the storage could not store it: the session stays as it was.
    public func signIn(token: String, username: String?) async throws(BackendError) {
        let login = StoredLogin(token: token, username: username, loginID: LoginID.random())
        if let storage {
            do throws(SessionStorageError) {
                try await storage.saveSession(login)
            } catch {
                throw error.domainError(doing: "the login could not be stored")
            }
        }
        self.token = login.token
        self.username = login.username
        loginID = login.loginID
        generation += 1
        notify(nil)
    }

    /// Logs out: the session ends once the storage (if any) deleted the login and what it saved,
    /// and every observer hears it. Logging out with no session open does nothing.
    ///
    /// Throws a domain error when the storage could not delete it: the session stays open (the
    /// next start would be logged in, so this one says so).
    public func logout() async throws(BackendError) {
        guard let ending = loginID else { return }
        if let storage {
            do throws(SessionStorageError) {
                try await storage.deleteSession(ending)
            } catch {
                throw error.domainError(doing: "the logout could not delete the stored login")
            }
        }
        // A login that replaced this one meanwhile stands (its storing deleted this one).
        guard loginID == ending else { return }
        clear()
        notify(.logout)
    }

    /// Ends the session now, without waiting for the storage: the token is dropped, every observer
    /// hears why, and the storage deletes the login in the background (reporting its own failure).
    /// For an end that cannot be refused: the server no longer accepts the token (401), or a test
    /// resets the backend. Ending a session that is not open does nothing.
    public func end(_ reason: End) {
        guard let ending = loginID else { return }
        clear()
        notify(reason)
        if let storage {
            HostActor.startTask { try? await storage.deleteSession(ending) }
        }
    }

    /// Takes back the login `loginID` that the storage kept for a restart (``SessionStorage/loadLogin(_:)``),
    /// when no login is open: observers hear a session that started. Nothing when the storage
    /// does not hold it.
    public func restore(loginID: String) {
        guard self.loginID == nil, let login = storage?.loadLogin(loginID) else { return }
        token = login.token
        username = login.username
        self.loginID = login.loginID
        generation += 1
        notify(nil)
    }

    /// The server stops and keeps the screens of this session for its restart: the storage keeps
    /// the login (``SessionStorage/keepForRestart()``).
    public func keepForRestart() {
        storage?.keepForRestart()
    }

    /// Calls `handler` after every change: with nil when a session started, with the reason when
    /// it ended. Keep the returned observation; ``SessionObservation/cancel()`` stops it.
    public func observe(_ handler: @escaping @HostActor (End?) -> Void) -> SessionObservation {
        let id = nextObserver
        nextObserver += 1
        observers[id] = handler
        return SessionObservation { [weak self] in self?.observers[id] = nil }
    }

    private func clear() {
        token = nil
        username = nil
        loginID = nil
        generation += 1
    }

    /// ``observe(_:)`` for `owner` (a view-model), handed to `handler` while it lives: the
    /// observation holds it weakly.
    public func observe<Owner: AnyObject>(
        on owner: Owner, _ handler: @escaping @HostActor (Owner, End?) -> Void
    ) -> SessionObservation {
        observe { [weak owner] end in
            guard let owner else { return }
            handler(owner, end)
        }
    }

    private func notify(_ end: End?) {
        for id in observers.keys.sorted() { observers[id]?(end) }
    }
}

/// A registration of ``AppSession/observe(_:)``.
@HostActor
public final class SessionObservation {
    private var cancelHandler: (@HostActor () -> Void)?

    init(_ cancel: @escaping @HostActor () -> Void) { cancelHandler = cancel }

    /// Stops the observation.
    public func cancel() {
        cancelHandler?()
        cancelHandler = nil
    }
}
