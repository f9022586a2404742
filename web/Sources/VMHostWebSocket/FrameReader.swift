#if WebSocket
import NIOCore
import NIOHTTP1
import NIOWebSocket
@_spi(Transport) import VMHostJSONRPC

/// Reads a session's messages where its connection's frames are decoded, on the connection's
/// event loop, and hands each to the worker's ``Inbox``: a message goes event loop → host thread
/// → event loop, with no task of the cooperative pool on its way; while the host thread idles,
/// the event loop takes its turn and answers the message itself (``FrameReceiver/pumpInbox()``),
/// and the next frame waits until the reply is written (a task queued behind it on this event
/// loop), so that the socket's writability is known when the next reply is written.
///
/// Placed in the pipeline right after the WebSocket frame decoder, before hummingbird's reader,
/// from the first frame on (``FrameReaderInstaller``). Text, continuation and binary frames are
/// this reader's: joined (``MessageAssembly``), checked (reserved bits, opcodes), parsed
/// (``ReceivedMessage``) and queued for the host thread, in order. Ping, pong and close frames go
/// on to hummingbird, which answers them (and sends its own pings); a close goes on only after
/// every message before it was queued.
///
/// **Bounds.** The reader reads on only while its session has room in the inbox (the inbox's
/// bounds, ``Inbox/hasRoom(_:orWhenThere:)``): otherwise it holds the channel's next read, and
/// the frames already decoded from the last read wait here, in order, until there is room. A
/// message of more than ``Inbox/Limits/parsedAloneBytes`` is parsed on a task of its own, once
/// the worker has room (``Inbox/reserveToParse(_:_:textBytes:)``), the event loop serving the
/// other connections meanwhile; the reader waits for it.
///
/// Until its session is open (``Handle/start(_:)``) the reader keeps what it receives and reads
/// no more. A refusal (a frame or message the protocol refuses) ends the session with its close
/// code (``FrameReceiver/refuse(_:_:)``); the frames after it are dropped, all but the page's control frames.
final class FrameReader<Receiver: FrameReceiver>: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias InboundOut = WebSocketFrame
    typealias OutboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    /// Where the messages go: a session, once open.
    struct Target: Sendable {
        let id: Int
        let receiver: Receiver
        let parsing: ParsedFrame.Parsing
        let inbox: Inbox<Receiver, ReceivedMessage>
        /// The session's link to this connection: once left (the session closed or suspended),
        /// nothing more read here is the session's.
        let link: SessionLink
        /// A resumable session's: counts each message received on the link, and says whether the
        /// link is still the session's (``Resumption/receive(on:deliver:)``).
        let resumption: Resumption?
    }

    /// The reader, for the connection's task (any thread).
    struct Handle: Sendable {
        fileprivate let bound: NIOLoopBound<FrameReader>

        /// Completed once nothing more will be queued: the input ended (a close, the connection's
        /// end) and every message received before it was queued.
        func drained() async {
            let future = bound.eventLoop.flatSubmit { bound.value.whenDrained() }
            try? await future.get()
        }

        /// The session is open: what was received is handed to it, and the reader reads on.
        func start(_ target: Target) {
            bound.eventLoop.execute { bound.value.start(target) }
        }

        /// No session will open (a resume refused): every message is dropped.
        func discard() {
            bound.eventLoop.execute { bound.value.discard() }
        }
    }

    private enum State {
        /// Its session is not open yet.
        case opening
        case reading
        /// Refused, or not the session's: messages are dropped.
        case discarding
    }

    let eventLoop: any EventLoop
    private var state = State.opening
    private var target: Target?
    private var assembly: MessageAssembly
    /// Frames received and not handled yet, in order (while waiting, or before the session
    /// opened), from `heldNext` on; emptied, storage and all, once all are handled: an idle
    /// session keeps none.
    private var held: [WebSocketFrame] = []
    private var heldNext = 0
    /// Waiting for room in the inbox, or for a large message's parse: the next read waits too.
    private var waiting = false
    /// A message was answered here: the next frame waits for the reply's write (a task of this
    /// event loop), the next read does not (what it brings is held).
    private var answering = false
    /// A read the channel asked for while the reader waited: made once it goes on.
    private var readHeld = false
    /// The page's close was received: what follows it is not the page's (RFC 6455 §5.5.1).
    private var closeReceived = false
    private var inputEnded = false
    /// A frame was passed on since the last read completed.
    private var passedOn = false
    private var context: ChannelHandlerContext?
    /// Made when the connection's task asks (``Handle/drained()``), at its end.
    private var done: EventLoopPromise<Void>?
    private var isDone = false
    /// Lets the reader go on, on its event loop: once the inbox has room (from the thread that
    /// made it), or once a reply written here was written.
    private var goOnLater: (@Sendable () -> Void)?

    init(eventLoop: any EventLoop, maxMessageBytes: Int) {
        self.eventLoop = eventLoop
        assembly = MessageAssembly(maxBytes: maxMessageBytes)
    }

    deinit {
        // Whoever still waits is not left waiting.
        if !isDone { done?.succeed() }
    }

    /// The reader's handle; on its event loop.
    var handle: Handle {
        Handle(bound: NIOLoopBound(self, eventLoop: eventLoop))
    }

    /// Succeeds once nothing more will be queued (``Handle/drained()``); on the event loop.
    func whenDrained() -> EventLoopFuture<Void> {
        if isDone { return eventLoop.makeSucceededVoidFuture() }
        if let done { return done.futureResult }
        let promise = eventLoop.makePromise(of: Void.self)
        done = promise
        return promise.futureResult
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        inputEnded = true
        finishIfDrained()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        guard state != .opening, !waiting, !answering, !holds else {
            held.append(frame)
            return
        }
        take(frame)
        finishIfDrained()
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        passedOn = false
        context.fireChannelReadComplete()
    }

    func channelInactive(context: ChannelHandlerContext) {
        inputEnded = true
        context.fireChannelInactive()
        finishIfDrained()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .inputClosed? = event as? ChannelEvent { inputEnded = true }
        context.fireUserInboundEventTriggered(event)
        finishIfDrained()
    }

    func read(context: ChannelHandlerContext) {
        guard state != .opening, !waiting, !holds else {
            readHeld = true
            return
        }
        context.read()
    }

    private func start(_ target: Target) {
        guard state == .opening, !isDone else { return }
        self.target = target
        state = .reading
        let bound = NIOLoopBound(self, eventLoop: eventLoop)
        goOnLater = { bound.eventLoop.execute { bound.value.goOn() } }
        goOn()
    }

    /// The reader could not be placed in the pipeline: it reads nothing, and the connection's
    /// task does not wait for it.
    fileprivate func notPlaced() {
        inputEnded = true
        finishIfDrained()
    }

    private func discard() {
        if state == .opening { state = .discarding }
        goOn()
    }

    /// Handles the frames held, in order, until one makes the reader wait; then makes the read
    /// held back, if any.
    private func goOn() {
        waiting = false
        answering = false
        while !waiting, !answering, let frame = nextHeld() { take(frame) }
        guard !waiting, !answering else { return }
        if passedOn, let context {
            passedOn = false
            context.fireChannelReadComplete()
        }
        if readHeld, let context {
            readHeld = false
            context.read()
        }
        finishIfDrained()
    }

    /// Whether frames are held.
    private var holds: Bool { heldNext < held.count }

    /// The first frame held, taken.
    private func nextHeld() -> WebSocketFrame? {
        guard holds else { return nil }
        let frame = held[heldNext]
        heldNext += 1
        if heldNext == held.count {
            held = []
            heldNext = 0
        }
        return frame
    }

    /// Takes a frame: a control frame is passed on, a data frame joined to its message.
    private func take(_ frame: WebSocketFrame) {
        let kind: MessageAssembly.Kind
        switch frame.opcode {
        case .text: kind = .text
        case .binary: kind = .binary
        case .continuation: kind = .continuation
        case .ping, .pong:
            pass(frame)
            return
        case .connectionClose:
            closeReceived = true
            pass(frame)
            return
        default:
            if state == .reading, !closeReceived { refuse(.protocolError, "a frame with a reserved opcode") }
            return
        }
        guard state == .reading, !closeReceived, let target else { return }
        guard !frame.rsv1, !frame.rsv2, !frame.rsv3 else {
            refuse(.protocolError, "a frame with reserved bits set (no extension was agreed)")
            return
        }
        switch assembly.add(kind, fin: frame.fin, data: frame.unmaskedData.readableBytesView) {
        case .incomplete:
            return
        case .refused(let code, let reason):
            refuse(code, reason)
        case .text(let bytes):
            receive(bytes, target)
        }
    }

    /// Passes a control frame on to hummingbird's reader.
    private func pass(_ frame: WebSocketFrame) {
        guard let context else { return }
        passedOn = true
        context.fireChannelRead(wrapInboundOut(frame))
    }

    private func refuse(_ code: WebSocketErrorCode, _ reason: String) {
        state = .discarding
        target?.receiver.refuse(code, reason)
    }

    private func receive(_ bytes: [UInt8], _ target: Target) {
        if let resumption = target.resumption, let count = AckFrame.received(in: bytes) {
            if !resumption.acknowledge(count) { refuse(.policyViolation, "$/ack of frames never sent") }
            return
        }
        guard bytes.count > target.inbox.limits.parsedAloneBytes else {
            queue(ReceivedMessage(bytes, parsing: target.parsing), target)
            return
        }
        waiting = true
        let bound = NIOLoopBound(self, eventLoop: eventLoop)
        Task {
            await target.inbox.reserveToParse(target.id, target.receiver, textBytes: bytes.count)
            let message = ReceivedMessage(bytes, parsing: target.parsing)
            bound.eventLoop.execute { bound.value.parsed(message, target) }
        }
    }

    /// A large message, parsed on its task.
    private func parsed(_ message: consuming ReceivedMessage, _ target: Target) {
        // Nothing was handled meanwhile (the reader waited): it is the session's next message.
        waiting = false
        queue(message, target)
        if !waiting { goOn() }
    }

    /// Queues `message` for the host thread; waits when its session has no room left.
    private func queue(_ message: consuming ReceivedMessage, _ target: Target) {
        var pump = false
        if let resumption = target.resumption {
            let ours = resumption.receive(on: target.link) { pump = target.inbox.append(target.id, target.receiver, message) }
            // The session was resumed on another connection, or closed: nothing more here is its.
            if !ours { state = .discarding }
        } else if target.link.hasLeft {
            // The session closed (its inbox forgotten): nothing more here is its.
            state = .discarding
        } else {
            pump = target.inbox.append(target.id, target.receiver, message)
        }
        if pump, target.receiver.pumpInbox() {
            // Answered here: the reply waits on this event loop's queue of tasks. The next frame
            // waits behind it, so that the socket's writability is known when the next reply is
            // written: a page that stopped reading is then written no more than the socket takes,
            // and its replies wait in the session's queue, within its bound (SPEC §10), not here.
            // The next read is made all the same (what it brings is held, and the read after it
            // waits): the socket stays registered for reading.
            answering = true
            goOnLater?()
            return
        }
        if let goOnLater, !target.inbox.hasRoom(target.id, orWhenThere: goOnLater) { waiting = true }
    }

    private func finishIfDrained() {
        guard !isDone, inputEnded || closeReceived, !holds, !waiting, !answering else { return }
        isDone = true
        // Nothing more is queued: the session is no longer held here (the reader lives as long
        // as its channel's pipeline).
        target = nil
        goOnLater = nil
        done?.succeed()
    }
}

