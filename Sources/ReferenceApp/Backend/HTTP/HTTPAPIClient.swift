#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import VMHostEventLoop
import Foundation
import VMHostRuntime
import VMHostWire

/// The backend over HTTP (`--backend http://host:port`), on URLSession.
///
/// Every call sends `Accept: application/json` and `X-Device-Id` (one UUID for the life of the
/// process), and `Authorization: Bearer <token>` once a login succeeded. Bodies are written and
/// parsed with the project's jansson-backed ``JSON``, and the response goes through
/// ``ErrorMapping``.
///
/// The deadline runs on the host's clock, so `--clock manual` and tests decide when a request
/// times out: when it passes, the URLSession task is cancelled (its connection closed) and the call
/// throws a `timeout` error. URLSession's own `timeoutInterval` is only a generous backstop.
///
/// Cancelling the calling task cancels the URLSession task at once: the server sees the connection
/// closed and the call throws `CancellationError`, whatever the server does afterwards.
///
/// - Important: Isolated to the host actor; the network I/O runs on URLSession's threads and
///   comes back through a continuation, so the host thread never blocks.
@HostActor
public final class HTTPAPIClient: APIClient {
    /// The `X-Device-Id` of this process: stable until it exits.
    public nonisolated static let deviceID: String = UUID().uuidString

    /// Where the contract's paths are resolved; a path prefix (`http://host/api`) is kept.
    public let baseURL: URL
    /// How long a call may take, on ``clock``.
    public let timeout: Duration
    public let clock: any HostClock
    /// The token of the last successful login, sent as `Authorization: Bearer`; nil before.
    ///
    /// - Important: A secret: never log it.
    public var token: String?

    let session: URLSession

    /// Makes a client for the server at `baseURL` (scheme `http` or `https`).
    public init(baseURL: URL, clock: any HostClock, timeout: Duration = .milliseconds(15000)) {
        self.baseURL = baseURL
        self.clock = clock
        self.timeout = timeout
        let configuration = URLSessionConfiguration.ephemeral
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        configuration.urlCache = nil
        configuration.httpCookieStorage = nil
        session = URLSession(configuration: configuration)
    }

    deinit {
        session.invalidateAndCancel()
    }

    /// Forgets the token: later calls go without `Authorization`.
    public func signOut() { token = nil }
}

extension HTTPAPIClient: EnvelopeExchanging {}
