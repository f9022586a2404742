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

    package func exchange(_ request: APIRequest) async throws -> Envelope {
        let start = clock.now
        let (method, path) = RecordedExchange.target(of: request)
        func keep(_ outcome: RecordedExchange.Outcome) {
            let elapsed = clock.now - start
            let ms = max(0, min(elapsed.milliseconds, Int64(RecordedExchange.maxMilliseconds)))
            recording.record(
                RecordedExchange(method: method, path: path, body: request.body, milliseconds: Int(ms), outcome: outcome))
        }
        do {
            let envelope = try await base.exchange(request)
            keep(.response(envelope))
            return envelope
        } catch let error as DomainError {
            keep(.error(error))
            throw error
        } catch {
            keep(.cancelled)
            throw error
        }
    }
}
