import Backend
import VMHost
import VMHostHTTP

/// The backend over HTTP (`--backend http://host:port`), on the framework's ``HTTPClient``
/// (libcurl loaded by the first call).
///
/// Every call sends `Accept: application/json`, the device id as both `X-Device-Id` and `uuid`
/// (``deviceID``: the one stored in the state directory with `--state-dir`, else one for the life
/// of the process), and `Authorization: Bearer <token>` once a login
/// succeeded. Bodies are written and parsed with the project's jansson-backed ``JSON``, and the
/// response goes through ``ErrorMapping``.
///
/// The deadline runs on the host's clock, so `--clock manual` and tests decide when a request
/// times out: when it passes, the request is cancelled (its connection closed) and the call throws
/// a `timeout` error. Cancelling the calling task cancels the request the same way: the server
/// sees the connection closed and the call throws `CancellationError`.
///
/// Only the base URL's origin is ever contacted: redirects are not followed (a 3xx fails as
/// `server` with its status), so the token never reaches another origin. A response body larger
/// than ``maxResponseBytes`` fails as `decode` without being read further.
///
/// libcurl, its thread and its connection cache are shared by every client of the process and made
/// by the first call (VMHostHTTP): a host that never calls loads no library and starts no
/// thread. Where libcurl is not installed, every call fails as `network` saying so.
///
/// - Important: Isolated to the host actor; the network I/O runs on the engine's thread and the
///   outcome comes back to the waiting task on the host thread, which never blocks.
@HostActor
public final class HTTPAPIClient: APIClient {
    /// The device id of a client given none: a random UUID, stable until the process exits. Made
    /// at its first use, the first call of such a client: a host that never calls reads no random
    /// bytes (a window of the C library's code fewer in an idle host's memory).
    public nonisolated static let processDeviceID: String = DeviceID.random()

    /// The largest response body read by default: 8 MiB.
    public nonisolated static let defaultMaxResponseBytes = HTTPClient.defaultMaxResponseBytes

    /// Where the contract's paths are resolved; a path prefix (`http://host/api`) is kept.
    public let baseURL: BackendURL
    /// How long a call may take, on ``clock``.
    public var timeout: Duration { http.timeout }
    public var clock: any HostClock { http.clock }
    /// The largest response body accepted, in bytes.
    public var maxResponseBytes: Int { http.maxResponseBytes }
    /// The device id sent as `X-Device-Id` and `uuid` on every call: the one given, else
    /// ``processDeviceID``.
    public var deviceID: String { givenDeviceID ?? Self.processDeviceID }
    private let givenDeviceID: String?
    /// The framework's client the calls go through. It has no headers of its own: every request
    /// carries `Accept` and the device id (``makeRequest(_:)``), so that making a client at
    /// start-up builds no header list.
    let http: HTTPClient
    /// The token of the last successful login, sent as `Authorization: Bearer`; nil before.
    ///
    /// - Important: A secret: never log it.
    public var token: String?

    /// Makes a client for the server at `baseURL`, sending `deviceID` (nil: ``processDeviceID``).
    /// Nothing is started before the first call.
    public init(
        baseURL: BackendURL, clock: any HostClock, timeout: Duration = .milliseconds(15000),
        maxResponseBytes: Int = HTTPAPIClient.defaultMaxResponseBytes, deviceID: String? = nil
    ) {
        self.baseURL = baseURL
        givenDeviceID = deviceID
        // A base URL parses as an HTTPURL but for control characters in its path, which no
        // request could carry either: those fail at their first call, as an invalid URL.
        http = HTTPClient(
            baseURL: HTTPURL(baseURL.description) ?? HTTPURL("http://invalid")!, clock: clock, timeout: timeout,
            maxResponseBytes: maxResponseBytes, failures: HTTPErrorMapping())
    }

    /// Forgets the token: later calls go without `Authorization`.
    public func signOut() { token = nil }
}

extension HTTPAPIClient: EnvelopeExchanging {}
