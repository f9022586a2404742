import Synchronization
import VMHostEventLoop
import VMHostRuntime

/// One HTTP request through ``CurlEngine``: described on the host thread, sent by the engine's
/// thread, and finished exactly once, by whichever comes first: the response (or the transport's
/// failure), the deadline on the host clock, or the cancellation of the calling task.
///
/// A deadline or a cancellation finishes the call at once on the host thread and asks the engine to
/// abort the transfer, which closes its connection; the engine's own completion then finds it
/// finished and changes nothing.
final class CurlTransfer: Sendable {
    typealias Response = (status: Int, body: [UInt8])
    typealias Outcome = Result<Response, any Error>

    /// The absolute URL.
    let url: String
    /// `GET`, `POST`, `PUT` or `DELETE`.
    let method: String
    /// Complete header lines (`Name: value`), none holding a line break.
    let headers: [String]
    /// The body of `POST` and `PUT`.
    let body: [UInt8]?
    /// The largest response body accepted, in bytes.
    let maxResponseBytes: Int
    /// libcurl's own deadline, a backstop far behind the host clock's.
    let backstopMilliseconds: Int

    private struct State {
        var continuation: CheckedContinuation<Outcome, Never>?
        var outcome: Outcome?
    }

    private let state = Mutex(State())

    init(url: String, method: String, headers: [String], body: [UInt8]?, maxResponseBytes: Int, backstopMilliseconds: Int) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
        self.maxResponseBytes = maxResponseBytes
        self.backstopMilliseconds = backstopMilliseconds
    }

    /// True once the transfer has its outcome: the engine then does not start it, or aborts it.
    var isFinished: Bool { state.withLock { $0.outcome != nil } }

    /// Hands the transfer to `engine` and returns its outcome. Cancelling the calling task finishes
    /// it with `CancellationError` and closes its connection.
    ///
    /// - Important: Isolated to ``HostActor`` so that the waiting task is resumed straight onto the
    ///   host thread, counted in transit (``EventLoop/beginTransit()``) until it runs there.
    @HostActor
    func run(on engine: CurlEngine) async -> Outcome {
        defer { if isFinished { EventLoop.shared.endTransit() } }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
                let early = state.withLock { state -> Outcome? in
                    if let outcome = state.outcome { return outcome }
                    state.continuation = continuation
                    return nil
                }
                if let early {
                    continuation.resume(returning: early)
                } else {
                    engine.start(self)
                }
            }
        } onCancel: {
            finish(.failure(CancellationError()), abortingOn: engine)
        }
    }

    /// Finishes the call with `outcome` unless it is finished already; with `engine`, also aborts
    /// the transfer there (a deadline or a cancellation).
    func finish(_ outcome: Outcome, abortingOn engine: CurlEngine? = nil) {
        let (first, continuation) = state.withLock { state -> (Bool, CheckedContinuation<Outcome, Never>?) in
            guard state.outcome == nil else { return (false, nil) }
            state.outcome = outcome
            defer { state.continuation = nil }
            return (true, state.continuation)
        }
        guard first else { return }
        EventLoop.shared.beginTransit()
        continuation?.resume(returning: outcome)
        engine?.abort(self)
    }
}
