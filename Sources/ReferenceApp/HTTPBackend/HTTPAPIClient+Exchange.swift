import Backend
import VMHost
import VMHostHTTP

extension HTTPAPIClient {
    /// Sends one request through the framework's client (its deadline on the host clock, its
    /// cancellation, its size bound) and returns the response's envelope.
    package func exchange(_ request: APIRequest) async throws -> Envelope {
        try Task.checkCancellation()
        let response = try await http.send(try makeRequest(request))
        return try ErrorMapping.envelope(status: response.status, body: response.body)
    }

    /// The HTTP request of `request`: the base URL's origin and path prefix, the contract's path and
    /// query, `Accept`, the device id, the token, the JSON body. Throws rather than send a token a
    /// line break would cut.
    func makeRequest(_ request: APIRequest) throws(BackendError) -> HTTPRequest {
        var headers = HTTPHeaders()
        headers.add("Accept", "application/json")
        headers.add("X-Device-Id", deviceID)
        headers.add("uuid", deviceID)
        if let token {
            guard !token.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) else { throw HTTPErrorMapping.headerNotSendable }
            headers.add("Authorization", "Bearer \(token)")
        }
        if request.body != nil { headers.add("Content-Type", "application/json") }
        return HTTPRequest(
            HTTPMethod(rawValue: request.method.rawValue), baseURL.url(path: request.path, query: request.query),
            headers: headers, body: request.body?.serialized())
    }
}
