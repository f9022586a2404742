#if WebSocket
import NIOCore
import Synchronization

/// What every connection shares: how many are open, how many may be, and whether the server is
/// stopping (then every new connection is refused).
final class ConnectionLimiter: Sendable {
    let maxConnections: Int
    private let open = Atomic<Int>(0)
    private let stopping = Atomic<Bool>(false)

    init(maxConnections: Int) {
        self.maxConnections = maxConnections
    }

    /// Counts a connection; false when it must be refused (over the cap, or stopping). Every call
    /// is paired with ``closed()``.
    func opened() -> Bool {
        let count = open.add(1, ordering: .relaxed).newValue
        return count <= maxConnections && !stopping.load(ordering: .relaxed)
    }

    func closed() { open.subtract(1, ordering: .relaxed) }

    /// A suspended session counts as a connection (``SessionTable/suspended(_:)``) until
    /// ``closed()`` says that it resumed or ended.
    func holdSuspended() { open.add(1, ordering: .relaxed) }

    func stop() { stopping.store(true, ordering: .relaxed) }

    var openCount: Int { open.load(ordering: .relaxed) }
}

/// What a connection's ``ConnectionGuard`` decided, for the code that serves it.
final class GuardOutcome: Sendable {
    private let refused = Atomic<Bool>(false)

    /// The connection was refused as it opened (``ConnectionLimiter``): there is nothing to serve.
    var refusedAtOpen: Bool { refused.load(ordering: .relaxed) }
    func refuseAtOpen() { refused.store(true, ordering: .relaxed) }
}

