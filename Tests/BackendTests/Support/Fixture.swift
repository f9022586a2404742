import Backend
import BackendTesting
import HTTPBackend
@_spi(Transport) import VMHostEventLoop
import VMHostRuntime
import Testing

/// The two implementations of the contract, for scenarios that must pass against both.
enum Implementation: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case embedded
    case http

    var testDescription: String { rawValue }
}

/// A client of one implementation, on a manual clock; the HTTP one talks to its own loopback server.
@HostActor
final class Fixture {
    let clock = ManualClock()
    let client: any APIClient
    /// The loopback server behind an HTTP client; nil for the embedded backend.
    let server: LoopbackServer?

    init(_ implementation: Implementation, timeout: Duration = .milliseconds(15000)) throws {
        switch implementation {
        case .embedded:
            server = nil
            client = EmbeddedBackend(clock: clock, timeout: timeout)
        case .http:
            let server = try LoopbackServer()
            self.server = server
            client = HTTPAPIClient(baseURL: server.baseURL, clock: clock, timeout: timeout)
        }
    }

    /// Stops the loopback server. Called at the end of a test, which also keeps the fixture (and so
    /// the server) alive until then: the client alone does not hold it.
    func finish() { server?.stop() }

    deinit { server?.stop() }
}

/// Runs `body` and returns the ``BackendError`` it threw; records an issue when it threw something
/// else or nothing.
@HostActor
func backendError(
    _ body: () async throws -> Void, sourceLocation: SourceLocation = #_sourceLocation
) async -> BackendError? {
    do {
        try await body()
        Issue.record("expected a BackendError, but the call succeeded", sourceLocation: sourceLocation)
    } catch let error as BackendError {
        return error
    } catch {
        Issue.record("expected a BackendError, got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}

/// True when `result` failed with `CancellationError`.
func isCancellation<T>(_ result: Result<T, any Error>) -> Bool {
    if case .failure(let error) = result { return error is CancellationError }
    return false
}
