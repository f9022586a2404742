import Logging
import VMHostCore
import VMHostEventLoop
import VMHostJSONRPC
import VMHostRuntime
import VMHostWire

/// Writes log lines to stderr through a queue and a writer thread, so logging never blocks the host.
/// When stderr stalls and more than ``limit`` lines wait, further lines are dropped. A line is at
/// most ``maxLineBytes`` long (a message may quote a method name as long as a whole message):
/// together, the two bound the memory a stalled stderr can hold.
public struct StderrLogHandler: LogHandler {
    static let queue = OutputQueue<PlainOnly>()
    static let limit = 10_000
    static let maxLineBytes = 1024
    static let writer = OutputWriter(fd: 2, framing: .ndjson, queue: queue, onClosed: {})

    public var logLevel: Logger.Level
    public var metadata: Logger.Metadata = [:]
    public let label: String

    public init(logLevel: Logger.Level, label: String) {
        self.logLevel = logLevel
        self.label = label
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

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

    public static func flush() { _ = queue.waitUntilFlushed(nanoseconds: 200_000_000) }
}
