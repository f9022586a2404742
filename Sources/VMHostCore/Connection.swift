import VMHostEventLoop
import VMHostJSONRPC
import VMHostWire

/// One stream of bytes into a ``Host``: splits frames, feeds them to the engine one at a time, and
/// after each lets the work it started run (``EventLoop/drain()``) and flushes the changes.
///
/// Used by the stdio and WebSocket transports and by in-process tests alike, so both see the same order.
///
/// - Important: Call ``consume(_:)`` and ``finish()`` from the host thread outside any job
///   (an input handler or a closure posted with ``EventLoop/execute(_:)``).
@HostActor
public final class Connection {
    public let host: Host
    private var reader: FrameReader
    /// Called once the framing is known (for `auto`: once the first line shows whether it is a header).
    public var onFramingDetected: ((Framing) -> Void)?
    private var drainHook: Int?

    public init(host: Host, framing: Framing, maxMessageBytes: Int) {
        self.host = host
        self.reader = FrameReader(framing: framing, maxMessageBytes: maxMessageBytes)
        drainHook = EventLoop.shared.addDrainHook { [weak host] in host?.flush() }
    }

    /// Stops flushing after work (the connection is closed).
    public func close() {
        if let drainHook { EventLoop.shared.removeDrainHook(drainHook) }
        drainHook = nil
    }

    public var framing: Framing { reader.framing }

    /// Handles a chunk of input bytes.
    public func consume(_ bytes: UnsafeRawBufferPointer) {
        // The replies to one chunk of input are handed to the writer together (see OutputQueue.holdWakeups).
        host.outputQueue.holdWakeups()
        defer { host.outputQueue.releaseWakeups() }
        reader.consume(bytes) { event in handle(event) }
    }

    /// Handles one whole message, for a transport that delimits messages itself (a WebSocket text
    /// frame): no framing, and the same order and flushing as a frame read from a stream.
    public func receive(message bytes: UnsafeRawBufferPointer) {
        host.outputQueue.holdWakeups()
        defer { host.outputQueue.releaseWakeups() }
        handle(.frame(bytes))
    }

    /// Handles the end of input: a last unterminated ndjson line is still a message.
    public func finish() {
        reader.finish { event in handle(event) }
    }

    private func handle(_ event: FrameEvent) {
        switch event {
        case .framingDetected(let framing):
            onFramingDetected?(framing)
            return
        case .frame(let bytes): host.engine.receive(frame: bytes)
        case .oversized(let count, let limit): host.engine.receiveOversized(byteCount: count, limit: limit)
        case .badHeader(let problem): host.engine.receiveBadHeader(problem)
        }
        host.flush()
        EventLoop.shared.drain()
        host.flush()
    }
}
