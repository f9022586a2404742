import AsyncHTTPClient
import NIOCore
import NIOPosix

/// The process's one HTTP client: an event loop on one thread and a pool of keep-alive
/// connections, made on the first call (a `static let` is initialised on first use) and never shut
/// down, so that a host which never calls a backend starts no thread and opens nothing.
///
/// Configured for the backend contract: redirects are never followed (the response comes back as
/// it is), bodies are not decompressed, a connection that cannot be established fails the call at
/// once instead of being retried until the deadline, and AsyncHTTPClient's own deadline is only a
/// backstop behind the host clock's.
enum HTTPTransport {
    static let client: HTTPClient = {
        var configuration = HTTPClient.Configuration()
        configuration.redirectConfiguration = .disallow
        configuration.decompression = .disabled
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup(numberOfThreads: 1), configuration: configuration)
    }()

    /// Sends `request` and reads its body, up to `maxBytes`.
    ///
    /// A body announced or found larger than `maxBytes` fails with ``HTTPFailure/bodyTooLarge``
    /// before more of it is read; the connection is then closed. `backstop` is the transport's own
    /// deadline, far behind the host clock's.
    static func fetch(_ request: HTTPClientRequest, maxBytes: Int, backstop: TimeAmount) async throws -> (status: Int, body: ByteBuffer) {
        let response = try await client.execute(request, timeout: backstop)
        let status = Int(response.status.code)
        if let length = response.headers.first(name: "content-length").flatMap({ Int($0) }), length > maxBytes {
            throw HTTPFailure.bodyTooLarge(limit: maxBytes)
        }
        do {
            return (status, try await response.body.collect(upTo: maxBytes))
        } catch is NIOTooManyBytesError {
            throw HTTPFailure.bodyTooLarge(limit: maxBytes)
        }
    }
}

/// A failure of the HTTP layer that is not the transport's.
enum HTTPFailure: Error {
    case bodyTooLarge(limit: Int)
}
