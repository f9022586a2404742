import Backend
import VMHost

/// The app's session as a screen sees it: whether a user is logged in, who, and a way out.
///
/// Inputs: `logout` (command, policy ignore: ends the session once its stored login is deleted,
/// failing when it cannot be; a no-op when none is open).
/// Outputs: `isLoggedIn`, `username` (null when logged out), and the event
/// `navigate {route: "Login"}` whenever the session ends, by `logout` or because the server answered
/// a call made with the token with HTTP 401 (that call fails as `unauthorized`). Every live `Session`
/// view-model follows the one ``AppSession`` of the host. The wire contract is in
/// `protocol/viewmodels/Session.md`.
@HostActor
public final class SessionViewModel: ViewModel {
    public static let kind = "Session"

    /// Whether a user is logged in.
    @Output public internal(set) var isLoggedIn = false
    /// The name the user logged in with; nil when logged out.
    @Output public internal(set) var username: String? = nil
    public let logout = Command(.ignore) { vm in try await vm.session.logout() }
    /// `{route: "Login"}` when the session ends.
    public let navigate = Event<SessionNavigation>()

    let session: AppSession

    /// The kind's factory, for the host's catalog.
    public static func factory(session: AppSession) -> ViewModelFactory {
        ViewModelFactory { _ in SessionViewModel(session: session) }
    }

    public init(session: AppSession) {
        self.session = session
        show(session)
        let observation = session.observe(on: self) { vm, end in
            vm.show(vm.session)
            if end != nil { vm.navigate.emit(.login) }
        }
        let context = self.context
        context.onDispose {
            observation.cancel()
            // The server stops and keeps this screen for its restart: the login stays stored.
            if context.isKeptForRestart { session.keepForRestart() }
        }
    }

    private func show(_ session: AppSession) {
        isLoggedIn = session.isLoggedIn
        username = session.username
    }
}

/// After a restart (`vmhost-web --session-dir`), the session comes back logged in: the login is
/// named by its random id (no secret), and the app's store gives it back (``AppSession/restore(loginID:)``).
extension SessionViewModel: Restorable {
    public var restoration: JSON? {
        session.loginID.map { ["login": .string($0)] }
    }

    public func restore(from restoration: JSON) {
        guard let loginID = restoration["login"]?.stringValue else { return }
        session.restore(loginID: loginID)
    }
}

/// The `navigate` event's value of a `Session`: `{"route": "Login"}` when the session ends.
public struct SessionNavigation: Sendable, Equatable, Codable {
    /// The screens an ended session leads to.
    public enum Route: String, Sendable, CaseIterable, Codable {
        case login = "Login"
    }

    public var route: Route

    public init(route: Route) { self.route = route }

    /// Where an ended session leads.
    public static let login = SessionNavigation(route: .login)
}
