/// Why an HTTP exchange failed, as the framework's client sees it: the connection, the deadline,
/// the size bound, the response's status, a body that does not decode.
///
/// An app rarely shows one: its ``HTTPFailureMapping`` turns it into the app's own error (a
/// `DomainFailure` of its kinds), and the default mapping throws it as it is. A cancelled call is
/// never an `HTTPError`: it throws `CancellationError`.
///
/// ``detail`` is for developers, in English; it never quotes a header, a body or a URL's query (a
/// token or a password may be in them).
public struct HTTPError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What failed.
    public enum Kind: Sendable, Hashable {
        /// The host name did not resolve.
        case hostNotFound
        /// No connection could be made (refused, unreachable).
        case cannotConnect
        /// The connection closed or reset before the whole response came.
        case connectionLost
        /// TLS could not be set up, or the server's certificate was refused.
        case secureConnectionFailed
        /// The deadline passed (``HTTPClient/timeout`` on the host's clock).
        case timedOut
        /// The response's body (or its head) is larger than ``HTTPClient/maxResponseBytes``.
        case responseTooLarge
        /// The server answered with this status, which the mapping does not accept (the default
        /// mapping accepts 2xx only; a redirect that is not followed is one).
        case status(Int)
        /// The body is not JSON, or not of the shape the result type declares.
        case undecodable
        /// The request cannot be sent as given (a header holding a line break, a URL that is not
        /// `http` or `https`, too many redirects).
        case invalidRequest
        /// libcurl cannot be loaded on this machine (Debian: install `libcurl4`).
        case unavailable
        /// The recording a replay answers from (`--http-replay`) holds no answer for the request.
        case notRecorded
        /// Any other failure of the transport.
        case failed
    }

    public var kind: Kind
    /// What happened, for developers.
    public var detail: String

    public init(_ kind: Kind, _ detail: String) {
        self.kind = kind
        self.detail = detail
    }

    public var description: String { detail }

    /// The failure the transport's `CURLcode` stands for; a body over the limit names `maxResponseBytes`.
    ///
    /// | `CURLcode` | kind |
    /// |---|---|
    /// | 6 | ``Kind/hostNotFound`` |
    /// | 7 | ``Kind/cannotConnect`` |
    /// | 18, 52, 55, 56 | ``Kind/connectionLost`` |
    /// | 35, 58–60, 66, 77, 80, 82, 83, 90, 91, 98 | ``Kind/secureConnectionFailed`` |
    /// | 28 (libcurl's backstop, far behind the host clock's deadline) | ``Kind/timedOut`` |
    /// | 23 (the write callback took no more), 63 (an announced length over the limit) | ``Kind/responseTooLarge`` |
    /// | anything else | ``Kind/failed`` |
    package init(curlCode code: Int32, maxResponseBytes: Int) {
        switch code {
        case 6: self = HTTPError(.hostNotFound, "the server's host name could not be resolved")
        case 7: self = HTTPError(.cannotConnect, "could not connect to the server")
        case 18, 52, 55, 56: self = HTTPError(.connectionLost, "the connection was lost")
        case 35, 58, 59, 60, 66, 77, 80, 82, 83, 90, 91, 98:
            self = HTTPError(.secureConnectionFailed, "a secure connection to the server could not be made")
        case 28: self = .timedOut
        case 23, 63: self = .tooLarge(limit: maxResponseBytes)
        default: self = HTTPError(.failed, "the request failed")
        }
    }

    /// The deadline passed.
    static let timedOut = HTTPError(.timedOut, "the request timed out")

    /// A response over `limit` bytes.
    static func tooLarge(limit: Int) -> HTTPError {
        HTTPError(.responseTooLarge, "the response body is larger than the limit of \(limit) bytes")
    }

    /// libcurl could not be loaded.
    static let libcurlMissing = HTTPError(.unavailable, "libcurl (libcurl.so.4) is missing; install it (Debian: libcurl4)")
}
