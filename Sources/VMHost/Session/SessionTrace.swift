#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization
@_spi(Transport) import VMHostCore
@_spi(Transport) import VMHostEventLoop
@_spi(Transport) import VMHostWire

/// `--trace FILE` of one session (stdio, in process): every message in and out appended as NDJSON
/// `{t, dir, msg}`, secrets redacted, as ``TraceRecorder`` writes it (its lines and its bound), by
/// a writer thread of its own that ends, with the file closed, when the session ends.
package final class SessionTrace: Sendable {
    private let queue = OutputQueue<PlainOnly>()
    private let writer: OutputWriter<PlainOnly>
    private let fd: Int32
    private let origin = EventLoop.monotonicNanoseconds()
    private let redaction: TraceRedaction
    private let maxBytes: Int
    private let written = Mutex<Int>(0)

    package init(fd: Int32, redaction: Redaction, maxBytes: Int = TraceRecorder.defaultMaxBytes) {
        self.fd = fd
        self.redaction = TraceRedaction(redaction)
        self.maxBytes = maxBytes
        writer = OutputWriter(fd: fd, framing: .ndjson, queue: queue, onClosed: {})
    }

    package func record(_ direction: String, _ message: JSON) {
        let line = TraceRecorder.line(direction, redaction.redact(message), origin: origin)
        if let lines = written.withLock({ TraceRecorder.admit(line, written: &$0, maxBytes: maxBytes, origin: origin) }) {
            for line in lines { queue.push(line) }
        }
    }

    package func recordOutgoing(_ body: [UInt8]) {
        if let message = try? JSON.parse(body) { record("out", message) }
    }

    /// Writes what is recorded (for at most `waiting` nanoseconds: a FIFO nobody reads keeps the
    /// rest) and ends the writer; the file is closed once everything was written.
    package func close(waiting: UInt64) {
        queue.close()
        if queue.waitUntilFlushed(nanoseconds: waiting) {
            closeDescriptor(fd)
        }
    }
}

private func closeDescriptor(_ fd: Int32) {
    #if canImport(Glibc)
    _ = Glibc.close(fd)
    #else
    _ = Darwin.close(fd)
    #endif
}
