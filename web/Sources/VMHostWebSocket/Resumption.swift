#if WebSocket
import NIOCore
import NIOWebSocket
import Synchronization
import WSCore
@_spi(Transport) import VMHostCore
@_spi(Transport) import VMHostEventLoop
import VMHostRuntime
@_spi(Transport) import VMHostWire

/// The connection a session writes to: its channel, who writes to it, and what a connection that
/// resumed a session writes first. A session has one for its life, or, when resumable, one per
/// connection that resumed it.
///
/// Who writes: the host thread itself, as a rule (``writeOrWake(direct:take:observe:)``): it hands
/// each turn's frames to the channel's event loop in one task with one flush; a control frame
/// (`$/session`, `$/ack`) is handed over as it is sent. A writer task, started for the purpose
/// (``WebSocketSession/writeOutput(link:observe:)``), writes what the host thread may not: output
/// while the socket cannot take more (it waits for the socket through hummingbird's writer,
/// marking the queue stalled) and the close once the session ended; then it gives the writing
/// back and ends. One at a time, under one lock: the host thread writes only while no writer
/// runs, and a writer woken again while it writes goes on with what was queued meanwhile, so the
/// frames reach the event loop in the order they were taken. No task waits for output while none
/// is owed: an idle session holds no writer.
final class SessionLink: Sendable {
    let channel: any Channel
    /// Set by the writer while the socket cannot take more (the page is not reading).
    let stalled = Atomic<Bool>(false)
    /// Once set, the writer closes the connection with it after writing what is queued.
    let ending = Mutex<(code: WebSocketErrorCode, reason: String)?>(nil)
    /// Who writes, and what the writer writes first.
    private let writing: Mutex<Writing>

    struct Writing {
        /// Whether the host thread writes (else a writer task runs, until it gives it back).
        var byHost = true
        /// The writer was woken again while it wrote: it goes on for another round.
        var rewoken = false
        /// Control frames sent while a writer runs, for it to write first.
        var control: [[UInt8]] = []
        /// Frames written again to a page that resumed, right after its `$/session`.
        var replay: [[UInt8]]
        /// hummingbird's writer of the connection, for the writer task (nil: none, in tests).
        var outbound: WebSocketOutboundWriter?
        /// The link is left (the connection dropped or was left for another, the session closed):
        /// nothing more is handed to the event loop (what was handed before is written before the
        /// close hummingbird writes once the connection's reader returns).
        var left = false
        /// The close is written, or the link left.
        var finished = false
        /// The connection's reader, waiting for the close to be written.
        var closeWaiter: CheckedContinuation<Void, Never>?
    }

    init(channel: any Channel, replay: [[UInt8]] = []) {
        self.channel = channel
        writing = Mutex(Writing(replay: replay))
    }

    /// The connection's hummingbird writer, for the writer task (before any output is owed).
    func attach(_ outbound: WebSocketOutboundWriter) {
        writing.withLock { $0.outbound = outbound }
    }

    /// Writes a control frame (from any thread), before any output taken after it: handed to the
    /// event loop at once while the host thread writes (after it, on a connection that resumed
    /// its session, the frames written again), else written first by the writer.
    func sendControl(_ body: [UInt8]) {
        writing.withLock { writing in
            guard writing.byHost else {
                writing.control.append(body)
                writing.rewoken = true
                return
            }
            let frames = [body] + writing.replay
            writing.replay = []
            hand(frames, &writing)
        }
    }

    /// Hands `frames` to the channel's event loop in one task, unless the link was left: written
    /// in order, one flush. Called while the writing is held: the event loop runs its tasks in the
    /// order given.
    private func hand(_ frames: [[UInt8]], _ writing: inout Writing) {
        guard !writing.left else { return }
        let channel = channel
        channel.eventLoop.execute {
            for body in frames {
                let frame = WebSocketFrame(fin: true, opcode: .text, data: channel.allocator.buffer(bytes: body))
                channel.write(frame, promise: nil)
            }
            channel.flush()
        }
    }

    /// On the host thread, at the end of a turn with output for this link: while the host thread
    /// writes, `direct` is true and the socket can take more, what `take` gives (until nil) is
    /// seen by `observe` in order and handed to the channel's event loop in one task (after the
    /// frames a resume writes again, if still owed). Else, when no writer runs, the writing is
    /// the writer's: true is returned, and the caller starts one (``WebSocketSession/writeOutput(link:observe:)``);
    /// when one runs, it goes on with what is queued.
    func writeOrWake(direct: Bool, take: () -> [[UInt8]]?, observe: (@Sendable ([UInt8]) -> Void)?) -> Bool {
        writing.withLock { writing -> Bool in
            guard writing.byHost else {
                writing.rewoken = true
                return false
            }
            guard direct, channel.isWritable else {
                writing.byHost = false
                return true
            }
            var taken: [[UInt8]] = []
            while let bodies = take() { taken += bodies }
            if let observe { for body in taken { observe(body) } }
            let frames = writing.replay + taken
            writing.replay = []
            if !frames.isEmpty { hand(frames, &writing) }
            return false
        }
    }

