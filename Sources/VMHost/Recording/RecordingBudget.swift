#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization
@_spi(Transport) import VMHostCore
@_spi(Transport) import VMHostEventLoop
@_spi(Transport) import VMHostJSONRPC
@_spi(Transport) import VMHostWire

extension SessionRecorder {
    /// The options of the recording session's own files, and `--framing` (a transcript is ndjson;
    /// the messages are the same in any framing): never on an `args` line.
    package static let ownOptions: Set<String> = ["record", "trace", "framing"]

    /// The options bounding a recording or a trace, which a recording's `args` line leaves out
    /// with the recording's and the trace's own.
    public static let boundOptions: Set<String> = ["max-record-bytes", "max-record-total-bytes", "max-trace-bytes"]

    /// The default of `--max-record-bytes`: 64 MiB for one session's recording.
    public static let defaultMaxBytes = 64 * 1024 * 1024
}

/// The bytes every recording of a server may write together (`--max-record-total-bytes`), shared
/// by its ``SessionRecorder``s from any thread.
public final class RecordingBudget: Sendable {
    /// The default of `--max-record-total-bytes`: 1 GiB.
    public static let defaultLimit = 1024 * 1024 * 1024
    /// The budget of this process's recordings when none is given (the default limit).
    public static let shared = RecordingBudget(limit: defaultLimit)

    /// The bytes all recordings may write together.
    public let limit: Int
    private let used = Atomic<Int>(0)

    /// A budget of `limit` bytes.
    public init(limit: Int) { self.limit = limit }

    /// Takes `count` bytes, or nothing and false when fewer are left.
    func take(_ count: Int) -> Bool {
        var current = used.load(ordering: .relaxed)
        while true {
            guard current <= limit - count else { return false }
            let (exchanged, original) = used.compareExchange(
                expected: current, desired: current + count, ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
    }

    /// Counts `count` bytes written past the limit's check (the closing lines of a recording).
    func add(_ count: Int) { used.add(count, ordering: .relaxed) }
}
