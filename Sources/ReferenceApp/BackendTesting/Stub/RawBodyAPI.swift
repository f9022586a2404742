import Backend
import VMHost

/// An API whose every call is answered `body` with status 200, read exactly as a client reads a
/// response (``ErrorMapping``, then the endpoint's decoder): for tests of hostile bodies through a
/// view-model and the host, without a socket.
@HostActor
public final class RawBodyAPI: APIClient {
    public var body: [UInt8]
    /// Sent with no call: every call is answered with ``body``.
    public var token: String?

    public init(_ body: String) { self.body = Array(body.utf8) }

    private func envelope() throws(BackendError) -> Envelope { try ErrorMapping.envelope(status: 200, body: body) }

    public func products(page: Int, pageSize: Int) async throws -> Page<Product> { try envelope().productPage() }
    public func login(username: String, password: String) async throws -> Session { try envelope().session() }
    public func sendSMSCode(phone: String) async throws { _ = try envelope() }
    public func loginWithCode(phone: String, code: String) async throws -> Session { try envelope().session() }
    public func groups(menuUid: String) async throws -> [MenuGroup] { try envelope().groups() }
    public func createGroup(menuUid: String, name: String) async throws -> MenuGroup { try envelope().group() }
    public func renameGroup(menuUid: String, groupId: String, name: String) async throws -> MenuGroup { try envelope().group() }
    public func deleteGroup(menuUid: String, groupId: String) async throws { _ = try envelope() }
}
