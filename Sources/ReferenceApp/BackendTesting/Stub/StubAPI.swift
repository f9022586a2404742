import Backend
import VMHostEventLoop
import VMHostRuntime
import VMHostWire

/// An ``APIClient`` for view-model tests: every call is recorded and stays pending until the test
/// answers it, so a test can look at the state *while* a request is in flight, then complete it,
/// fail it with any ``BackendError``, or watch it being cancelled.
///
/// ```swift
/// let api = StubAPI()
/// let viewModel = ProductListViewModel(api: api)
/// viewModel.refresh()
/// let call = try await api.call(.products)
/// #expect(call.arguments == ["page": 1, "pageSize": 20])
/// call.succeed(.demoProducts(page: 1))
/// ```
///
/// ``answerNext(_:with:)`` queues answers that calls take at once instead (still answered
/// asynchronously, as a real client would).
@HostActor
public final class StubAPI: APIClient {
    /// Every call so far, in the order made.
    public private(set) var calls: [StubCall] = []
    /// The token of the last successful login.
    public var token: String?

    private var queued: [BackendEndpoint: [Result<StubReply, BackendError>]] = [:]
    private var waiters: [(endpoint: BackendEndpoint, occurrence: Int, continuation: CheckedContinuation<StubCall, Never>)] = []

    public init() {}

    /// The calls not yet answered or cancelled.
    public var pendingCalls: [StubCall] { calls.filter(\.isPending) }

    /// The calls made to `endpoint`, in order.
    public func calls(to endpoint: BackendEndpoint) -> [StubCall] { calls.filter { $0.endpoint == endpoint } }

    /// The `occurrence`-th call (1-based) to `endpoint`, waiting until it has been made.
    public func call(_ endpoint: BackendEndpoint, occurrence: Int = 1) async -> StubCall {
        let made = calls(to: endpoint)
        if made.count >= occurrence { return made[occurrence - 1] }
        return await withCheckedContinuation { continuation in
            waiters.append((endpoint, occurrence, continuation))
        }
    }

    /// Queues an answer for the next call of `endpoint` that finds none pending in the queue.
    public func answerNext(_ endpoint: BackendEndpoint, with result: Result<StubReply, BackendError>) {
        queued[endpoint, default: []].append(result)
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
        let call = StubCall(endpoint: endpoint, arguments: arguments)
        calls.append(call)
        if var queue = queued[endpoint], !queue.isEmpty {
            switch queue.removeFirst() {
            case .success(let reply): call.succeed(reply)
            case .failure(let error): call.fail(error)
            }
            queued[endpoint] = queue
        }
        let count = calls(to: endpoint).count
        let ready = waiters.filter { $0.endpoint == endpoint && $0.occurrence == count }
        waiters.removeAll { $0.endpoint == endpoint && $0.occurrence == count }
        for waiter in ready { waiter.continuation.resume(returning: call) }
        return try await call.reply()
    }

    /// The test answered with the wrong case: surfaces as a `decode` failure naming both.
    private func mismatch(_ endpoint: BackendEndpoint, _ reply: StubReply) -> BackendError {
        .decode("StubAPI: \(endpoint.rawValue) was answered with \(reply)")
    }
}
