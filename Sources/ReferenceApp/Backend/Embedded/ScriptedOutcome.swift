/// What the next call of an embedded endpoint does instead of (or before) being served normally.
///
/// Written on the wire as a string (`control.backend.script`):
/// | string | effect |
/// |---|---|
/// | `ok` | served normally |
/// | `timeout` | hangs until the backend's timeout elapses on the host clock, then fails with `timeout` |
/// | `network` | fails with `network` |
/// | `http:<status>` | fails with `server`, code `<status>` (400…599) |
/// | `business:<code>:<message>` | fails with `business`, the code and message given (the message may hold `:`) |
/// | `malformed` | answers a body that is not JSON: fails with `decode` |
/// | `delay:<ms>` | waits `<ms>` milliseconds on the host clock, then is served normally |
public enum ScriptedOutcome: Sendable, Hashable, CustomStringConvertible {
    case ok
    case timeout
    case network
    case http(status: Int)
    case business(code: String, message: String)
    case malformed
    case delay(Duration)

    /// The forms accepted by ``init(parsing:)``, for error messages and docs.
    public static let forms = ["ok", "timeout", "network", "http:<status>", "business:<code>:<message>", "malformed", "delay:<ms>"]

    /// Parses the wire form; the error names the outcome and lists the valid forms.
    public init(parsing text: String) throws(ScriptError) {
        switch text {
        case "ok": self = .ok
        case "timeout": self = .timeout
        case "network": self = .network
        case "malformed": self = .malformed
        default:
            let parts = text.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            let argument = parts.count == 2 ? String(parts[1]) : nil
            switch (parts[0], argument) {
            case ("http", let raw?):
                guard let status = Int(raw), (400...599).contains(status) else {
                    throw ScriptError.outcome(text, reason: "the status must be an integer from 400 to 599")
                }
                self = .http(status: status)
            case ("business", let raw?):
                let pieces = raw.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
                guard pieces.count == 2, !pieces[0].isEmpty else {
                    throw ScriptError.outcome(text, reason: "write business:<code>:<message> with a non-empty code")
                }
                self = .business(code: String(pieces[0]), message: String(pieces[1]))
            case ("delay", let raw?):
                guard let ms = Int64(raw), ms >= 0, ms <= Self.maxDelayMilliseconds else {
                    throw ScriptError.outcome(text, reason: "the delay must be an integer from 0 to \(Self.maxDelayMilliseconds) milliseconds")
                }
                self = .delay(.milliseconds(ms))
            default:
                throw ScriptError.outcome(text, reason: nil)
            }
        }
    }

    /// The longest delay a script may ask for: one day, far beyond any timeout.
    public static let maxDelayMilliseconds: Int64 = 86_400_000

    /// The wire form.
    public var description: String {
        switch self {
        case .ok: "ok"
        case .timeout: "timeout"
        case .network: "network"
        case .http(let status): "http:\(status)"
        case .business(let code, let message): "business:\(code):\(message)"
        case .malformed: "malformed"
        case .delay(let duration): "delay:\(duration.milliseconds)"
        }
    }
}

/// A `control.backend.*` request the embedded backend cannot follow; the host answers it with
/// JSON-RPC `-32602` (invalid params) and ``message``.
public struct ScriptError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The parameter that was wrong: `endpoint`, `outcomes` or `ms`.
    public var parameter: String
    /// What was wrong, naming the bad value and listing the valid choices.
    public var message: String

    public init(parameter: String, message: String) {
        self.parameter = parameter
        self.message = message
    }

    public var description: String { message }

    static func endpoint(_ name: String) -> ScriptError {
        ScriptError(
            parameter: "endpoint",
            message: "endpoint: unknown endpoint \"\(name)\"; valid endpoints: \(BackendEndpoint.names.joined(separator: ", "))")
    }

    static func outcome(_ text: String, reason: String?) -> ScriptError {
        let reason = reason.map { " (\($0))" } ?? ""
        return ScriptError(
            parameter: "outcomes",
            message: "outcomes: invalid outcome \"\(text)\"\(reason); valid outcomes: \(ScriptedOutcome.forms.joined(separator: ", "))")
    }
}
