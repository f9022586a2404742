import VMHostEventLoop
import VMHostRuntime

/// Where the calls a ``RecordingExchanges`` sees are written: a session's recording.
@HostActor
public protocol ExchangeRecording: AnyObject {
    /// Keeps one call of the backend (the app writes it as a `{"backend": …}` line).
    func record(_ exchange: RecordedExchange)
}

/// An API client that records every call another one makes, as it ends: the request, the success
/// envelope or the failure it returned (or that it was cancelled), and how long it took on the
/// host's clock. Nothing else changes: the calls, their results and their cancellation are the
/// base client's.
///
/// It wraps the exchange layer (``EnvelopeExchanging``), which both the HTTP client and the
/// embedded backend are, so a recording keeps what the app's calls got whatever the backend; a
/// ``RecordedBackend`` serves them again.
@HostActor
package final class RecordingExchanges: EnvelopeExchanging {
    let base: any EnvelopeExchanging
    let recording: any ExchangeRecording
    let clock: any HostClock

    package init(_ base: any EnvelopeExchanging, clock: any HostClock, recording: any ExchangeRecording) {
        self.base = base
        self.clock = clock
        self.recording = recording
    }

    /// The base client's: it sends it.
    package var token: String? {
        get { base.token }
        set { base.token = newValue }
    }

    /// Calls started and not ended, by number: what ``recordUnfinished()`` writes.
    private var inFlight: [Int: (request: APIRequest, start: Duration)] = [:]
    private var nextCall = 0

    package func exchange(_ request: APIRequest) async throws -> Envelope {
        let start = clock.now
        nextCall += 1
        let call = nextCall
        inFlight[call] = (request, start)
        func keep(_ outcome: RecordedExchange.Outcome) {
            guard inFlight.removeValue(forKey: call) != nil else { return }
            record(request, start: start, outcome)
        }
        do {
            let envelope = try await base.exchange(request)
            keep(.response(envelope))
            return envelope
        } catch let error as BackendError {
            keep(.error(error))
            throw error
        } catch {
            keep(.cancelled)
            throw error
        }
    }

    /// Writes the calls that have not ended as cancelled: the session ends while they are in
    /// flight, and their tasks, cancelled, may not run again before the recording is closed.
    package func recordUnfinished() {
        for call in inFlight.keys.sorted() {
            guard let (request, start) = inFlight.removeValue(forKey: call) else { continue }
            record(request, start: start, .cancelled)
        }
    }

    private func record(_ request: APIRequest, start: Duration, _ outcome: RecordedExchange.Outcome) {
        let (method, path) = RecordedExchange.target(of: request)
        let elapsed = clock.now - start
        let ms = max(0, min(elapsed.milliseconds, Int64(RecordedExchange.maxMilliseconds)))
        recording.record(
            RecordedExchange(method: method, path: path, body: request.body, milliseconds: Int(ms), outcome: outcome))
    }
}
