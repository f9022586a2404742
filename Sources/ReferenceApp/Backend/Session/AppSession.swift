import VMHostEventLoop

/// The app's session: who is logged in, with which token. One per host, shared by every
/// view-model (a `Session` kind shows it; `Login` starts it; any call answered 401 ends it).
///
/// With a ``SessionStorage`` (the host's `--state-dir`) the session survives restarts: it is read
/// when the app starts, written when a login succeeds, and deleted when the session ends.
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
        }
    }

    /// A login succeeded: the session now belongs to `username`, with `token`. Stored, when the
    /// session has storage.
    public func signIn(token: String, username: String?) {
        self.token = token
        self.username = username
        storage?.saveSession(token: token, username: username)
        notify(nil)
    }

    /// Ends the session: the token is dropped (and deleted from storage) and every observer hears
    /// why. Ending a session that is not open does nothing.
    public func end(_ reason: End) {
        guard token != nil else { return }
        token = nil
        username = nil
        storage?.deleteSession()
        notify(reason)
    }

    /// Calls `handler` after every change: with nil when a session started, with the reason when
    /// it ended. Keep the returned observation; ``SessionObservation/cancel()`` stops it.
    public func observe(_ handler: @escaping @HostActor (End?) -> Void) -> SessionObservation {
        let id = nextObserver
        nextObserver += 1
        observers[id] = handler
        return SessionObservation { [weak self] in self?.observers[id] = nil }
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

/// Where a session is kept between runs (the app's state directory).
///
/// Implementations report their own failures (in the logs, never with the token); a session that
/// could not be stored still holds for the life of the process.
@HostActor
public protocol SessionStorage: AnyObject {
    /// The stored session, if any.
    func loadSession() -> (token: String, username: String?)?
    /// Stores the session, replacing any other, in one atomic write.
    func saveSession(token: String, username: String?)
    /// Deletes the stored session.
    func deleteSession()
}
