import VMHostEventLoop

/// One HTTP request through ``CurlEngine``: described on the host thread, sent by the engine's
/// thread, and finished exactly once, by whichever comes first: the response (or the transport's
/// failure), the deadline on the host clock, or the cancellation of the calling task.
///
/// A deadline or a cancellation finishes the call at once on the host thread and asks the engine to
/// abort the transfer, which closes its connection; the engine's own completion then finds it
/// finished and changes nothing.
final class CurlTransfer: Sendable {
    typealias Response = HTTPResponse
    typealias Outcome = Result<Response, any Error>

    /// The largest response head read (its header lines), whatever the body's limit.
    static let maxHeadBytes = 64 * 1024

    /// The absolute URL.
    let url: String
    /// The method (`GET`, `POST`, …).
    let method: String
    /// Complete header lines (`Name: value`), none holding a line break.
    let headers: [String]
    /// The body, if any.
    let body: [UInt8]?
    /// The largest response body accepted, in bytes.
    let maxResponseBytes: Int
    /// libcurl's own deadline, a backstop far behind the host clock's.
    let backstopMilliseconds: Int

    /// The calling task, until the transfer finishes.
    private let waiter = HostWaiter<Response>()

    init(url: String, method: String, headers: [String], body: [UInt8]?, maxResponseBytes: Int, backstopMilliseconds: Int) {
        self.url = url
        self.method = method
        self.headers = headers
        self.body = body
        self.maxResponseBytes = maxResponseBytes
        self.backstopMilliseconds = backstopMilliseconds
    }

    /// True once the transfer has its outcome: the engine then does not start it, or aborts it.
    var isFinished: Bool { waiter.isResumed }

    /// Hands the transfer to `engine` and returns its outcome. Cancelling the calling task finishes
    /// it with `CancellationError` and closes its connection.
    @HostActor
    func run(on engine: CurlEngine) async -> Outcome {
        do {
            return .success(try await waiter.wait(start: { engine.start(self) }, onCancel: { engine.abort(self) }))
        } catch {
            return .failure(error)
        }
    }

    /// Finishes the call with `outcome` unless it is finished already; with `engine`, also aborts
    /// the transfer there (a deadline or a cancellation).
    func finish(_ outcome: Outcome, abortingOn engine: CurlEngine? = nil) {
        guard waiter.resume(with: outcome) else { return }
        engine?.abort(self)
    }
}
