#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import EventLoop

/// The one writer of a connection's output: a thread that takes everything waiting in an
/// ``OutputQueue`` and writes it, framed, with as few `write(2)` calls as it can.
///
/// Each frame is written whole and frames never interleave, because this thread is the only one
/// that writes to the descriptor. While the descriptor blocks (a reader that stopped reading), the
/// queue keeps merging property changes, so the host thread never blocks on output.
/// `EPIPE` (the reader closed its end) ends writing: the queue is abandoned and `onClosed` runs.
public final class OutputWriter<Message: MergeableMessage>: @unchecked Sendable {
    public let queue: OutputQueue<Message>
    private let fd: Int32
    private let framingBox: FramingBox
    private let onClosed: @Sendable () -> Void
    private let observe: (@Sendable ([UInt8]) -> Void)?

    final class FramingBox: @unchecked Sendable {
        private let condition = Condition()
        private var value: Framing
        init(_ value: Framing) { self.value = value }
        var framing: Framing {
            get { condition.withLock { value } }
            set { condition.withLock { value = newValue } }
        }
    }

    /// - Parameters:
    ///   - framing: the output framing; for ``Framing/auto`` set ``framing`` once it is detected
    ///     (before the first reply), otherwise ndjson is written.
    ///   - observe: sees every body as it is written (for `--trace`), on the writer thread.
    public init(
        fd: Int32, framing: Framing, queue: OutputQueue<Message>,
        observe: (@Sendable ([UInt8]) -> Void)? = nil, onClosed: @escaping @Sendable () -> Void
    ) {
        self.fd = fd
        self.observe = observe
        self.queue = queue
        self.framingBox = FramingBox(framing)
        self.onClosed = onClosed
        // A pipe or socket is written without blocking, so a full output is seen (EAGAIN) and the
        // queue can merge changes while it lasts. Terminals and files, whose open description may
        // be shared with other processes, are left as they are and written blocking.
        var info = stat()
        if fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFIFO || (info.st_mode & S_IFMT) == S_IFSOCK {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        startThread { [self] in self.run() }
    }

    public var framing: Framing {
        get { framingBox.framing }
        set { framingBox.framing = newValue }
    }

    private func run() {
        var out: [UInt8] = []
        out.reserveCapacity(64 * 1024)
        while let bodies = queue.waitAndTakeAll() {
            let framing = framingBox.framing
            out.removeAll(keepingCapacity: true)
            for body in bodies {
                framing.frame(body, into: &out)
                observe?(body)
            }
            if !writeAll(out) {
                queue.abandon()
                onClosed()
                return
            }
            if out.capacity > 4 << 20 { out = []; out.reserveCapacity(64 * 1024) }
        }
    }

    /// Writes everything; while the output is full, marks the queue stalled (changes merge) and
    /// waits for room. False when the reader is gone (EPIPE or another error).
    private func writeAll(_ bytes: [UInt8]) -> Bool {
        var stalled = false
        defer { if stalled { queue.setStalled(false) } }
        return bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    if errno == EAGAIN || errno == EWOULDBLOCK {
                        if !stalled {
                            stalled = true
                            queue.setStalled(true)
                        }
                        var waiting = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                        _ = poll(&waiting, 1, -1)
                        continue
                    }
                    return false
                }
                offset += n
            }
            return true
        }
    }
}
