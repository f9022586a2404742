#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import VMHostEventLoop
import Foundation
import VMHostRuntime
import VMHostWire

extension HTTPAPIClient {
    /// Sends one request and returns its envelope, racing it against the deadline on the host clock.
    func exchange(_ request: APIRequest) async throws -> Envelope {
        try Task.checkCancellation()
        let urlRequest = try makeURLRequest(request)
        let call = DataTaskCall()
        let deadline = clock.schedule(after: timeout) {
            call.finish(.failure(DomainError.timeout()))
        }
        defer { clock.cancel(deadline) }
        let (status, body) = try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                call.start(session: session, request: urlRequest, continuation: continuation)
            }
        } onCancel: {
            call.finish(.failure(CancellationError()))
        }
        return try ErrorMapping.envelope(status: status, body: body)
    }

    /// The URLRequest of `request`: the base URL's path prefix, the contract's path and query, the headers.
    func makeURLRequest(_ request: APIRequest) throws(DomainError) -> URLRequest {
        guard var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: true) else {
            throw .network("the backend URL is not valid")
        }
        var prefix = components.percentEncodedPath
        while prefix.hasSuffix("/") { prefix.removeLast() }
        components.percentEncodedPath = prefix + request.path
        components.queryItems = request.query.isEmpty ? nil : request.query.map { URLQueryItem(name: $0.name, value: $0.value) }
        guard let url = components.url else { throw .network("the backend URL is not valid") }

        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.method.rawValue
        // A backstop only: the host clock's deadline normally wins long before.
        urlRequest.timeoutInterval = max(30, 2 * Double(timeout.milliseconds) / 1000)
        urlRequest.setValue("application/json", forHTTPHeaderField: "Accept")
        urlRequest.setValue(Self.deviceID, forHTTPHeaderField: "X-Device-Id")
        if let token { urlRequest.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        if let body = request.body {
            urlRequest.setValue("application/json", forHTTPHeaderField: "Content-Type")
            urlRequest.httpBody = Data(body.serialized())
        }
        return urlRequest
    }
}
