import NIOCore
import NIOWebSocket
import VMHostCore
import VMHostEventLoop
import VMHostWire
import WSCore

/// One WebSocket connection: its own ``Host`` (view-models, handles, subscriptions, locale) on the
/// host thread, fed one message per text frame, and a writer on the connection's NIO event loop.
///
/// Output goes host thread → NIO: the host queues replies, events and changes in its
/// ``OutputQueue`` as on stdio; a push lists the session as having output (once until its writer
/// is woken); the transport's idle hook wakes the writers of the sessions listed, not of every
/// session; the writer takes the output and writes one text frame per message. While the socket is
/// not writable (a page that stopped reading), the queue is marked stalled, so property changes
/// merge and only replies and events accumulate, up to ``WebSocketTransport/Options/maxPendingBytes``,
/// beyond which the session is closed. A slow page holds only its own writer: other sessions and
/// the host thread never wait for it.
@HostActor
final class WebSocketSession {
    let id: Int
    let host: Host
    let connection: Connection
    nonisolated let queue: OutputQueue<ChangedMessage>
    nonisolated let channel: any Channel
    /// Wakes the writer; holds at most one wake-up.
    nonisolated let wakeups: AsyncStream<Void>
    nonisolated let wake: AsyncStream<Void>.Continuation
    /// Messages received and not handled yet: the reader waits while too many are.
    nonisolated let credit = InboundCredit()
    var closed = false
    /// Listed among the sessions whose writers the idle hook wakes.
    var hasOutputListed = false
    /// What sees the session's traffic, if anything (``WebSocketTransport/Options/tapSession``).
    nonisolated let tap: SessionTap?

    init(id: Int, host: Host, maxMessageBytes: Int, channel: any Channel, tap: SessionTap? = nil) {
        self.id = id
        self.tap = tap
        self.host = host
        self.connection = Connection(host: host, framing: .ndjson, maxMessageBytes: maxMessageBytes)
        self.queue = host.outputQueue
        self.channel = channel
        (wakeups, wake) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        // Pushes come from the host thread (the session's host).
        queue.onPush { [weak self] in
            HostActor.assumeIsolated {
                guard let self, !self.hasOutputListed else { return }
                self.hasOutputListed = true
                SessionRegistry.withOutput.append(self)
            }
        }
    }

    /// Handles one text frame.
    func receive(_ bytes: [UInt8]) {
        defer { credit.handled() }
        guard !closed else { return }
        bytes.withUnsafeBytes { connection.receive(message: $0) }
    }

    /// Ends the session: cancels its commands, disposes its view-models, drops its output.
    func close() {
        guard !closed else { return }
        closed = true
        let requests = host.engine.pendingCount, viewModels = host.liveViewModelCount
        tap?.closing(queue.takeAll())
        host.cancelEverything()
        tap?.closed(queue.takeAll())
        SessionRegistry.logger.debug(
            "session \(id) closed: \(requests) request(s) cancelled; view-models alive \(viewModels), now \(host.liveViewModelCount)")
        connection.close()
        queue.abandon()
        wake.finish()
    }

    /// The writer, on the NIO side: takes what the host queued and writes it, a text frame per
    /// message, until the session closes. `observe` sees each body written (`--trace`).
    nonisolated func writeOutput(
        to outbound: WebSocketOutboundWriter, observe: (@Sendable ([UInt8]) -> Void)?
    ) async throws {
        for await _ in wakeups {
            while let bodies = queue.takeForProducer() {
                for body in bodies {
                    if !channel.isWritable { queue.setStalled(true) }
                    observe?(body)
                    let frame = WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(bytes: body))
                    try await outbound.write(.custom(frame))
                }
            }
            queue.setStalled(false)
        }
    }
}
