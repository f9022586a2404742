import VMHost

/// The test controls (`control.backend.script`, `control.backend.latency`) and their JSON forms,
/// so the host only forwards params and turns a ``ScriptError`` into `-32602`.
extension EmbeddedBackend {
    /// Queues outcomes for the next calls of `endpoint`, after any already queued; each applies to
    /// exactly one call, in order. Nothing is queued when any name or outcome is invalid.
    public func script(endpoint name: String, outcomes texts: [String]) throws(ScriptError) {
        guard let endpoint = BackendEndpoint(rawValue: name) else { throw .endpoint(name) }
        var outcomes: [ScriptedOutcome] = []
        for text in texts { outcomes.append(try ScriptedOutcome(parsing: text)) }
        script(endpoint, outcomes)
    }

    /// Queues typed outcomes for the next calls of `endpoint`.
    public func script(_ endpoint: BackendEndpoint, _ outcomes: [ScriptedOutcome]) {
        guard !outcomes.isEmpty else { return }
        scripts[endpoint, default: []].append(contentsOf: outcomes)
    }

    /// The outcomes still queued for `endpoint`.
    public func queuedOutcomes(for endpoint: BackendEndpoint) -> [ScriptedOutcome] { scripts[endpoint] ?? [] }

    /// Back to a fresh start: the demo data as documented (with the same number of products), no
    /// queued outcomes, no latency, no token.
    public func reset() {
        server = DemoServer(productCount: productCount)
        scripts = [:]
        latency = .zero
        token = nil
    }

    /// `control.backend.script {endpoint, outcomes:[…]}`.
    public func script(params: JSON) throws(ScriptError) {
        guard let endpoint = params["endpoint"]?.stringValue else {
            throw ScriptError(
                parameter: "endpoint",
                message: "endpoint: expected a string; valid endpoints: \(BackendEndpoint.names.joined(separator: ", "))")
        }
        guard let values = params["outcomes"]?.arrayValue else {
            throw ScriptError(
                parameter: "outcomes",
                message: "outcomes: expected an array of strings; valid outcomes: \(ScriptedOutcome.forms.joined(separator: ", "))")
        }
        var texts: [String] = []
        for (index, value) in values.enumerated() {
            guard let text = value.stringValue else {
                throw ScriptError(parameter: "outcomes", message: "outcomes[\(index)]: expected a string, got \(value.typeName)")
            }
            texts.append(text)
        }
        try script(endpoint: endpoint, outcomes: texts)
    }

    /// `control.backend.latency {ms}`: sets ``latency``; `ms` is an integer ≥ 0.
    public func setLatency(params: JSON) throws(ScriptError) {
        guard let ms = params["ms"]?.intValue, ms >= 0, ms <= ScriptedOutcome.maxDelayMilliseconds else {
            throw ScriptError(
                parameter: "ms", message: "ms: expected an integer from 0 to \(ScriptedOutcome.maxDelayMilliseconds)")
        }
        latency = .milliseconds(ms)
    }
}
