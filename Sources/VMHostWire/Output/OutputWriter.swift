#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import VMHostEventLoop

/// The one writer of a connection's output: a thread that takes everything waiting in an
/// ``OutputQueue`` and writes it, framed, with as few `write(2)` calls as it can.
///
/// Each frame is written whole and frames never interleave, because this thread is the only one
/// that writes to the descriptor. While the descriptor blocks (a reader that stopped reading), the
/// queue keeps merging property changes, so the host thread never blocks on output.
/// `EPIPE` (the reader closed its end) ends writing: the queue is abandoned and `onClosed` runs.
///
/// With `producerWrites` (and a pipe or socket), the producing thread writes instead: it calls
/// ``flush()`` at its quiet points (the host loop, before it waits for input), which writes
/// everything queued without blocking. Only when the output is full does the rest go to the
/// thread, which waits for room while the queue merges changes. A request and its reply then cost
/// no thread hand-off, and the thread is started only when first needed: at the first hand-off,
/// or at ``OutputQueue/close()`` to write what is left.
package final class OutputWriter<Message: MergeableMessage>: @unchecked Sendable {
    /// What it writes.
    package let queue: OutputQueue<Message>
    private let fd: Int32
    private let framingBox: FramingBox
    private let onClosed: @Sendable () -> Void
    private let observe: (@Sendable ([UInt8]) -> Void)?
    /// The producer writes (see the type's discussion); false for terminals and files.
    package let producerWrites: Bool
    /// The producer's framing buffer; used only by ``flush()``, on the producer's thread.
    private var producerBuffer: [UInt8] = []

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
    ///   - observe: sees every body as it is written (for `--trace`), on the thread that writes it.
    ///   - producerWrites: let the producer write at its quiet points (``flush()``), for a pipe or
    ///     socket; ignored for other descriptors, which the thread writes blocking.
    package init(
        fd: Int32, framing: Framing, queue: OutputQueue<Message>, producerWrites: Bool = false,
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
        let pipeOrSocket = fstat(fd, &info) == 0
            && ((info.st_mode & S_IFMT) == S_IFIFO || (info.st_mode & S_IFMT) == S_IFSOCK)
        if pipeOrSocket {
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        self.producerWrites = producerWrites && pipeOrSocket
        if self.producerWrites {
            // The thread starts when the output first fills, or at the close.
            queue.writeOnProducerThread { [self] in startThread { [self] in self.run() } }
            producerBuffer.reserveCapacity(64 * 1024)
        } else {
            startThread { [self] in self.run() }
        }
    }

    /// The framing written (set once ``Framing/auto`` has been decided).
    package var framing: Framing {
        get { framingBox.framing }
        set { framingBox.framing = newValue }
    }

    /// Writes everything queued, without blocking, on the calling (producer's) thread; what the
    /// output cannot take now goes to the writer thread. Call it from one thread only, at points
    /// where a burst of messages is complete. Does nothing unless ``producerWrites``.
    package func flush() {
        guard producerWrites else { return }
        while let bodies = queue.takeForProducer() {
            let framing = framingBox.framing
            producerBuffer.removeAll(keepingCapacity: true)
            for body in bodies {
                framing.frame(body, into: &producerBuffer)
                observe?(body)
            }
            guard let written = writeWhatFits(producerBuffer, from: 0) else {
                queue.abandon()
                onClosed()
                return
            }
            if written < producerBuffer.count {
                queue.handOff(Array(producerBuffer[written...]))
                break
            }
        }
        if producerBuffer.capacity > 4 << 20 { producerBuffer = []; producerBuffer.reserveCapacity(64 * 1024) }
    }

    private func run() {
        var out: [UInt8] = []
        out.reserveCapacity(64 * 1024)
        while let (framed, bodies) = queue.waitAndTake() {
            let framing = framingBox.framing
            out.removeAll(keepingCapacity: true)
            out.append(contentsOf: framed)
            for body in bodies {
                framing.frame(body, into: &out)
                observe?(body)
            }
            if !writeAll(out) {
                queue.abandon()
                onClosed()
                return
            }
            // The output took it all: changes stop merging until it is full again.
            if producerWrites { queue.setStalled(false) }
            if out.capacity > 4 << 20 { out = []; out.reserveCapacity(64 * 1024) }
        }
    }

    /// Writes everything; while the output is full, marks the queue stalled (changes merge) and
    /// waits for room. False when the reader is gone (EPIPE or another error).
    private func writeAll(_ bytes: [UInt8]) -> Bool {
        var stalled = false
        defer { if stalled { queue.setStalled(false) } }
        var offset = 0
        while offset < bytes.count {
            guard let written = writeWhatFits(bytes, from: offset) else { return false }
            offset = written
            if offset < bytes.count {
                if !stalled {
                    stalled = true
                    queue.setStalled(true)
                }
                var waiting = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                _ = poll(&waiting, 1, -1)
            }
        }
        return true
    }

    /// Writes `bytes` from `offset` on until done or the output is full (EAGAIN); returns the offset
    /// reached, or nil when the reader is gone (EPIPE or another error).
    private func writeWhatFits(_ bytes: [UInt8], from offset: Int) -> Int? {
        bytes.withUnsafeBytes { raw in
            var offset = offset
            while offset < raw.count {
                let n = write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n >= 0 { offset += n; continue }
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK { break }
                return nil
            }
            return offset
        }
    }
}
