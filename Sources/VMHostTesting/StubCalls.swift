import Synchronization
import Testing
import VMHost

/// Calls to an app's API, for view-model tests: every call is recorded and held pending until the
/// test completes it, fails it, or the calling task is cancelled. A test can look at the state
/// *while* a request is in flight, then decide how it ends.
///
/// Any API protocol gets a stub in a few lines: each method hands its endpoint, its arguments and
/// its result type to ``perform(_:_:as:)``.
///
/// ```swift
/// enum TodoEndpoint: String, Sendable { case list, add }
///
/// @HostActor final class StubTodoAPI: TodoAPI {
///     let calls = StubCalls<TodoEndpoint>()
///     func list() async throws -> [Todo] { try await calls.perform(.list) }
///     func add(title: String) async throws -> Todo { try await calls.perform(.add, ["title": .string(title)]) }
/// }
///
/// // In a test:
/// let call = await api.calls.call(.list)
/// #expect(test.viewModel.loading)
/// call.succeed([Todo(id: "t1", title: "Milk")])
/// ```
///
/// ``answerNext(_:with:)`` queues answers that calls take at once instead (still answered
/// asynchronously, as a real client would). ``verifyNothingPending(sourceLocation:)`` fails a test
/// that left a call unanswered.
@HostActor
public final class StubCalls<Endpoint: Hashable & Sendable> {
    /// Every call so far, in the order made.
    public private(set) var calls: [PendingCall<Endpoint>] = []
    /// How long, in real time, ``call(_:occurrence:sourceLocation:)`` waits before it fails (5 s unless set).
    public var timeout: Duration = .seconds(5)

    private var queued: [Endpoint: [Result<any Sendable, any Error>]] = [:]

    /// A stub with no call made yet.
    public init() {}

    /// The calls not yet answered or cancelled.
    public var pendingCalls: [PendingCall<Endpoint>] { calls.filter(\.isPending) }

    /// The calls made to `endpoint`, in order.
    public func calls(to endpoint: Endpoint) -> [PendingCall<Endpoint>] { calls.filter { $0.endpoint == endpoint } }

    /// The `occurrence`-th call (1-based) to `endpoint`, waiting until it has been made. When it is
    /// not made within ``timeout``, the test fails here, naming the calls that were made, and a
    /// call that was never made is answered (its answers go nowhere).
    public func call(_ endpoint: Endpoint, occurrence: Int = 1, sourceLocation: SourceLocation = #_sourceLocation) async -> PendingCall<Endpoint> {
        let deadline = ContinuousClock.now + timeout
        while true {
            let made = calls(to: endpoint)
            if made.count >= occurrence { return made[occurrence - 1] }
            if ContinuousClock.now >= deadline {
                let all = calls.isEmpty ? "none" : calls.map(\.description).joined(separator: "; ")
                Issue.record(
                    Comment(rawValue: "waited \(timeout) for call \(occurrence) of \(endpoint); calls made: \(all)"), sourceLocation: sourceLocation)
                return PendingCall(endpoint: endpoint, arguments: .null)
            }
            await Task.yield()
        }
    }

    /// Queues an answer for the next call of `endpoint`: success with a value of the method's
    /// result type, or failure with any error.
    public func answerNext(_ endpoint: Endpoint, with result: Result<any Sendable, any Error>) {
        queued[endpoint, default: []].append(result)
    }

    /// Records a call and waits for the test's answer: what a stub's method returns. The answer
    /// must be a `T`; another type fails the call with ``StubMismatch``.
    public func perform<T: Sendable>(_ endpoint: Endpoint, _ arguments: JSON = [:], as type: T.Type = T.self) async throws -> T {
        let call = PendingCall(endpoint: endpoint, arguments: arguments)
        calls.append(call)
        if var queue = queued[endpoint], !queue.isEmpty {
            call.resolve(.answered(queue.removeFirst()))
            queued[endpoint] = queue
        }
        let reply = try await call.reply()
        guard let value = reply as? T else { throw StubMismatch(call: call.description, expected: "\(T.self)", got: "\(reply)") }
        return value
    }