/// The first handler of every connection, on its raw bytes: what must hold before and around the
/// WebSocket handshake, whatever the HTTP and WebSocket code after it does.
///
/// - **Admission.** Over ``ConnectionLimiter/maxConnections`` (kept below the descriptor limit,
///   so that `accept` never fails for want of one), once the server is stopping, or when the
///   supervisor handed it over to be refused (over the server's caps, ``WorkerPool``), a new
///   connection is answered `503` and closed at once.
/// - **Timeout.** A connection that has not been answered its first request within `timeout`
///   (it never spoke, or sent half a request) is closed. After a first answer that is not `101`,
///   the HTTP server's own idle timeout takes over (configured with the same value).
/// - **Masks.** After `101`, every frame from the client must be masked (RFC 6455 §5.1): at the
///   first frame that is not, the connection is closed with 1002, and none of that frame or what
///   follows reaches the WebSocket code.
/// - **One answer to a refused handshake.** A refusal is written by ``HandshakeGate/refuse(channel:status:)``;
///   the `400` the upgrade code writes after it is dropped.
///
/// The bytes after the head of a handshake request are held until its answer is known, so that
/// the frame check starts at the first byte after the head, even when frames came in the same
/// write as the handshake.
final class ConnectionGuard: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    /// The longest request head looked at; a longer one closes the connection.
    static let maxHeadBytes = 64 * 1024
    /// Bytes held after a handshake's head until it is answered; more closes the connection.
    static let maxHeldBytes = 1024 * 1024

    private enum Phase {
        /// Reading the first request's head.
        case head
        /// The head of a handshake was read; later bytes are held until its answer.
        case handshake
        /// The first request was not a handshake: plain HTTP, nothing more to check here.
        case http
        /// Upgraded: frames are checked.
        case webSocket
        /// A refused handshake was answered: further output is dropped until the connection closes.
        case refusedHandshake
        /// Closing: input is ignored, output dropped.
        case closing
    }

    private let limiter: ConnectionLimiter
    private let outcome: GuardOutcome
    private let timeout: TimeAmount
    /// The supervisor handed the connection over to be refused.
    private let refuse: Bool
    private var phase = Phase.head
    private var counted = false
    private var head: [UInt8] = []
    private var held: [ByteBuffer] = []
    private var heldBytes = 0
    /// After `101`, until the bytes held are passed on: bytes read meanwhile queue behind them.
    private var releasing = false
    private var frames = FrameScanner()
    private var timer: Scheduled<Void>?

    init(limiter: ConnectionLimiter, outcome: GuardOutcome, timeout: TimeAmount, refuse: Bool = false) {
        self.limiter = limiter
        self.outcome = outcome
        self.timeout = timeout
        self.refuse = refuse
    }

    // MARK: Lifecycle

    func handlerAdded(context: ChannelHandlerContext) {
        if context.channel.isActive { start(context: context) }
    }

    func channelActive(context: ChannelHandlerContext) {
        start(context: context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        stopTimer()
        if counted {
            counted = false
            limiter.closed()
        }
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        stopTimer()
    }

    private func start(context: ChannelHandlerContext) {
        guard !counted, phase == .head else { return }
        // One the supervisor refused is not counted here: it never holds a session.
        let admitted = !refuse && limiter.opened()
        counted = !refuse
        guard admitted else {
            outcome.refuseAtOpen()
            phase = .closing
            // Closed at once: a refused connection must not hold a descriptor for long.
            let text = "HTTP/1.1 503 Service Unavailable\r\n" + SecurityHeaders.refusalLines
                + "Retry-After: 1\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            context.writeAndFlush(wrapOutboundOut(.byteBuffer(ByteBuffer(string: text)))).assumeIsolated().whenComplete { _ in
                context.close(promise: nil)
            }
            return
        }
        timer = context.eventLoop.assumeIsolated().scheduleTask(in: timeout) { [weak self] in
            guard let self, self.phase == .head || self.phase == .handshake else { return }
            self.phase = .closing
            context.close(promise: nil)
        }
    }

    private func stopTimer() {
        timer?.cancel()
        timer = nil
    }

    // MARK: Input

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var buffer = unwrapInboundIn(data)
        switch phase {
        case .head:
            readHead(context: context, buffer: &buffer)
        case .handshake:
            hold(context: context, buffer)
        case .http:
            context.fireChannelRead(data)
        case .webSocket where releasing:
            held.append(buffer)
        case .webSocket:
            forwardFrames(context: context, buffer)
        case .refusedHandshake, .closing:
            break
        }
    }

    /// Passes on the bytes of the first request's head; at its end, decides what follows.
    private func readHead(context: ChannelHandlerContext, buffer: inout ByteBuffer) {
        let bytes = buffer.readableBytesView
        let searchFrom = max(0, head.count - 3)
        head.append(contentsOf: bytes)
        guard let end = Self.endOfHead(head, from: searchFrom) else {
            if head.count > Self.maxHeadBytes {
                phase = .closing
                context.close(promise: nil)
                return
            }
            context.fireChannelRead(wrapInboundOut(buffer))
            return
        }
        // `end` counts from the start of the head; what of this buffer is head, and what follows.
        let inThisBuffer = bytes.count - (head.count - end)
        let isHandshake = Self.isUpgrade(head[..<end])
        head = []
        let rest = buffer.getSlice(at: buffer.readerIndex + inThisBuffer, length: bytes.count - inThisBuffer)
        if let part = buffer.readSlice(length: inThisBuffer) { context.fireChannelRead(wrapInboundOut(part)) }
        if isHandshake {
            phase = .handshake
            if let rest, rest.readableBytes > 0 { hold(context: context, rest) }
        } else {
            phase = .http
            if let rest, rest.readableBytes > 0 { context.fireChannelRead(wrapInboundOut(rest)) }
        }
    }

    private func hold(context: ChannelHandlerContext, _ buffer: ByteBuffer) {
        heldBytes += buffer.readableBytes
        guard heldBytes <= Self.maxHeldBytes else {
            phase = .closing
            context.close(promise: nil)
            return
        }
        held.append(buffer)
    }

    /// Passes on the frames up to the first unmasked one; there, closes with 1002.
    private func forwardFrames(context: ChannelHandlerContext, _ buffer: ByteBuffer) {
        var buffer = buffer
        guard let violation = frames.scan(buffer.readableBytesView) else {
            context.fireChannelRead(wrapInboundOut(buffer))
            return
        }
        if violation > 0, let valid = buffer.readSlice(length: violation) { context.fireChannelRead(wrapInboundOut(valid)) }
        phase = .closing
        // 1002 (protocol error), sent before the connection is closed; written here, on the raw
        // connection, since nothing of the frame reaches the WebSocket code.
        let close = ByteBuffer(bytes: [0x88, 0x02, 0x03, 0xEA])
        context.writeAndFlush(wrapOutboundOut(.byteBuffer(close))).assumeIsolated().whenComplete { _ in
            context.close(promise: nil)
        }
    }

    // MARK: Output

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch phase {
        case .head, .handshake:
            let status = Self.status(of: unwrapOutboundIn(data))
            stopTimer()
            if phase == .handshake {
                let released = held
                held = []
                heldBytes = 0
                if status == 101 {
                    phase = .webSocket
                    held = released
                    releasing = true
                    context.write(data, promise: promise)
                    // Passed on after the answer has gone down, outside this write, in order with
                    // what is read meanwhile.
                    context.eventLoop.assumeIsolated().execute { [self] in
                        releasing = false
                        let buffers = held
                        held = []
                        for buffer in buffers where phase == .webSocket { forwardFrames(context: context, buffer) }
                        context.fireChannelReadComplete()
                    }
                    return
                }
                phase = .refusedHandshake
            } else {
                phase = .http
            }
            context.write(data, promise: promise)
        case .refusedHandshake, .closing:
            promise?.succeed(())
        case .http, .webSocket:
            context.write(data, promise: promise)
        }
    }

    // MARK: Reading HTTP

    /// The index just past `\r\n\r\n` in `bytes`, looking from `start`.
    static func endOfHead(_ bytes: [UInt8], from start: Int) -> Int? {
        guard bytes.count >= 4 else { return nil }
        var index = start
        while index + 3 < bytes.count {
            if bytes[index] == 13, bytes[index + 1] == 10, bytes[index + 2] == 13, bytes[index + 3] == 10 { return index + 4 }
            index += 1
        }
        return nil
    }

    /// Whether a request head asks for a WebSocket upgrade (`Upgrade: websocket`, any case).
    static func isUpgrade(_ head: ArraySlice<UInt8>) -> Bool {
        let text = String(decoding: head, as: UTF8.self).lowercased()
        for line in text.split(separator: "\r\n").dropFirst() {
            guard let colon = line.firstIndex(of: ":"), line[..<colon].trimmingSpaces == "upgrade" else { continue }
            if line[line.index(after: colon)...].contains("websocket") { return true }
        }
        return false
    }

    /// The status of the answer that starts with `data` (`HTTP/1.1 101 …`), if it is one.
    static func status(of data: IOData) -> Int? {
        guard case .byteBuffer(let buffer) = data, let line = buffer.getString(at: buffer.readerIndex, length: min(buffer.readableBytes, 12)),
            line.hasPrefix("HTTP/1."), line.count == 12
        else { return nil }
        return Int(line.suffix(3))
    }
}

extension Substring {
    var trimmingSpaces: Substring {
        var text = self
        while text.first == " " || text.first == "\t" { text.removeFirst() }
        while text.last == " " || text.last == "\t" { text.removeLast() }
        return text
    }
}
#endif
