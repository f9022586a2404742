import Backend
import VMHostTesting

/// One call made to a ``StubAPI``: pending until the test answers it, or until the calling task is
/// cancelled (which the call records: ``wasCancelled``). The test kit's ``PendingCall``, typed for
/// the demo backend's endpoints and replies.
///
/// - Important: Thread-safe: cancellation may arrive from any thread.
public final class StubCall: Sendable, CustomStringConvertible {
    private let pending: PendingCall<BackendEndpoint>

    init(_ pending: PendingCall<BackendEndpoint>) {
        self.pending = pending
    }

    /// Which endpoint was called.
    public var endpoint: BackendEndpoint { pending.endpoint }
    /// The call's arguments by parameter name (`{"page": 1, "pageSize": 20}`, `{"menuUid": "m1"}`).
    public var arguments: JSON { pending.arguments }
    /// True until the call is answered or cancelled.
    public var isPending: Bool { pending.isPending }
    /// True when the calling task was cancelled before the call was answered.
    public var wasCancelled: Bool { pending.wasCancelled }

    /// Answers the call with success. Ignored (returns false) when the call is no longer pending.
    @discardableResult
    public func succeed(_ reply: StubReply) -> Bool { pending.succeed(reply) }

    /// Answers the call with a failure. Ignored (returns false) when the call is no longer pending.
    @discardableResult
    public func fail(_ error: BackendError) -> Bool { pending.fail(error) }

    public var description: String { "\(endpoint.rawValue) \(arguments)" }
}
