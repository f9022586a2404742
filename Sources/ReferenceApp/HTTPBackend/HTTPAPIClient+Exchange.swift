import Backend
import VMHost

extension HTTPAPIClient {
    /// Sends one request and returns its envelope, racing it against the deadline on the host clock.
    package func exchange(_ request: APIRequest) async throws -> Envelope {
        try Task.checkCancellation()
        let transfer = try makeTransfer(request)
        let engine = CurlEngine.shared
        let deadline = clock.schedule(after: timeout) {
            transfer.finish(.failure(BackendError.timeout()), abortingOn: engine)
        }
        defer { clock.cancel(deadline) }
        let (status, body) = try await transfer.run(on: engine).get()
        return try ErrorMapping.envelope(status: status, body: body)
    }

    /// The transfer of `request`: the base URL's origin and path prefix, the contract's path and
    /// query, the headers, the JSON body. Throws rather than send a header a line break would cut.
    func makeTransfer(_ request: APIRequest) throws(BackendError) -> CurlTransfer {
        var headers = ["Accept: application/json", "X-Device-Id: \(deviceID)", "uuid: \(deviceID)"]
        if let token {
            guard !token.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) else { throw HTTPErrorMapping.headerNotSendable }
            headers.append("Authorization: Bearer \(token)")
        }
        if request.body != nil { headers.append("Content-Type: application/json") }
        // A backstop only: the host clock's deadline normally wins long before. None on a manual
        // clock: there time moves only when told, and a second clock running in real time would
        // end a call that a slow test run has not timed out yet (0: libcurl sets no deadline).
        let backstop = clock is ManualClock ? 0 : max(30_000, Int(min(timeout.milliseconds, 43_200_000)) * 2)
        return CurlTransfer(
            url: baseURL.url(path: request.path, query: request.query), method: request.method.rawValue,
            headers: headers, body: request.body?.serialized(), maxResponseBytes: maxResponseBytes,
            backstopMilliseconds: backstop)
    }
}
