import LoopbackTesting
import Backend
import Foundation
import Synchronization
import VMHost

/// A real HTTP/1.1 server on 127.0.0.1 that serves the backend contract from a ``DemoServer``, so
/// `HTTPAPIClient` is tested against real sockets.
///
/// It answers one request per connection (`Connection: close`), records every request (method,
/// path, query, headers, body), can be told per path to misbehave (``LoopbackFault``), and reports
/// when a client closes a connection it left unanswered: the proof that a cancelled or timed-out
/// call closed its connection. Tests wait for what the server saw with `async` calls that resume
/// when it happens (``request(path:occurrence:)``, ``connectionClosedByClient(path:occurrence:)``),
/// never by sleeping.
///
/// The server runs on its own threads (one accepting, one per connection); it stops when
/// ``stop()`` is called or the value is released.
///
/// Why plain POSIX sockets and not a server package: it is the lightest honest option. It is real
/// TCP and real HTTP/1.1, yet there is nothing new to build or to keep building, for a server the
/// product itself never ships.
public final class LoopbackServer: Sendable {
    /// The port the server listens on, on 127.0.0.1.
    public let port: UInt16
    private let core: LoopbackCore

    /// Starts a server on an ephemeral port of 127.0.0.1 that writes its envelopes in `convention`.
    public init(convention: EnvelopeConvention = .successFlag) throws {
        let (fd, port) = try Socket.listenOnLoopback()
        self.port = port
        core = LoopbackCore(listener: fd, convention: convention)
        let core = core
        Thread.detachNewThread { core.acceptLoop() }
    }

    deinit { core.stop() }

    /// `http://127.0.0.1:<port>`.
    public var baseURL: BackendURL { BackendURL("http://127.0.0.1:\(port)")! }

    /// A loopback URL on which nothing listens: connecting is refused.
    public static func unusedURL() throws -> BackendURL {
        BackendURL("http://127.0.0.1:\(try Socket.unusedLoopbackPort())")!
    }

    /// Stops accepting and closes every open connection; waiters still waiting throw.
    public func stop() { core.stop() }

    /// Makes requests to `path` (no query, e.g. `/products`) misbehave from now on; nil serves the
    /// contract again.
    public func setFault(_ fault: LoopbackFault?, forPath path: String) {
        core.state.withLock { $0.faults[path] = fault }
    }

    /// Every request received so far, in order of arrival.
    public var requests: [RecordedRequest] { core.state.withLock { $0.requests } }

    /// The demo server's current state.
    public var demo: DemoServer { core.state.withLock { $0.demo } }

    /// The `occurrence`-th request (1-based) to `path`, waiting until it has arrived.
    public func request(path: String, occurrence: Int = 1) async throws -> RecordedRequest {
        try await core.wait(for: .request(path: path, occurrence: occurrence))
        return core.state.withLock { state in state.requests.filter { $0.path == path }[occurrence - 1] }
    }

    /// Returns once the client has closed the `occurrence`-th unanswered connection to `path`.
    public func connectionClosedByClient(path: String, occurrence: Int = 1) async throws {
        try await core.wait(for: .closedByClient(path: path, occurrence: occurrence))
    }
}

/// The server stopped while a test was waiting for something it had not yet seen.
public struct LoopbackServerStopped: Error, Sendable {}
