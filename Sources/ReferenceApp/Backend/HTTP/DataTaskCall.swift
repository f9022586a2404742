#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Foundation
import VMHostRuntime
import Synchronization

/// One URLSession data task whose continuation is resumed exactly once, by whichever comes first:
/// the response, the deadline, or the cancellation of the calling task.
///
/// The deadline and cancellation also cancel the data task, so its connection is closed rather
/// than left to finish and be ignored. They may arrive before the task is started (the calling
/// task was cancelled in between); the outcome is then kept and the task never starts.
///
/// - Important: Thread-safe: URLSession calls back on its own queue, cancellation handlers run on
///   the canceller's thread, the deadline on the host thread.
final class DataTaskCall: Sendable {
    typealias Response = (status: Int, body: [UInt8])

    private struct State {
        var continuation: CheckedContinuation<Response, any Error>?
        var task: URLSessionDataTask?
        /// An outcome that arrived before ``start(session:request:continuation:)``.
        var early: Result<Response, any Error>?
        var finished = false
    }

    private let state = Mutex(State())

    /// Starts the data task, unless the call already has its outcome.
    func start(session: URLSession, request: URLRequest, continuation: CheckedContinuation<Response, any Error>) {
        let early = state.withLock { state -> Result<Response, any Error>? in
            if let early = state.early { return early }
            state.continuation = continuation
            return nil
        }
        if let early {
            continuation.resume(with: early)
            return
        }
        let task = session.dataTask(with: request) { [self] data, response, error in
            if let error {
                finish(.failure(ErrorMapping.transportFailure(error)), cancelTask: false)
            } else if let http = response as? HTTPURLResponse {
                finish(.success((http.statusCode, [UInt8](data ?? Data()))), cancelTask: false)
            } else {
                finish(.failure(DomainError.network("the response was not HTTP")), cancelTask: false)
            }
        }
        let cancelled = state.withLock { state -> Bool in
            if state.finished { return true }
            state.task = task
            return false
        }
        // The deadline or a cancellation may have come while the task was being made.
        if !cancelled { task.resume() }
    }

    /// Ends the call with `result`; later outcomes are ignored. Cancels the data task unless the
    /// outcome came from the task itself.
    func finish(_ result: Result<Response, any Error>, cancelTask: Bool = true) {
        let (continuation, task) = state.withLock { state -> (CheckedContinuation<Response, any Error>?, URLSessionDataTask?) in
            guard !state.finished else { return (nil, nil) }
            state.finished = true
            if state.continuation == nil { state.early = result }
            defer { state.continuation = nil; state.task = nil }
            return (state.continuation, state.task)
        }
        if cancelTask { task?.cancel() }
        continuation?.resume(with: result)
    }
}
