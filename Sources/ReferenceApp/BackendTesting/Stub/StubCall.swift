import Backend
import VMHostRuntime
import Synchronization
import VMHostWire

/// One call made to a ``StubAPI``: pending until the test answers it, or until the calling task is
/// cancelled (which the call records: ``wasCancelled``).
///
/// - Important: Thread-safe: cancellation may arrive from any thread.
public final class StubCall: Sendable, CustomStringConvertible {
    /// Which endpoint was called.
    public let endpoint: BackendEndpoint
    /// The call's arguments by parameter name (`{"page": 1, "pageSize": 20}`, `{"menuUid": "m1"}`).
    public let arguments: JSON

    enum Resolution {
        case answered(Result<StubReply, DomainError>)
        case cancelled
    }

    private struct State {
        var resolution: Resolution?
        var continuation: CheckedContinuation<StubReply, any Error>?
    }

    private let state = Mutex(State())

    init(endpoint: BackendEndpoint, arguments: JSON) {
        self.endpoint = endpoint
        self.arguments = arguments
    }

    /// True until the call is answered or cancelled.
    public var isPending: Bool { state.withLock { $0.resolution == nil } }

    /// True when the calling task was cancelled before the call was answered.
    public var wasCancelled: Bool {
        state.withLock { if case .cancelled? = $0.resolution { true } else { false } }
    }

    /// Answers the call with success. Ignored (returns false) when the call is no longer pending.
    @discardableResult
    public func succeed(_ reply: StubReply) -> Bool { resolve(.answered(.success(reply))) }

    /// Answers the call with a failure. Ignored (returns false) when the call is no longer pending.
    @discardableResult
    public func fail(_ error: DomainError) -> Bool { resolve(.answered(.failure(error))) }

    /// Waits for the answer; throws `CancellationError` when the calling task is cancelled first.
    func reply() async throws -> StubReply {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<StubReply, any Error>) in
                let ready = state.withLock { state -> Resolution? in
                    if let resolution = state.resolution { return resolution }
                    state.continuation = continuation
                    return nil
                }
                if let ready { continuation.resume(with: Self.result(of: ready)) }
            }
        } onCancel: {
            resolve(.cancelled)
        }
    }

    @discardableResult
    private func resolve(_ resolution: Resolution) -> Bool {
        let (accepted, continuation) = state.withLock { state -> (Bool, CheckedContinuation<StubReply, any Error>?) in
            guard state.resolution == nil else { return (false, nil) }
            state.resolution = resolution
            defer { state.continuation = nil }
            return (true, state.continuation)
        }
        continuation?.resume(with: Self.result(of: resolution))
        return accepted
    }

    private static func result(of resolution: Resolution) -> Result<StubReply, any Error> {
        switch resolution {
        case .answered(.success(let reply)): .success(reply)
        case .answered(.failure(let error)): .failure(error)
        case .cancelled: .failure(CancellationError())
        }
    }

    public var description: String { "\(endpoint.rawValue) \(arguments)" }
}
