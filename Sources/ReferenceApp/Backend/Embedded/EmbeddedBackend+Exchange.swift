import VMHost

extension EmbeddedBackend {
    /// Serves one request: takes its scripted outcome, waits on the clock, then answers.
    ///
    /// Waiting models a real deadline: when latency plus a `delay:` reaches ``timeout`` the call
    /// waits exactly ``timeout`` and fails with `timeout`, as an HTTP call to a slow server would.
    package func exchange(_ request: APIRequest) async throws -> Envelope {
        try Task.checkCancellation()
        let outcome = nextOutcome(for: request.endpoint)

        let wait: Duration? =
            switch outcome {
            case .timeout: nil
            case .delay(let delay): latency + delay
            default: latency
            }
        guard let wait, wait < timeout else {
            try await clock.sleep(for: timeout)
            throw BackendError.timeout()
        }
        if wait > .zero {
            try await clock.sleep(for: wait)
        }
        // Cancelled after the wait ended but before this task resumed: still apply nothing.
        try Task.checkCancellation()

        switch outcome {
        case .ok, .delay:
            let response = server.handle(request.demoRequest)
            return try ErrorMapping.envelope(status: response.status, json: response.body)
        case .network:
            throw BackendError.network("could not connect to the server")
        case .http(let status):
            return try ErrorMapping.envelope(
                status: status, json: Envelope.failure(code: String(status), message: "scripted HTTP \(status)").json)
        case .business(let code, let message):
            return try ErrorMapping.envelope(status: 200, json: Envelope.failure(code: code, message: message).json)
        case .malformed:
            return try ErrorMapping.envelope(status: 200, body: Self.malformedBody)
        case .timeout:
            preconditionFailure("a timeout outcome never reaches the server")
        }
    }

    /// A body cut short, as a crashed proxy might send.
    static let malformedBody = Array(#"{"success":true,"code":"0","data":[{"id":"#.utf8)

    private func nextOutcome(for endpoint: BackendEndpoint) -> ScriptedOutcome {
        guard var queue = scripts[endpoint], !queue.isEmpty else { return .ok }
        let outcome = queue.removeFirst()
        scripts[endpoint] = queue.isEmpty ? nil : queue
        return outcome
    }
}
