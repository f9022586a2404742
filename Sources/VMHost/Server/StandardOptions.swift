#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Logging
@_spi(Transport) import VMHostCore
@_spi(Transport) import VMHostEventLoop
@_spi(Transport) import VMHostJSONRPC
@_spi(Transport) import VMHostHTTP
import VMHostRuntime
@_spi(Transport) import VMHostWire

extension Server {
    /// The options every server has, in the order `--help` lists them (the app's own options are
    /// listed after them, then `--version` and `--help`).
    @_spi(Transport)
    public static let standardOptions: [OptionSpec] = [
        OptionSpec(
            "framing", value: "auto|ndjson|lsp", choices: Framing.allCases.map(\.rawValue), defaultValue: "auto",
            abstract: "Message framing: auto, ndjson or lsp.",
            discussion: "ndjson is one JSON text per line. lsp is 'Content-Length: N' headers. auto skips a byte order mark, reads a first header line ('Name: value') as lsp and anything else as ndjson, and answers in the same framing."),
        OptionSpec(
            "clock", value: "system|manual", choices: ["system", "manual"], defaultValue: "system",
            abstract: "The host's clock: 'system' (real time) or 'manual'.",
            discussion: "A manual clock moves only with control.clock.advance (needs --test-controls): timers, countdowns, backend latency and timeouts become deterministic."),
        OptionSpec(
            "test-controls",
            abstract: "Serve the control.* methods (the clock, and the app's own test controls). Without it they answer -32601."),
        OptionSpec(
            "trace", value: "FILE",
            abstract: "Append every message in and out to FILE as NDJSON {t, dir, msg}.",
            discussion: "The values of inputs declared secret (passwords, SMS codes) and secret members such as tokens are written as \"***\" (protocol/SPEC.md §8). A FIFO must have a reader when the host starts."),
        OptionSpec(
            "record", value: "FILE",
            abstract: "Write the session to FILE as a conformance transcript that a replay repeats.",
            discussion: "Every message sent and written, and every exchange of the app's HTTP clients, secrets as placeholders a replay fills (protocol/conformance/README.md, Recordings). Replay it with python3 -m vmhost.replay FILE."),
        OptionSpec(
            "http-replay", value: "FILE",
            abstract: "Answer every call of the app's HTTP clients from the recording FILE, with no server.",
            discussion: "FILE is a recording of --record: its {\"http\": ...} lines. A call takes the first recorded exchange not used yet of the same method, path, query, header fields and body (a masked secret stands for any value); a call with none fails, naming its method and path (protocol/backend.md, Recorded HTTP)."),
        OptionSpec(
            "http-replay-ignore", value: "LIST",
            abstract: "What --http-replay leaves out when it matches a call: header:NAME, query:NAME, body:NAME, comma-separated.",
            discussion: "For values that change from run to run: a request id header, a timestamp parameter, a body member (at any depth)."),
        OptionSpec(
            "max-record-bytes", value: "BYTES", defaultValue: String(SessionRecorder.defaultMaxBytes),
            abstract: "Largest recording of one session (--record), in bytes.",
            discussion: "Past it the recording ends with a comment saying why, and the session goes on."),
        OptionSpec(
            "max-record-total-bytes", value: "BYTES", defaultValue: String(RecordingBudget.defaultLimit),
            abstract: "Most bytes all the recordings of this server write together (--record), in bytes.",
            discussion: "Past it each recording ends with a comment saying why, and its session goes on."),
        OptionSpec(
            "max-trace-bytes", value: "BYTES", defaultValue: String(TraceRecorder.defaultMaxBytes),
            abstract: "Most bytes this server appends to its trace (--trace), in bytes.",
            discussion: "Past it a last line {\"dir\": \"end\"} says why, and nothing more is written."),
        OptionSpec(
            "log-level", value: "LEVEL", choices: Logger.Level.allCases.map(\.rawValue), defaultValue: "warning",
            abstract: "Least severe log level written to stderr: trace, debug, info, notice, warning, error or critical."),
        OptionSpec(
            "max-message-bytes", value: "BYTES", defaultValue: String(StandardSettings.defaultMaxMessageBytes),
            abstract: "Largest message accepted, in bytes. A larger one is skipped and answered with an error; the host keeps serving."),
    ]

    /// `--version` and `--help`, which close every listing of options.
    @_spi(Transport)
    public static let closingOptions: [OptionSpec] = [
        OptionSpec("version", abstract: "Show the version."),
        OptionSpec("help", short: "h", abstract: "Show help information."),
    ]
}
