#if WebSocket
import NIOCore
import NIOWebSocket
import Synchronization
@_spi(Transport) import VMHostCore
@_spi(Transport) import VMHostEventLoop
import VMHostRuntime
@_spi(Transport) import VMHostWire

/// The connection a session writes to: its channel, its writer's wake-ups, and the control frames
/// to write first. A session has one for its life, or, when resumable, one per connection that
/// resumed it.
final class SessionLink: Sendable {
    let channel: any Channel
    /// Wakes the writer; holds at most one wake-up.
    let wakeups: AsyncStream<Void>
    let wake: AsyncStream<Void>.Continuation
    /// Set by the writer while the socket cannot take more (the page is not reading).
    let stalled = Atomic<Bool>(false)
    /// Once set, the writer closes the connection with it after writing what is queued.
    let ending = Mutex<(code: WebSocketErrorCode, reason: String)?>(nil)
    /// Frames written again to a page that resumed, before anything new (after the control frames).
    let replay: [[UInt8]]
    /// `$/session` and `$/ack` frames to write before the next output.
    private let control = Mutex<[[UInt8]]>([])

    init(channel: any Channel, replay: [[UInt8]] = []) {
        self.channel = channel
        self.replay = replay
        (wakeups, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
    }

    /// Queues a control frame and wakes the writer.
    func sendControl(_ body: [UInt8]) {
        control.withLock { $0.append(body) }
        wake.yield()
    }

    func takeControl() -> [[UInt8]] {
        control.withLock { frames in
            defer { frames = [] }
            return frames
        }
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