    /// Fails the test when a call is still pending: work the test started and never finished. For
    /// ``ViewModelTest/finish(also:sourceLocation:)``'s `also`.
    public func verifyNothingPending(sourceLocation: SourceLocation) {
        let pending = pendingCalls
        guard !pending.isEmpty else { return }
        Issue.record(
            Comment(rawValue: "calls still pending: \(pending.map(\.description).joined(separator: "; "))"), sourceLocation: sourceLocation)
    }
}

/// A stub was answered with a value of the wrong type for the method called.
public struct StubMismatch: Error, CustomStringConvertible, Sendable {
    /// The call, as ``PendingCall/description``.
    public let call: String
    /// The type the method returns.
    public let expected: String
    /// The answer given.
    public let got: String
    /// `call was answered with got, not a expected`.
    public var description: String { "\(call) was answered with \(got), not a \(expected)" }
}

/// One call made to a ``StubCalls``: pending until the test answers it, or until the calling task
/// is cancelled (which the call records: ``wasCancelled``).
///
/// - Important: Thread-safe: cancellation may arrive from any thread.
public final class PendingCall<Endpoint: Sendable>: Sendable, CustomStringConvertible {
    /// Which endpoint was called.
    public let endpoint: Endpoint
    /// The call's arguments by parameter name, as the stub passed them.
    public let arguments: JSON

    enum Resolution {
        case answered(Result<any Sendable, any Error>)
        case cancelled
    }

    private let waiter = HostWaiter<any Sendable>()
    private let cancelled = Flag()

    /// A pending call to `endpoint` with `arguments`, for a stub that keeps its own calls
    /// (``StubCalls`` makes them for you).
    public init(endpoint: Endpoint, arguments: JSON) {
        self.endpoint = endpoint
        self.arguments = arguments
    }

    /// True until the call is answered or cancelled.
    public var isPending: Bool { !waiter.isResumed }

    /// True when the calling task was cancelled before the call was answered.
    public var wasCancelled: Bool { cancelled.isSet }

    /// Completes the call with `value` (of the method's result type). Ignored (returns false) when
    /// the call is no longer pending.
    @discardableResult
    public func succeed(_ value: any Sendable) -> Bool { resolve(.answered(.success(value))) }

    /// Completes a call whose method returns nothing.
    @discardableResult
    public func succeed() -> Bool { resolve(.answered(.success(()))) }

    /// Fails the call with `error` (the app's ``DomainFailure``, usually). Ignored (returns false)
    /// when the call is no longer pending.
    @discardableResult
    public func fail(_ error: any Error) -> Bool { resolve(.answered(.failure(error))) }

    /// Waits for the answer (what the test passed to ``succeed(_:)``, or the error of ``fail(_:)``);
    /// throws `CancellationError` when the calling task is cancelled first.
    @HostActor
    public func reply() async throws -> any Sendable {
        // The work waits for the test from here: its turn ends, as a host's does when the loop runs out of work.
        if isPending { TurnEnds.reached() }
        return try await waiter.wait(onCancel: { [cancelled] in cancelled.set() })
    }

    @discardableResult
    func resolve(_ resolution: Resolution) -> Bool {
        switch resolution {
        case .answered(let result): return waiter.resume(with: result)
        case .cancelled:
            cancelled.set()
            return waiter.resume(with: .failure(CancellationError()))
        }
    }

    /// The endpoint and the arguments: `list {}`.
    public var description: String { "\(endpoint) \(arguments)" }
}

/// A flag set once, from any thread.
final class Flag: Sendable {
    private let value = Mutex(false)

    var isSet: Bool { value.withLock { $0 } }
    func set() { value.withLock { $0 = true } }
}