/// What a ``FrameReader`` hands its messages to: a session.
protocol FrameReceiver: AnyObject, Sendable {
    /// Runs the inbox's pump (its messages are queued): on the calling thread when the host
    /// thread is idle (true), else posted to it (false).
    func pumpInbox() -> Bool
    /// Ends the session, refused: what was queued before is answered, then the connection is
    /// closed with `code`.
    func refuse(_ code: WebSocketErrorCode, _ reason: String)
}

/// Placed last in the HTTP pipeline of a handshake about to be accepted: once the upgrade is
/// complete (the WebSocket handlers in place, before any frame is read), puts its
/// ``FrameReader`` right after the frame decoder and leaves.
final class FrameReaderInstaller<Receiver: FrameReceiver>: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny
    let reader: FrameReader<Receiver>

    init(_ reader: FrameReader<Receiver>) {
        self.reader = reader
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .upgradeComplete? = event as? HTTPServerUpgradeEvents {
            do {
                let decoder = try context.pipeline.syncOperations.context(handlerType: ByteToMessageHandler<WebSocketFrameDecoder>.self)
                try context.pipeline.syncOperations.addHandler(reader, position: .after(decoder.handler))
            } catch {
                // No reader, no session: the connection is closed, and its task does not wait.
                reader.notPlaced()
                context.close(promise: nil)
            }
            context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
        }
        context.fireUserInboundEventTriggered(event)
    }
}
#endif
