import Backend
import VMHost

/// The ``BackendError`` a failure of the HTTP transport stands for, from libcurl's `CURLcode`; the
/// rest of the mapping (statuses, envelopes) is ``ErrorMapping``'s. A deadline on the host clock or
/// a cancellation never reaches here: ``CurlTransfer`` finishes the call with them itself.
///
/// | what failed (`CURLcode`) | result |
/// |---|---|
/// | the host name does not resolve (6) | `network` "the server's host name could not be resolved" |
/// | no connection could be made: refused, unreachable (7) | `network` "could not connect to the server" |
/// | the connection closed or reset before the whole response (18, 52, 55, 56) | `network` "the connection was lost" |
/// | TLS could not be set up or the server's certificate was refused (35, 58–60, 66, 77, 80, 82, 83, 90, 91, 98) | `network` "a secure connection to the server could not be made" |
/// | libcurl's own deadline, a backstop behind the host clock's (28) | `timeout` |
/// | a body over the size limit (23 from the write callback, 63 for an announced length) | `decode` |
/// | anything else | `network` "the request failed" |
enum HTTPErrorMapping {
    static func transportFailure(code: Int32, maxResponseBytes: Int) -> BackendError {
        switch code {
        case 6: .network("the server's host name could not be resolved")
        case 7: .network("could not connect to the server")
        case 18, 52, 55, 56: .network("the connection was lost")
        case 35, 58, 59, 60, 66, 77, 80, 82, 83, 90, 91, 98: .network("a secure connection to the server could not be made")
        case 28: .timeout()
        case 23, 63: bodyTooLarge(limit: maxResponseBytes)
        default: .network("the request failed")
        }
    }

    static func bodyTooLarge(limit: Int) -> BackendError {
        .decode("the response body is larger than the limit of \(limit) bytes")
    }

    /// libcurl could not be loaded: the HTTP backend cannot be used on this machine.
    static let libcurlMissing = BackendError.network("libcurl (libcurl.so.4) is missing; install it (Debian: libcurl4)")

    /// A header line that would be cut in two: a token holding a line break is never sent.
    static let headerNotSendable = BackendError.network("the session token holds a character a header cannot carry")
}
