import AsyncHTTPClient
import Backend
import NIOCore
import NIOPosix
import VMHostRuntime

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The ``DomainError`` (or `CancellationError`) a failure of the HTTP transport stands for; the
/// rest of the mapping (statuses, envelopes) is ``ErrorMapping``'s.
///
/// | what failed | result |
/// |---|---|
/// | the host name does not resolve | `network` "the server's host name could not be resolved" |
/// | no connection could be made (refused, unreachable, connect timeout) | `network` "could not connect to the server" |
/// | the connection closed or reset before the whole response | `network` "the connection was lost" |
/// | the transport's own deadline (a backstop behind the host clock's) | `timeout` |
/// | a body over the size limit | `decode` |
/// | the request was cancelled | `CancellationError` |
/// | anything else | `network` "the request failed" |
enum HTTPErrorMapping {
    static func transportFailure(_ error: any Error) -> any Error {
        switch error {
        case is CancellationError:
            return error
        case let domain as DomainError:
            return domain
        case HTTPFailure.bodyTooLarge(let limit):
            return DomainError.decode("the response body is larger than the limit of \(limit) bytes")
        case let connection as NIOConnectionError:
            if connection.connectionErrors.isEmpty, connection.dnsAError != nil || connection.dnsAAAAError != nil {
                return DomainError.network("the server's host name could not be resolved")
            }
            return DomainError.network("could not connect to the server")
        case let client as HTTPClientError:
            switch client {
            case .cancelled: return CancellationError()
            case .deadlineExceeded, .readTimeout, .writeTimeout: return DomainError.timeout()
            case .connectTimeout, .getConnectionFromPoolTimeout: return DomainError.network("could not connect to the server")
            case .remoteConnectionClosed: return DomainError.network("the connection was lost")
            default: return DomainError.network("the request failed")
            }
        case let io as IOError where [ECONNREFUSED, EHOSTUNREACH, ENETUNREACH, ETIMEDOUT].contains(io.errnoCode):
            return DomainError.network("could not connect to the server")
        case ChannelError.connectTimeout(_):
            return DomainError.network("could not connect to the server")
        case is ChannelError, is IOError:
            return DomainError.network("the connection was lost")
        default:
            return DomainError.network("the request failed")
        }
    }
}
