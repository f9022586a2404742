@_spi(Transport) import VMHostEventLoop
@_spi(Transport) import VMHostJSONRPC
@_spi(Transport) import VMHostWire

/// One stream of bytes into a ``Host``: splits frames, feeds them to the engine one at a time, and
/// after each lets the work it started run (``EventLoop/drain()``) and flushes the changes.
///
/// Used by the stdio and WebSocket transports and by in-process tests alike, so both see the same order.
///
/// Frames wait in a queue of their own between being read and being handled, and
/// ``betweenFrames`` runs after each one: the stdio transport reads more input there. The end of
/// input (``finish()``) means no more input, not stop: every frame read before it is handled as
/// usual, commands included, whenever the end was seen; what happens next is the transport's
/// (protocol/SPEC.md §7: the stdio server waits for ``Host/hasWorkInFlight`` to turn false).
///
/// - Important: Call ``consume(_:)`` and ``finish()`` from the host thread outside any job
///   (an input handler or a closure posted with ``EventLoop/execute(_:)``), or from
///   ``betweenFrames`` (then they only queue, and the frames are handled by the call running).
@HostActor
@_spi(Transport)
public final class Connection {
    /// The host the frames are fed to.
    package let host: Host
    private var reader: FrameReader
    /// Called once the framing is known (for `auto`: once the first line shows whether it is a header).
    package var onFramingDetected: ((Framing) -> Void)?
    /// Called after each frame is handled, while more wait or not (see the type's discussion).
    /// Read once per frame and called after the read: unchecked, as the queue below.
    @exclusivity(unchecked) package var betweenFrames: (() -> Void)?
    // The queue of frames is `@exclusivity(unchecked)`: no access to it calls out while it lasts
    // (a frame is copied out before it is handled), so none can overlap another (docs/Guide.md,
    // "Exclusivity checks").
    /// Frames read and not handled yet, from ``head`` on.
    @exclusivity(unchecked) private var waiting: [Waiting] = []
    @exclusivity(unchecked) private var head = 0
    /// The bytes of the frames waiting.
    @exclusivity(unchecked) package private(set) var waitingBytes = 0
    /// The bytes of every frame handled so far.
    @exclusivity(unchecked) package private(set) var handledBytes = 0
    @exclusivity(unchecked) private var handling = false

    private enum Waiting {
        case frame([UInt8])
        case oversized(byteCount: Int?, limit: Int)
        case badHeader(String)
    }

    /// A connection feeding `host`, reading `framing` with messages of at most `maxMessageBytes`.
    public init(host: Host, framing: Framing, maxMessageBytes: Int) {
        self.host = host
        self.reader = FrameReader(framing: framing, maxMessageBytes: maxMessageBytes)
        host.flushesAfterWork = true
    }

    /// Stops flushing after work (the connection is closed).
    public func close() {
        host.flushesAfterWork = false
    }

    /// The framing read (for `auto`, once detected).
    package var framing: Framing { reader.framing }

    /// Whether the end of input was reached (``finish()``).
    package var inputEnded: Bool { host.inputEnded }

    /// Handles a chunk of input bytes.
    package func consume(_ bytes: UnsafeRawBufferPointer) {
        reader.consume(bytes) { event in enqueue(event) }
        handleWaiting()
    }

    /// Handles one whole message, for a transport that delimits messages itself (a WebSocket text
    /// frame): no framing, and the same order and flushing as a frame read from a stream.
    public func receive(message bytes: UnsafeRawBufferPointer) {
        inOneTurn { host.engine.receive(frame: bytes) }
    }

    /// Handles one whole message parsed already (``ParsedFrame``, read with ``parsing``), as
    /// ``receive(message:)`` handles its text: for a transport that parses where it reads, so that
    /// the host thread only dispatches.
    public func receive(parsed frame: ParsedFrame) {
        inOneTurn { host.engine.receive(parsed: frame) }
    }

    /// Runs `handle` (one whole message) as a turn of the host, its output handed to the writer
    /// together at the end (``OutputQueue/holdWakeups()``).
    @inline(__always)
    private func inOneTurn(_ handle: () -> Void) {
        host.outputQueue.holdWakeups()
        defer { host.outputQueue.releaseWakeups() }
        let outer = host.inTurn
        host.inTurn = true
        handle()
        host.endTurn(outer: outer)
    }

    /// How a message is parsed for ``receive(parsed:)``: read once the session's trace and
    /// recording are attached (they change it), then used on any thread.
    public var parsing: ParsedFrame.Parsing { host.engine.parsing }

    /// Handles the end of input: a last unterminated ndjson line is still a message, and every
    /// frame still waiting is handled as usual. Then ``inputEnded`` is true.
    package func finish() {
        reader.finish { event in enqueue(event) }
        host.inputEnded = true
        handleWaiting()
    }

    private func enqueue(_ event: FrameEvent) {
        switch event {
        case .framingDetected(let framing):
            onFramingDetected?(framing)
        case .frame(let bytes):
            waiting.append(.frame(Array(bytes)))
            waitingBytes += bytes.count
        case .oversized(let count, let limit):
            waiting.append(.oversized(byteCount: count, limit: limit))
        case .badHeader(let problem):
            waiting.append(.badHeader(problem))
        }
    }

    /// Handles the frames waiting, in order, one at a time; a nested call (from ``betweenFrames``)
    /// leaves them to the running one.
    private func handleWaiting() {
        guard !handling else { return }
        handling = true
        defer { handling = false }
        // The replies to one chunk of input are handed to the writer together (see OutputQueue.holdWakeups).
        host.outputQueue.holdWakeups()
        defer { host.outputQueue.releaseWakeups() }
        while head < waiting.count {
            let next = waiting[head]
            waiting[head] = .badHeader("")
            head += 1
            handle(next)
            if head == waiting.count {
                waiting.removeAll(keepingCapacity: waiting.capacity <= 1024)
                head = 0
            } else if head >= 1024 && head * 2 >= waiting.count {
                waiting.removeFirst(head)
                head = 0
            }
            betweenFrames?()
        }
    }

    private func handle(_ next: Waiting) {
        let outer = host.inTurn
        host.inTurn = true
        defer { host.endTurn(outer: outer) }
        switch next {
        case .frame(let bytes):
            waitingBytes -= bytes.count
            handledBytes &+= bytes.count
            bytes.withBytes { host.engine.receive(frame: $0) }
        case .oversized(let count, let limit): host.engine.receiveOversized(byteCount: count, limit: limit)
        case .badHeader(let problem): host.engine.receiveBadHeader(problem)
        }
    }
}
