import VMHost

/// The backend as view-models see it: one async, cancellable call per endpoint of
/// `protocol/backend.md`.
///
/// Two implementations: ``HTTPAPIClient`` (a real server over HTTP) and ``EmbeddedBackend`` (the
/// deterministic demo data, in-process, the default). `BackendTesting.StubAPI` is a third, for tests.
///
/// Every call either returns its typed result or throws one of exactly two errors:
/// - ``BackendError``, whose kind was decided in one place (``ErrorMapping``);
/// - `CancellationError`, when the calling task was cancelled. The work in flight is cancelled for
///   real (an HTTP request's connection is closed) and no result is applied. Cancellation is never
///   reported as a `BackendError`.
///
/// - Important: Calls are made on the host actor; implementations never block it.
@HostActor
public protocol APIClient: AnyObject, Sendable {
    /// The bearer token sent as `Authorization: Bearer` on every call; nil sends none. A login sets
    /// it; ``AuthenticatedAPI`` sets and clears it as the app's session starts and ends.
    ///
    /// - Important: A secret: never log it.
    var token: String? { get set }
    /// `GET /products?page=N&pageSize=M`: one page of the product list (pages are 1-based).
    func products(page: Int, pageSize: Int) async throws -> Page<Product>
    /// `POST /auth/login`: logs in with an account and password and keeps the token for later calls.
    func login(username: String, password: String) async throws -> Session
    /// `POST /auth/sms-code`: asks the server to text a login code to `phone`.
    func sendSMSCode(phone: String) async throws
    /// `POST /auth/login-code`: logs in with a phone and the code texted to it; keeps the token.
    func loginWithCode(phone: String, code: String) async throws -> Session
    /// `GET /menus/{menuUid}/groups`: the menu's sub-groups in server order.
    func groups(menuUid: String) async throws -> [MenuGroup]
    /// `POST /menus/{menuUid}/groups`: creates a group (with no dishes) and returns it.
    func createGroup(menuUid: String, name: String) async throws -> MenuGroup
    /// `PUT /menus/{menuUid}/groups/{groupId}`: renames a group and returns it.
    func renameGroup(menuUid: String, groupId: String, name: String) async throws -> MenuGroup
    /// `DELETE /menus/{menuUid}/groups/{groupId}`: deletes a group.
    func deleteGroup(menuUid: String, groupId: String) async throws
}
