import Backend
import VMHost
import VMHostHTTP

/// The ``BackendError`` a failure of the framework's HTTP client stands for; the rest of the
/// mapping (statuses, envelopes) is ``ErrorMapping``'s, which ``HTTPAPIClient`` applies to every
/// response. A deadline on the host clock is `timeout`; a cancellation never reaches here.
///
/// | what failed (`HTTPError.Kind`; libcurl's `CURLcode`) | result |
/// |---|---|
/// | the host name does not resolve (`hostNotFound`; 6) | `network` "the server's host name could not be resolved" |
/// | no connection could be made: refused, unreachable (`cannotConnect`; 7) | `network` "could not connect to the server" |
/// | the connection closed or reset before the whole response (`connectionLost`; 18, 52, 55, 56) | `network` "the connection was lost" |
/// | TLS could not be set up or the server's certificate was refused (`secureConnectionFailed`; 35, 58–60, …) | `network` "a secure connection to the server could not be made" |
/// | the deadline (`timedOut`; libcurl's backstop, 28) | `timeout` |
/// | a body over the size limit (`responseTooLarge`; 23, 63) | `decode` |
/// | libcurl missing (`unavailable`) | `network` naming it |
/// | anything else | `network` "the request failed" |
struct HTTPErrorMapping: HTTPFailureMapping {
    /// Every response is accepted here: ``ErrorMapping/envelope(status:body:)`` reads its status
    /// and envelope.
    func check(_ response: HTTPResponse) throws {}

    func error(for failure: HTTPError) -> any Error { Self.backendError(failure) }

    static func backendError(_ failure: HTTPError) -> BackendError {
        switch failure.kind {
        case .timedOut: .timeout()
        case .responseTooLarge, .undecodable: .decode(failure.detail)
        case .status(let status): .server(status: status)
        case .hostNotFound, .cannotConnect, .connectionLost, .secureConnectionFailed, .unavailable, .failed, .invalidRequest,
             .notRecorded:
            .network(failure.detail)
        }
    }

    static func transportFailure(code: Int32, maxResponseBytes: Int) -> BackendError {
        backendError(HTTPError(curlCode: code, maxResponseBytes: maxResponseBytes))
    }

    /// libcurl could not be loaded: the HTTP backend cannot be used on this machine.
    static let libcurlMissing = BackendError.network("libcurl (libcurl.so.4) is missing; install it (Debian: libcurl4)")

    /// A header line that would be cut in two: a token holding a line break is never sent.
    static let headerNotSendable = BackendError.network("the session token holds a character a header cannot carry")
}
