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

/// The standard options of a run, validated (for another transport, such as WebSocket, too).
@_spi(Transport)
public struct StandardSettings: Sendable {
    static let defaultMaxMessageBytes = 4 * 1024 * 1024
    /// The most input bytes a host holds read and not handled yet, on every transport: stdio reads
    /// ahead no further, and an embedded host's writer waits (or, on the host thread, is refused)
    /// past it (protocol/SPEC.md §10). A single write larger than it is taken once nothing waits.
    package static let maxQueuedInputBytes = 8 << 20

    /// `--framing`.
    @_spi(Transport) public var framing: Framing
    /// `--clock manual`.
    @_spi(Transport) public var manualClock: Bool
    /// `--test-controls`.
    @_spi(Transport) public var testControls: Bool
    /// `--trace FILE`.
    public var tracePath: String?
    /// `--record`: the recording's file (a folder of them for a transport of many sessions).
    public var recordPath: String?
    /// `--log-level`.
    public var logLevel: Logger.Level
    /// `--max-message-bytes`.
    public var maxMessageBytes: Int
    /// `--max-record-bytes`: the bound of one session's recording.
    public var maxRecordBytes: Int
    /// `--max-record-total-bytes`: the budget of all the recordings of this server.
    public var recordBudget: RecordingBudget
    /// `--max-trace-bytes`.
    public var maxTraceBytes: Int
    /// `--http-replay FILE`: the recording the app's HTTP clients answer from.
    public var httpReplayPath: String?
    /// `--http-replay-ignore`.
    public var httpReplayIgnoring: HTTPReplayIgnoring

    /// The standard options of `parsed`; a bad value is a usage error.
    public init(_ parsed: ParsedArguments) throws(UsageError) {
        framing = Framing(rawValue: parsed.value("framing") ?? "auto")!
        manualClock = parsed.value("clock") == "manual"
        testControls = parsed.flag("test-controls")
        tracePath = parsed.value("trace")
        recordPath = parsed.value("record")
        logLevel = Logger.Level(rawValue: parsed.value("log-level") ?? "warning")!
        maxMessageBytes = try parsed.integer("max-message-bytes") ?? Self.defaultMaxMessageBytes
        guard maxMessageBytes >= 64 else {
            throw UsageError("--max-message-bytes must be at least 64, got \(maxMessageBytes)")
        }
        maxRecordBytes = try Self.bound("max-record-bytes", parsed, default: SessionRecorder.defaultMaxBytes)
        let total = try Self.bound("max-record-total-bytes", parsed, default: RecordingBudget.defaultLimit)
        recordBudget = total == RecordingBudget.defaultLimit ? .shared : RecordingBudget(limit: total)
        maxTraceBytes = try Self.bound("max-trace-bytes", parsed, default: TraceRecorder.defaultMaxBytes)
        httpReplayPath = parsed.value("http-replay")
        if httpReplayPath?.isEmpty == true { throw UsageError("--http-replay: the file is missing") }
        do throws(HTTPReplayError) {
            httpReplayIgnoring = try HTTPReplayIgnoring(list: parsed.value("http-replay-ignore") ?? "")
        } catch {
            throw UsageError("--http-replay-ignore: \(error.message)")
        }
        if parsed.value("http-replay-ignore") != nil, httpReplayPath == nil {
            throw UsageError("--http-replay-ignore applies to --http-replay only")
        }
    }

    /// The value of a bound in bytes (`--name`), at least 1024.
    private static func bound(_ name: String, _ parsed: ParsedArguments, default value: Int) throws(UsageError) -> Int {
        let given = try parsed.integer(name) ?? value
        guard given >= 1024 else { throw UsageError("--\(name) must be at least 1024 bytes, got \(given)") }
        return given
    }
}
