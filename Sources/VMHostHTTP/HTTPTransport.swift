import VMHostEventLoop
import VMHostRuntime

/// What carries an ``HTTPClient``'s calls: libcurl by default; a recording's replay
/// (`--http-replay`), a recording wrapper (`--record`), or a test's own stub.
///
/// A transport gets each call with its first hop resolved (the URL, the client's headers under the
/// request's) and returns the last response as it came: the client maps it (``HTTPFailureMapping``).
/// It throws an ``HTTPError`` for a failed transfer and `CancellationError` when the calling task is
/// cancelled; a deadline of its own runs on ``HTTPCall/clock``.
@HostActor
public protocol HTTPTransport: AnyObject {
    /// Carries `call` to its server (following redirects as ``HTTPCall/redirects`` says) and
    /// returns the response.
    func carry(_ call: HTTPCall) async throws -> HTTPResponse
}

/// One call of an ``HTTPClient`` as its transport gets it.
public struct HTTPCall: Sendable {
    public var method: HTTPMethod
    /// The absolute URL of the first hop, the query appended.
    public var url: HTTPURL
    /// Every field sent: the client's (to its own origin) under the request's.
    ///
    /// - Important: May hold secrets: never log them.
    public var headers: HTTPHeaders
    public var body: [UInt8]?
    /// How long the whole call may take, on ``clock``.
    public var timeout: Duration
    /// The largest response body accepted.
    public var maxResponseBytes: Int
    public var redirects: HTTPRedirectPolicy
    /// The host's clock, which the deadline runs on.
    public var clock: any HostClock

    public init(
        method: HTTPMethod, url: HTTPURL, headers: HTTPHeaders, body: [UInt8]?, timeout: Duration, maxResponseBytes: Int,
        redirects: HTTPRedirectPolicy, clock: any HostClock
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeout = timeout
        self.maxResponseBytes = maxResponseBytes
        self.redirects = redirects
        self.clock = clock
    }
}

/// The transports the server chooses for a session's clients (`--record`, `--http-replay`): set by
/// the server only while it makes a session's kinds, on the host thread, and put back at once (on
/// every transport), and taken by every ``HTTPClient`` made meanwhile, around the transport it
/// would use. Nil at any other time: no session's state stays in it.
@_spi(Transport)
public enum HTTPSessionTransport {
    /// Makes a client's transport of its own one (nil: the client's own is used as it is).
    @HostActor public static var current: (@HostActor (any HTTPTransport) -> any HTTPTransport)?
}
