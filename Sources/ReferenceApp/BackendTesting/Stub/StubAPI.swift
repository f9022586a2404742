import Backend
import Testing
import VMHostTesting

/// An ``APIClient`` for view-model tests: every call is recorded and stays pending until the test
/// answers it, so a test can look at the state *while* a request is in flight, then complete it,
/// fail it with any ``BackendError``, or watch it being cancelled. The test kit's ``StubCalls``,
/// typed for the demo backend's endpoints and replies.
///
/// ```swift
/// let api = StubAPI()
/// let test = ViewModelTest(ProductListViewModel(api: api))
/// try await test.fire("refresh")
/// let call = await api.call(.products)
/// #expect(call.arguments == ["page": 1, "pageSize": 20])
/// call.succeed(.demoProducts(page: 1))
/// await test.finish(also: [api.verifyNothingPending])
/// ```
///
/// ``answerNext(_:with:)`` queues answers that calls take at once instead (still answered
/// asynchronously, as a real client would).
@HostActor
public final class StubAPI: APIClient {
    private let stub = StubCalls<BackendEndpoint>()

    /// The token of the last successful login.
    public var token: String?

    /// A stub with no call made yet.
    public init() {}

    /// How long, in real time, ``call(_:occurrence:sourceLocation:)`` waits before it fails (5 s unless set).
    public var timeout: Duration {
        get { stub.timeout }
        set { stub.timeout = newValue }
    }

    /// Every call so far, in the order made.
    public var calls: [StubCall] { stub.calls.map(StubCall.init) }

    /// The calls not yet answered or cancelled.
    public var pendingCalls: [StubCall] { stub.pendingCalls.map(StubCall.init) }

    /// The calls made to `endpoint`, in order.
    public func calls(to endpoint: BackendEndpoint) -> [StubCall] { stub.calls(to: endpoint).map(StubCall.init) }

    /// The `occurrence`-th call (1-based) to `endpoint`, waiting until it has been made. When it is
    /// not made within ``timeout``, the test fails here, naming the calls that were made.
    public func call(
        _ endpoint: BackendEndpoint, occurrence: Int = 1, sourceLocation: SourceLocation = #_sourceLocation
    ) async -> StubCall {
        StubCall(await stub.call(endpoint, occurrence: occurrence, sourceLocation: sourceLocation))
    }

    /// Queues an answer for the next call of `endpoint`.
    public func answerNext(_ endpoint: BackendEndpoint, with result: Result<StubReply, BackendError>) {
        stub.answerNext(endpoint, with: result.map { $0 as any Sendable }.mapError { $0 as any Error })
    }

    /// Fails the test when a call is still pending: work the test started and never finished. For
    /// ``ViewModelTest/finish(also:sourceLocation:)``'s `also`.
    public func verifyNothingPending(sourceLocation: SourceLocation) {
        stub.verifyNothingPending(sourceLocation: sourceLocation)
    }

    public func products(page: Int, pageSize: Int) async throws -> Page<Product> {
        let reply = try await perform(.products, ["page": JSON(page), "pageSize": JSON(pageSize)])
        guard case .products(let page) = reply else { throw mismatch(.products, reply) }
        return page
    }

    public func login(username: String, password: String) async throws -> Session {
        let reply = try await perform(.authLogin, ["username": .string(username), "password": .string(password)])
        guard case .session(let session) = reply else { throw mismatch(.authLogin, reply) }
        token = session.token
        return session
    }

    public func sendSMSCode(phone: String) async throws {
        let reply = try await perform(.authSMSCode, ["phone": .string(phone)])
        guard case .done = reply else { throw mismatch(.authSMSCode, reply) }
    }

    public func loginWithCode(phone: String, code: String) async throws -> Session {
        let reply = try await perform(.authLoginCode, ["phone": .string(phone), "code": .string(code)])
        guard case .session(let session) = reply else { throw mismatch(.authLoginCode, reply) }
        token = session.token
        return session
    }

    public func groups(menuUid: String) async throws -> [MenuGroup] {
        let reply = try await perform(.groupsList, ["menuUid": .string(menuUid)])
        guard case .groups(let groups) = reply else { throw mismatch(.groupsList, reply) }
        return groups
    }

    public func createGroup(menuUid: String, name: String) async throws -> MenuGroup {
        let reply = try await perform(.groupsCreate, ["menuUid": .string(menuUid), "name": .string(name)])
        guard case .group(let group) = reply else { throw mismatch(.groupsCreate, reply) }
        return group
    }

    public func renameGroup(menuUid: String, groupId: String, name: String) async throws -> MenuGroup {
        let reply = try await perform(
            .groupsRename, ["menuUid": .string(menuUid), "groupId": .string(groupId), "name": .string(name)])
        guard case .group(let group) = reply else { throw mismatch(.groupsRename, reply) }
        return group
    }

    public func deleteGroup(menuUid: String, groupId: String) async throws {
        let reply = try await perform(.groupsDelete, ["menuUid": .string(menuUid), "groupId": .string(groupId)])
        guard case .done = reply else { throw mismatch(.groupsDelete, reply) }
    }

    private func perform(_ endpoint: BackendEndpoint, _ arguments: JSON) async throws -> StubReply {
        do {
            return try await stub.perform(endpoint, arguments, as: StubReply.self)
        } catch let mismatch as StubMismatch {
            throw BackendError.decode("StubAPI: \(mismatch)")
        }
    }

    /// The test answered with the wrong case: surfaces as a `decode` failure naming both.
    private func mismatch(_ endpoint: BackendEndpoint, _ reply: StubReply) -> BackendError {
        .decode("StubAPI: \(endpoint.rawValue) was answered with \(reply)")
    }
}
