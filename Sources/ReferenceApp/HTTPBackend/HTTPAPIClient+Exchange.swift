import AsyncHTTPClient
import Backend
import NIOCore
import NIOHTTP1
import VMHostEventLoop
import VMHostRuntime
import VMHostWire

extension HTTPAPIClient {
    /// Sends one request and returns its envelope, racing it against the deadline on the host clock.
    package func exchange(_ request: APIRequest) async throws -> Envelope {
        try Task.checkCancellation()
        let httpRequest = makeRequest(request)
        let maxBytes = maxResponseBytes
        // A backstop only: the host clock's deadline normally wins long before.
        let backstop = TimeAmount.milliseconds(max(30_000, min(timeout.milliseconds, 43_200_000) * 2))
        let work = Task.detached {
            try await HTTPTransport.fetch(httpRequest, maxBytes: maxBytes, backstop: backstop)
        }
        let timedOut = Flag()
        let deadline = clock.schedule(after: timeout) {
            timedOut.isSet = true
            work.cancel()
        }
        defer { clock.cancel(deadline) }
        let result = await withTaskCancellationHandler {
            await work.result
        } onCancel: {
            work.cancel()
        }
        switch result {
        case .success(let (status, body)):
            return try body.withUnsafeReadableBytes { bytes throws(DomainError) in
                try ErrorMapping.envelope(status: status, body: bytes)
            }
        case .failure(let error):
            if Task.isCancelled { throw CancellationError() }
            if timedOut.isSet { throw DomainError.timeout() }
            throw HTTPErrorMapping.transportFailure(error)
        }
    }

    /// The HTTP request of `request`: the base URL's origin and path prefix, the contract's path
    /// and query, the headers, the JSON body.
    func makeRequest(_ request: APIRequest) -> HTTPClientRequest {
        var httpRequest = HTTPClientRequest(url: baseURL.url(path: request.path, query: request.query))
        httpRequest.method = NIOHTTP1.HTTPMethod(rawValue: request.method.rawValue)
        httpRequest.headers.add(name: "Accept", value: "application/json")
        httpRequest.headers.add(name: "X-Device-Id", value: deviceID)
        httpRequest.headers.add(name: "uuid", value: deviceID)
        if let token { httpRequest.headers.add(name: "Authorization", value: "Bearer \(token)") }
        if let body = request.body {
            httpRequest.headers.add(name: "Content-Type", value: "application/json")
            httpRequest.body = .bytes(ByteBuffer(bytes: body.serialized()))
        }
        return httpRequest
    }
}

/// Set by the deadline, read after the call; both on the host actor.
@HostActor
private final class Flag {
    var isSet = false
}
