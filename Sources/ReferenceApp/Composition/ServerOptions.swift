import Backend
import Logging
import VMHost

/// The options of a run that every server of the reference app takes (stdio and WebSocket alike):
/// the backend, the clock, the test controls, the trace, the log level and the message size limit.
public struct ServerOptions: Sendable {
    public var backend: String
    public var timeoutMs: Int
    public var manualClock: Bool
    public var testControls: Bool
    public var tracePath: String?
    public var logLevel: Logger.Level
    public var maxMessageBytes: Int
    /// The embedded backend's number of products (`--demo-products`).
    public var demoProducts: Int

    /// Those options on the command line, in the order `--help` lists them.
    public static let commandLine: [OptionSpec] = [
        OptionSpec(
            "backend", value: "embedded|URL", defaultValue: "embedded",
            abstract: "The backend: 'embedded' (deterministic demo data, in-process) or the base URL of an HTTP server.",
            discussion: "For example --backend http://127.0.0.1:8080. The HTTP contract is in protocol/backend.md."),
        OptionSpec(
            "demo-products", value: "N",
            abstract: "The number of products the embedded backend serves (default: 57, from 0 to 1000000).",
            discussion: "57 is the documented demo catalogue (p001 ... p057). A larger catalogue continues it by the same rule (p058, p059, ...), e.g. --demo-products 5000 for a long list. Only with the embedded backend."),
        OptionSpec(
            "timeout-ms", value: "timeout-ms", defaultValue: "15000",
            abstract: "Deadline of every backend call, in milliseconds, on the host's clock."),
        OptionSpec(
            "clock", value: "clock", choices: ["system", "manual"], defaultValue: "system",
            abstract: "The host's clock: 'system' (real time) or 'manual'.",
            discussion: "A manual clock moves only with control.clock.advance (needs --test-controls): timers, countdowns, backend latency and timeouts become deterministic."),
        OptionSpec(
            "test-controls",
            abstract: "Serve the control.* methods (clock, backend latency and fault scripting). Without it they answer -32601."),
        OptionSpec(
            "trace", value: "FILE",
            abstract: "Append every message in and out to FILE as NDJSON {t, dir, msg}.",
            discussion: "Passwords, SMS codes and tokens are written as \"***\"."),
        OptionSpec(
            "log-level", value: "log-level", choices: Logger.Level.allCases.map(\.rawValue), defaultValue: "warning",
            abstract: "Least severe log level written to stderr: trace, debug, info, notice, warning, error or critical."),
        OptionSpec(
            "max-message-bytes", value: "max-message-bytes", defaultValue: String(4 * 1024 * 1024),
            abstract: "Largest message accepted, in bytes. A larger one is skipped and answered with an error; the host keeps serving."),
    ]

    /// The options of a run, validated.
    public init(parsed: ParsedArguments) throws(UsageError) {
        let backend = parsed.value("backend") ?? "embedded"
        let timeoutMs = try parsed.integer("timeout-ms") ?? 15000
        let maxMessageBytes = try parsed.integer("max-message-bytes") ?? 4 * 1024 * 1024
        let demoProducts = try parsed.integer("demo-products")
        guard timeoutMs > 0 else { throw UsageError("--timeout-ms must be a positive number of milliseconds, got \(timeoutMs)") }
        guard maxMessageBytes >= 64 else { throw UsageError("--max-message-bytes must be at least 64, got \(maxMessageBytes)") }
        let parsedBackend: BackendOption
        do throws(BackendOptionError) {
            parsedBackend = try BackendOption(parsing: backend)
        } catch {
            throw UsageError(error.message)
        }
        if let demoProducts {
            let range = DemoCatalog.productCountRange
            guard range.contains(demoProducts) else {
                throw UsageError(
                    "--demo-products must be a number of products from \(range.lowerBound) to \(range.upperBound), got \(demoProducts)")
            }
            guard parsedBackend == .embedded else {
                throw UsageError("--demo-products applies to the embedded backend only, not to --backend \(backend)")
            }
        }
        self.backend = backend
        self.timeoutMs = timeoutMs
        self.manualClock = parsed.value("clock") == "manual"
        self.testControls = parsed.flag("test-controls")
        self.tracePath = parsed.value("trace")
        self.logLevel = Logger.Level(rawValue: parsed.value("log-level") ?? "warning")!
        self.maxMessageBytes = maxMessageBytes
        self.demoProducts = demoProducts ?? DemoCatalog.productCount
    }
}
