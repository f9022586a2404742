import Backend
import VMHostEventLoop
import VMHostRuntime
import VMHostWire

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
    public typealias Args = NoArgs
    public static let kind = "Session"

    /// Whether a user is logged in.
    public let isLoggedIn: Property<Bool>
    /// The name the user logged in with; nil when logged out.
    public let username: Property<String?>
    /// `{route: "Login"}` when the session ends.
    public let navigate: Event<SessionNavigation>

    let context: ViewModelContext
    let session: AppSession

    /// The kind's factory, for the host's catalog.
    public static func factory(session: AppSession) -> ViewModelFactory {
        ViewModelFactory(SessionViewModel.self) { args, context in
            SessionViewModel(args: args, context: context, session: session)
        }
    }

    public init(args: Args, context: ViewModelContext, session: AppSession) {
        self.context = context
        self.session = session
        isLoggedIn = context.property("isLoggedIn", session.isLoggedIn)
        username = context.property("username", session.username)
        navigate = context.event("navigate")
        context.command("logout", policy: .ignore) { [session] in
            // Fails (-32004) when the stored login could not be deleted: the session stays open.
            try await session.logout()
            return nil
        }
        let observation = session.observe { [unowned self] end in
            isLoggedIn.value = session.isLoggedIn
            username.value = session.username
            if end != nil { navigate.emit(.login) }
        }
        context.onDispose { observation.cancel() }
    }
}

/// The `navigate` event's value of a `Session`: `{"route": "Login"}` when the session ends.
public struct SessionNavigation: Sendable, Equatable, JSONEncodable {
    public var route: String

    public init(route: String) { self.route = route }

    /// Where an ended session leads.
    public static let login = SessionNavigation(route: "Login")

    public var json: JSON { ["route": .string(route)] }

    public static var jsonSchema: JSON {
        [
            "type": "object",
            "properties": ["route": ["type": "string", "enum": ["Login"]]],
            "required": ["route"],
            "additionalProperties": false,
        ]
    }
}
