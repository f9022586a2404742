#if canImport(Glibc)
import Glibc
#endif
@_spi(Transport) import VMHostEventLoop

/// A worker's side of ``WorkerPool``: the connections its supervisor hands over, the message that
/// it is ready, its count of closed connections, and the app's memory shared by every worker.
public final class WorkerLink: Sendable {
    /// Set in a worker's environment by its supervisor: the worker's number, from 1.
    public static let environmentName = "VMHOST_WEB_WORKER"
    /// The socket pair's end; the counters and the app's region follow it.
    static let firstDescriptor: Int32 = 3
    /// One closed-connection count (8 bytes) per worker.
    static let countersBytes = WorkerPool.maxWorkers * 8

    /// The worker's number, from 1.
    public let index: Int
    /// The memory the app shares between workers (``WorkerPool/Options/appRegionBytes``), if any.
    public let appRegion: SharedRegion?
    let control: Int32
    let counters: SharedRegion

    private init(index: Int, control: Int32, counters: SharedRegion, appRegion: SharedRegion?) {
        self.index = index
        self.control = control
        self.counters = counters
        self.appRegion = appRegion
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
        return WorkerLink(index: index, control: firstDescriptor, counters: counters, appRegion: appRegion)
    }

    /// Tells the supervisor that this worker serves.
    func ready() {
        _ = DescriptorPassing.send(DescriptorPassing.ready, descriptor: nil, over: control)
    }

    /// Counts a connection closed, for the supervisor's balance and caps.
    func connectionClosed() {
        let offset = (index - 1) * 8
        _ = counters.withLock { data, _ in
            data.storeBytes(of: data.load(fromByteOffset: offset, as: UInt64.self) &+ 1, toByteOffset: offset, as: UInt64.self)
        }
    }

    /// A connection handed over: its descriptor, and whether it is to be refused (503).
    struct Handed: Sendable {
        let descriptor: Int32
        let refuse: Bool
    }

    /// The connections handed over, received on a thread of their own. When the supervisor is
    /// gone (its end closed), `onSupervisorGone` runs once, on that thread, and the stream ends.
    func connections(onSupervisorGone: @escaping @Sendable () -> Void) -> AsyncStream<Handed> {
        let (stream, continuation) = AsyncStream.makeStream(of: Handed.self)
        let control = control
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
}
