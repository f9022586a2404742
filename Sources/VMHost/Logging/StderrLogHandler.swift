import Logging
@_spi(Transport) import VMHostCore
@_spi(Transport) import VMHostEventLoop
@_spi(Transport) import VMHostJSONRPC
import VMHostRuntime
@_spi(Transport) import VMHostWire

/// Writes log lines to stderr through a queue and a writer thread, so logging never blocks the host.
/// When stderr stalls and more than ``limit`` lines wait, further lines are dropped. A line is at
/// most ``maxLineBytes`` long (a message may quote a method name as long as a whole message):
/// together, the two bound the memory a stalled stderr can hold.
@_spi(Transport)
public struct StderrLogHandler: LogHandler {
    static let queue = OutputQueue<PlainOnly>()
    static let limit = 10_000
    static let maxLineBytes = 1024
    static let writer = OutputWriter(fd: 2, framing: .ndjson, queue: queue, onClosed: {})

    /// The least severe level written.
    public var logLevel: Logger.Level
    /// Metadata written with every line.
    public var metadata: Logger.Metadata = [:]
    /// The logger's label, which starts every line.
    public let label: String

    /// A handler writing lines of `label` at `logLevel` and above.
    public init(logLevel: Logger.Level, label: String) {
        self.logLevel = logLevel
        self.label = label
    }

    /// One member of ``metadata``.
    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Queues the line of `event` (dropped while too many wait).
    public func log(event: LogEvent) {
        _ = Self.writer
        guard Self.queue.pendingCount < Self.limit else { return }
        var line = "\(label) \(event.level): \(event.message)"
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        if !merged.isEmpty {
            line += " " + merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
        Self.queue.push(Self.capped(Array(line.utf8)))
    }

    /// `line`, cut to at most ``maxLineBytes`` (at a character boundary) and marked with its length.
    static func capped(_ line: [UInt8]) -> [UInt8] {
        guard line.count > maxLineBytes else { return line }
        var cut = maxLineBytes - 32
        while cut > 0, line[cut] & 0xC0 == 0x80 { cut -= 1 }  // not inside a UTF-8 sequence
        return Array(line[..<cut]) + Array("… (cut, \(line.count) bytes)".utf8)
    }

    /// Waits a little (at most 200 ms) for the lines queued to be written.
    public static func flush() { _ = queue.waitUntilFlushed(nanoseconds: 200_000_000) }
}