    /// In the writer, at the start of a round: the connection's hummingbird writer, and the
    /// control frames and frames written again it writes first. Being woken from now on makes
    /// it go on for one more round (``writerRoundDone()``).
    func writerRound() -> (outbound: WebSocketOutboundWriter?, first: [[UInt8]]) {
        writing.withLock { writing in
            writing.rewoken = false
            defer {
                writing.control = []
                writing.replay = []
            }
            return (writing.outbound, writing.control + writing.replay)
        }
    }

    /// In the writer, done with a round (everything taken is handed to hummingbird's writer):
    /// true when the writing is the host thread's again and the writer ends, false when it was
    /// woken meanwhile and goes on.
    func writerRoundDone() -> Bool {
        writing.withLock { writing in
            if writing.rewoken { return false }
            writing.byHost = true
            return true
        }
    }

    /// The close is written, or nothing more will be: the reader waiting for it goes on.
    func finish() {
        let waiter = writing.withLock { writing -> CheckedContinuation<Void, Never>? in
            writing.finished = true
            defer { writing.closeWaiter = nil }
            return writing.closeWaiter
        }
        waiter?.resume()
    }

    /// The connection's reader, once its session ended: returns when the writer wrote the close
    /// (or the link was left), so that hummingbird does not close the connection first.
    func closeWritten() async {
        await withCheckedContinuation { continuation in
            let now = writing.withLock { writing -> Bool in
                if writing.finished { return true }
                writing.closeWaiter = continuation
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// Whether the link was left (``leave()``).
    var hasLeft: Bool { writing.withLock { $0.left } }

    /// The link is left: the host thread hands nothing more to it (a writer's writes fail once
    /// hummingbird closed the connection), and its reader does not wait for a close.
    func leave() {
        writing.withLock { $0.left = true }
        finish()
    }
}

/// What a resumable session keeps so that a page that lost its connection gets the same session
/// back (protocol/SPEC.md §12, "Resume"): the log of what it wrote and what it received
/// (``ResumeLog``), and which connection is the session's now. Shared by the host thread, the
/// connection's reader and its writer.
final class Resumption: Sendable {
    /// How long a suspended session waits for its page.
    let grace: Duration
    /// The bytes of output kept for a page that may resume (``ResumeLog/maxBytes``, and what
    /// waits while it is suspended).
    let maxBytes: Int
    private struct State {
        var log: ResumeLog
        /// The connection the session reads and writes now; nil while suspended.
        var current: SessionLink?
        /// The page's frames counted when the last `$/ack` was sent to it.
        var acknowledged = 0
    }
    private let state: Mutex<State>
    /// A `$/ack` goes to the page after this many of its frames were received since the last.
    static let ackEvery = 16

    init(grace: Duration, maxBytes: Int) {
        self.grace = grace
        self.maxBytes = maxBytes
        state = Mutex(State(log: ResumeLog(maxBytes: maxBytes)))
    }

    /// The resumption of a session made again after a restart, for a page that received `written`
    /// frames, `received` of whose frames the session had received (``ResumeLog/init(maxBytes:restoredAt:received:)``).
    init(grace: Duration, maxBytes: Int, restoredAt written: Int, received: Int) {
        self.grace = grace
        self.maxBytes = maxBytes
        state = Mutex(State(log: ResumeLog(maxBytes: maxBytes, restoredAt: written, received: received)))
    }

    /// The page's frames received so far.
    var receivedCount: Int { state.withLock { $0.log.receivedCount } }

    func attach(_ link: SessionLink) {
        state.withLock { $0.current = link }
    }

    func detach() {
        state.withLock { $0.current = nil }
    }

    /// What `link`'s writer writes next, numbered in the log: nil when nothing is queued or `link`
    /// is no longer the session's connection (taking and numbering are one step, so a connection
    /// left for another never takes a frame the other should have written).
    func take(from queue: OutputQueue<ChangedMessage>, for link: SessionLink) -> [[UInt8]]? {
        state.withLock { state in
            guard state.current === link, let bodies = queue.takeForProducer() else { return nil }
            for body in bodies { state.log.append(body) }
            return bodies
        }
    }

    /// Counts a frame received on `link` and hands it on (`deliver`) while `link` is still the
    /// session's connection; false when it is not (the frame is not the session's). Every
    /// ``ackEvery`` frames, the page is told how many were received.
    func receive(on link: SessionLink, deliver: () -> Void) -> Bool {
        let ack: Int? = state.withLock { state in
            guard state.current === link else { return -1 }
            let count = state.log.received()
            deliver()
            guard count - state.acknowledged >= Self.ackEvery else { return nil }
            state.acknowledged = count
            return count
        }
        if ack == -1 { return false }
        if let ack { link.sendControl(Self.ackFrame(received: ack)) }
        return true
    }

    /// The page received `count` frames: forgotten. False when `count` is not one the session
    /// could have written.
    func acknowledge(_ count: Int) -> Bool {
        state.withLock { $0.log.acknowledge(count) != nil }
    }

    /// What resuming a page that received `received` frames gives `link`, made its connection: the
    /// frames to write again (nil: some were dropped or `received` is wrong, so a resync), the
    /// page's frames this session received, and the number of the next frame written.
    func resume(
        received: Int, resync: () -> Void, makeLink: ([[UInt8]]) -> SessionLink
    ) -> (link: SessionLink, resynced: Bool, receivedCount: Int, next: Int) {
        state.withLock { state in
            let frames = state.log.overflowed ? nil : state.log.frames(after: received)
            if frames == nil {
                resync()
                state.log.resynced()
            }
            let link = makeLink(frames ?? [])
            state.current = link
            state.acknowledged = state.log.receivedCount
            let next = (frames == nil ? state.log.written : received) + 1
            return (link, frames == nil, state.log.receivedCount, next)
        }
    }

    /// The output waiting for a suspended page passed its bound: it is dropped, and the page
    /// that resumes is sent the current state instead.
    func overflow() {
        state.withLock { $0.log.lose() }
    }

    /// `$/ack` telling the page how many of its frames were received.
    static func ackFrame(received: Int) -> [UInt8] {
        Array(#"{"jsonrpc":"2.0","method":"$/ack","params":{"received":\#(received)}}"#.utf8)
    }

    /// `$/session`: the token that resumes the session, its grace period, and, on a connection
    /// that resumed it, what was resumed.
    static func sessionFrame(token: String, grace: Duration, resumed: JSON?) -> [UInt8] {
        var params = JSONObject()
        params.append("token", .string(token))
        params.append("graceMs", .int(grace.milliseconds))
        if let resumed { params.append("resumed", resumed) }
        let message: JSON = .object(["jsonrpc": .string("2.0"), "method": .string("$/session"), "params": .object(params)])
        return message.serialized()
    }

    /// A new resume token: 32 bytes of the system's secure random source, base64url, after the
    /// number of the worker that holds the session (`3.q2…`), so that a supervisor can hand the
    /// connection that presents it to that worker.
    static func makeToken(worker: Int) -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        for _ in 0..<4 {
            var word = generator.next()
            for _ in 0..<8 {
                bytes.append(UInt8(truncatingIfNeeded: word))
                word >>= 8
            }
        }
        return "\(worker).\(base64URL(bytes))"
    }

    static func base64URL(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            let chunk = bytes[index..<min(index + 3, bytes.count)]
            var value = 0
            for byte in chunk { value = value << 8 | Int(byte) }
            value <<= 8 * (3 - chunk.count)
            for position in 0..<(chunk.count + 1) {
                out.append(alphabet[(value >> (18 - 6 * position)) & 63])
            }
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }
}

/// What a handshake's query asks of sessions (protocol/SPEC.md §12, "Resume"): nothing, a new
/// resumable session (`?resume=new`), or the session of a token (`?resume=TOKEN&received=N`).
enum ResumeRequest: Equatable {
    case none
    case new
    case resume(token: String, received: Int)

    /// Read from the query of `path` (`/rpc?resume=new`); a reason when malformed.
    static func parse(path: String) -> Result<ResumeRequest, Malformed> {
        guard let mark = path.firstIndex(of: "?") else { return .success(.none) }
        var resume: String?, received: String?
        for pair in path[path.index(after: mark)...].split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let value = parts.count == 2 ? String(parts[1]) : ""
            switch parts[0] {
            case "resume":
                guard resume == nil else { return .failure(Malformed("resume is given twice")) }
                resume = value
            case "received":
                guard received == nil else { return .failure(Malformed("received is given twice")) }
                received = value
            default: continue
            }
        }
        guard let resume else {
            return received == nil ? .success(.none) : .failure(Malformed("received is given without resume"))
        }
        if resume == "new" {
            return received == nil ? .success(.new) : .failure(Malformed("received is given with resume=new"))
        }
        guard (1...128).contains(resume.utf8.count),
            resume.utf8.allSatisfy({ $0 == 0x2E || $0 == 0x2D || $0 == 0x5F || (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) })
        else { return .failure(Malformed("resume is not a token this server gives")) }
        guard let received, let count = Int(received), count >= 0, String(count) == received else {
            return .failure(Malformed("resume=TOKEN needs received=N, the frames the page received (a whole number from 0)"))
        }
        return .success(.resume(token: resume, received: count))
    }

    struct Malformed: Error, Equatable {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }
}

extension Duration {
    /// Whole milliseconds, clamped to the range of `Int64`.
    var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        let (product, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        if overflow { return seconds < 0 ? .min : .max }
        return product.addingReportingOverflow(attoseconds / 1_000_000_000_000_000).overflow ? .max : product + attoseconds / 1_000_000_000_000_000
    }
}
#endif
