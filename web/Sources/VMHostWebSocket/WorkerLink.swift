#if WebSocket
#if canImport(Glibc)
import Glibc
#endif
@_spi(Transport) import VMHostEventLoop

/// A worker's side of ``WorkerPool``: the connections its supervisor hands over, the message that
/// it is ready, its count of closed connections, and the app's memory shared by every worker.
///
/// Or, made by ``singleProcess(host:port:onListening:)``, the one worker of a server with no
/// supervisor (`vmhost-web --workers 0`): the process listens and serves its connections itself,
/// and starts no other process, so that a profiler or valgrind sees the whole server.
public final class WorkerLink: Sendable {
    /// Set in a worker's environment by its supervisor: the worker's number, from 1.
    public static let environmentName = "VMHOST_WEB_WORKER"
    /// The socket pair's end; the counters and the app's region follow it.
    static let firstDescriptor: Int32 = 3
    /// One closed-connection count (8 bytes) per worker.
    static let countersBytes = WorkerPool.maxWorkers * 8

    /// Where the connections come from.
    enum Source: Sendable {
        /// A supervisor's socket pair, and the counts of closed connections it reads.
        case supervisor(control: Int32, counters: SharedRegion)
        /// This process's own listening socket (blocking), its port, and what to call once serving.
        case listener(descriptor: Int32, port: Int, onListening: @Sendable (Int) -> Void)
    }

    /// The worker's number, from 1 (1 in a single process).
    public let index: Int
    /// The memory the app shares between workers (``WorkerPool/Options/appRegionBytes``), if any.
    public let appRegion: SharedRegion?
    let source: Source

    private init(index: Int, source: Source, appRegion: SharedRegion?) {
        self.index = index
        self.source = source
        self.appRegion = appRegion
    }

    /// Whether the server is this process alone (``singleProcess(host:port:onListening:)``): it
    /// takes its signals itself.
    public var isSingleProcess: Bool {
        if case .listener = source { return true }
        return false
    }

    /// The link of a server that is this process alone: listens on `host:port` (port 0 picks a
    /// free one) and serves every connection itself. `onListening` is called with the bound port
    /// once it serves. Throws when the address cannot be listened on.
    public static func singleProcess(host: String, port: Int, onListening: @escaping @Sendable (Int) -> Void) throws(WorkerError) -> WorkerLink {
        let listener = try WorkerPool.listen(host: host, port: port)
        // Accepted on a thread of its own, which waits in accept.
        _ = fcntl(listener.descriptor, F_SETFL, fcntl(listener.descriptor, F_GETFL) & ~O_NONBLOCK)
        return WorkerLink(
            index: 1, source: .listener(descriptor: listener.descriptor, port: listener.port, onListening: onListening),
            appRegion: nil)
    }

    /// This process's link when a supervisor started it, nil when none did. Throws when the
    /// environment says one did but the descriptors are not what a supervisor passes (the
    /// variable set by hand). `appRegionBytes` must be the supervisor's ``WorkerPool/Options/appRegionBytes``.
    public static func current(appRegionBytes: Int) throws(WorkerError) -> WorkerLink? {
        guard let value = getenv(environmentName) else { return nil }
        let text = String(cString: value)
        guard let index = Int(text), (1...WorkerPool.maxWorkers).contains(index) else {
            throw WorkerError("\(environmentName)=\(text.prefix(20)): not a worker's number")
        }
        var type: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        guard getsockopt(firstDescriptor, SOL_SOCKET, SO_TYPE, &type, &length) == 0, type == Int32(SOCK_SEQPACKET.rawValue) else {
            throw WorkerError("\(environmentName) is set, but descriptor \(firstDescriptor) is not a supervisor's socket: vmhost-web starts its workers itself")
        }
        let counters = try SharedRegion.attach(descriptor: firstDescriptor + 1, count: countersBytes)
        let appRegion = appRegionBytes > 0 ? try SharedRegion.attach(descriptor: firstDescriptor + 2, count: appRegionBytes) : nil
        let last = firstDescriptor + (appRegionBytes > 0 ? 2 : 1)
        for descriptor in firstDescriptor...last { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
        unsetenv(environmentName)
        return WorkerLink(index: index, source: .supervisor(control: firstDescriptor, counters: counters), appRegion: appRegion)
    }

    /// Tells the supervisor that this worker serves (in a single process: says where it listens).
    func ready() {
        switch source {
        case .supervisor(let control, _):
            _ = DescriptorPassing.send(DescriptorPassing.ready, descriptor: nil, over: control)
        case .listener(_, let port, let onListening):
            onListening(port)
        }
    }

    /// Counts a connection closed, for the supervisor's balance and caps.
    func connectionClosed() {
        guard case .supervisor(_, let counters) = source else { return }
        let offset = (index - 1) * 8
        _ = counters.withLock { data, _ in
            data.storeBytes(of: data.load(fromByteOffset: offset, as: UInt64.self) &+ 1, toByteOffset: offset, as: UInt64.self)
        }
    }

    /// A session was suspended (its connection closed, the session kept): the supervisor counts it
    /// as an open connection still, against `--max-connections`, until ``connectionClosed()``
    /// says that it resumed (its new connection is counted on its own) or ended.
    func sessionSuspended() {
        guard case .supervisor(_, let counters) = source else { return }
        let offset = (index - 1) * 8
        _ = counters.withLock { data, _ in
            data.storeBytes(of: data.load(fromByteOffset: offset, as: UInt64.self) &- 1, toByteOffset: offset, as: UInt64.self)
        }
    }

    /// A connection handed over: its descriptor, and whether it is to be refused (503).
    struct Handed: Sendable {
        let descriptor: Int32
        let refuse: Bool
    }

    /// The connections handed over, received on a thread of their own. When the supervisor is
    /// gone (its end closed), `onSupervisorGone` runs once, on that thread, and the stream ends.
    /// In a single process, the connections accepted.
    func connections(onSupervisorGone: @escaping @Sendable () -> Void) -> AsyncStream<Handed> {
        let (stream, continuation) = AsyncStream.makeStream(of: Handed.self)
        let control: Int32
        switch source {
        case .supervisor(let descriptor, _):
            control = descriptor
        case .listener(let listener, _, _):
            startThread { Self.accept(from: listener, into: continuation) }
            return stream
        }
        startThread {
            while true {
                switch DescriptorPassing.receive(over: control) {
                case .message(let byte, let descriptor?) where byte == DescriptorPassing.serve || byte == DescriptorPassing.refuse:
                    continuation.yield(Handed(descriptor: descriptor, refuse: byte == DescriptorPassing.refuse))
                case .message(_, let descriptor):
                    if let descriptor { close(descriptor) }
                case .nothing:
                    continue
                case .closed:
                    continuation.finish()
                    onSupervisorGone()
                    return
                }
            }
        }
        return stream
    }

    /// Accepts every connection of `listener`, for ever. Out of descriptors or memory (or any
    /// other failure but a connection aborted), it waits a little before trying again (the connections open are served meanwhile).
    private static func accept(from listener: Int32, into continuation: AsyncStream<Handed>.Continuation) {
        while true {
            let connection = Glibc.accept(listener, nil, nil)
            if connection >= 0 {
                _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
                continuation.yield(Handed(descriptor: connection, refuse: false))
                continue
            }
            switch errno {
            case EINTR, ECONNABORTED, EPROTO, EPERM:
                continue
            default:
                var pause = timespec(tv_sec: 0, tv_nsec: 10_000_000)
                nanosleep(&pause, nil)
            }
        }
    }
}
#endif
