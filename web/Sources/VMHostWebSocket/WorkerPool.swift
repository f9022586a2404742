#if WebSocket
#if canImport(Glibc)
import Glibc
#endif
import Logging
import NIOCore
import Synchronization
@_spi(Transport) import VMHost

/// The server as processes: a supervisor, which holds the listening socket, and `workers` worker
/// processes, each serving its own sessions on its own host thread (protocol/SPEC.md §12,
/// "Workers").
///
/// The supervisor accepts every connection and hands it to the worker holding the fewest open
/// connections (the lowest-numbered on a tie), or a resume to the worker holding its session
/// (``FirstLine``), over a socket pair (`SCM_RIGHTS`); it never reads from a connection, it only
/// peeks at its request line. A worker is this same executable, started again with the same arguments and
/// ``WorkerLink/environmentName`` set; it reports when it is ready to serve, and counts the
/// connections it closed in memory the processes share (``SharedRegion``), which the supervisor
/// reads to balance.
///
/// - **Start.** The first worker is started alone (a usage error of the app, a state directory
///   refused, a trace file that cannot be opened end it with its own message and status, which
///   the supervisor then exits with); once it is ready, the others; once every one is, `onListening`.
/// - **A worker that ends** unasked (killed, crashed) loses its own sessions, no other's: the
///   supervisor logs it and starts another in its place at once (one that ends before it is ready
///   is tried again a second later).
/// - **Caps.** Past ``Options/maxConnections`` open connections in all, or when the least busy
///   worker holds ``Options/maxConnectionsPerWorker``, or once stopping, a connection is handed
///   over to be answered 503 and closed (``ConnectionGuard``).
/// - **Signals.** At the first SIGTERM or SIGINT every worker is told to stop (SIGTERM: each ends
///   its sessions with 1001, as the server does alone) and the supervisor exits 0 once none is
///   left, or a second after the signal, ending those left; at a second signal it ends them and
///   exits at once. Ending a worker is SIGUSR1 (it exits at once, writing what it owes: a
///   recording's end, its trace), then SIGKILL if it still runs 0.3 s later. A worker takes its
///   first signal only: one sent to the whole process group as well as by the supervisor does not
///   end it early.
/// - **A supervisor that is gone** (killed): each worker sees its socket pair closed and stops as at
///   a signal.
public enum WorkerPool {
    public struct Options: Sendable {
        public var workers: Int
        /// The address to listen on (`127.0.0.1`, `::1`, a name); port 0 picks a free port.
        public var host: String
        public var port: Int
        /// Connections open at once in every worker together; nil: no cap but each worker's.
        public var maxConnections: Int?
        /// Connections one worker may hold at once (by its descriptor limit).
        public var maxConnectionsPerWorker: Int
        /// Bytes of the app's memory shared by every worker (``WorkerLink/appRegion``); 0 for none.
        public var appRegionBytes: Int
        /// Whether resumable sessions keep their screens in `--session-dir`: a worker that ends
        /// leaves them there for the next worker that takes their pages.
        public var keepsSessions = false

        public init(workers: Int, host: String, port: Int, maxConnections: Int?, maxConnectionsPerWorker: Int, appRegionBytes: Int = 0) {
            self.workers = workers
            self.host = host
            self.port = port
            self.maxConnections = maxConnections
            self.maxConnectionsPerWorker = maxConnectionsPerWorker
            self.appRegionBytes = appRegionBytes
        }
    }

    /// The most workers of one server.
    public static let maxWorkers = 1024
    /// The cores this process may run on (its CPU affinity and its cgroup's quota).
    public static var coreCount: Int { System.coreCount }
    /// Backlog of the listening socket.
    static let backlog: Int32 = 1024
    /// How long a worker that ended before it was ready waits before it is tried again.
    static let retryNanoseconds: UInt64 = 1_000_000_000
    /// How long a worker told to exit at once (a second signal) has before it is killed.
    static let exitNanoseconds: UInt64 = 300_000_000

    /// Binds the listening socket, starts the workers, and supervises them until a signal ends the
    /// process. `onListening` is called with the bound port once every worker is ready. Throws
    /// when the address cannot be listened on or the workers cannot be started.
    public static func supervise(options: Options, logger: Logger, onListening: @escaping @Sendable (Int) -> Void) throws(WorkerError) -> Never {
        // A closed stderr must not end the supervisor (its workers get the default back).
        signal(SIGPIPE, SIG_IGN)
        let listener = try listen(host: options.host, port: options.port)
        let supervisor = try Supervisor(options: options, listener: listener.descriptor, logger: logger)
        ServerShutdown.install(
            stop: { supervisor.stop() },
            beforeExit: { supervisor.killAll() })
        supervisor.run(port: listener.port, onListening: onListening)
    }

    /// A listening TCP socket on `host:port`, non-blocking, and the port it was bound to.
    static func listen(host: String, port: Int) throws(WorkerError) -> (descriptor: Int32, port: Int) {
        let address: SocketAddress
        do {
            address = try SocketAddress.makeAddressResolvingHost(host, port: port)
        } catch {
            throw WorkerError("cannot listen on \(host):\(port): \(error)")
        }
        let descriptor = socket(address.protocol.rawValue, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw WorkerError("cannot listen on \(host):\(port): \(WorkerError.errnoText())") }
        var one: Int32 = 1
        _ = setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        let bound = address.withSockAddr { pointer, size in bind(descriptor, pointer, socklen_t(size)) }
        guard bound == 0, Glibc.listen(descriptor, backlog) == 0 else {
            let text = WorkerError.errnoText()
            close(descriptor)
            throw WorkerError("cannot listen on \(host):\(port): \(text)")
        }
        _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        let named = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
        }
        var boundPort = port
        if named == 0 {
            boundPort = withUnsafeBytes(of: storage) { bytes in
                // sin_port and sin6_port are both at offset 2, in network order.
                Int(UInt16(bytes[2]) << 8 | UInt16(bytes[3]))
            }
        }
        return (descriptor, boundPort)
    }
}

/// The supervisor's state: the workers' slots, on its event thread; the processes, also under a
/// lock for the signal thread.
final class Supervisor: Sendable {
    struct Slot {
        var pid: pid_t = 0
        /// The supervisor's end of the socket pair; -1 when the worker is gone.
        var control: Int32 = -1
        var ready = false
        var everReady = false
        /// Connections handed to this worker since it started; it counts those it closed.
        var passed: UInt64 = 0
        /// When to try again a worker that ended before it was ready.
        var retryAt: UInt64?
    }

    /// The connections a worker holds open (suspended sessions included): the connections handed
    /// to it less its count of closed ones, both counted modulo 2^64. A session's suspension takes
    /// one off the closed count (``WorkerLink/sessionSuspended()``), on the host thread, and its
    /// connection's close adds one, on the event loop, in either order: the closed count may wrap
    /// below zero for a moment, and the difference is still the count.
    static func openConnections(passed: UInt64, closed: UInt64) -> Int {
        Int(clamping: max(0, Int64(bitPattern: passed &- closed)))
    }

    let options: WorkerPool.Options
    let listener: Int32
    let logger: Logger
    /// Each worker's count of closed connections (``WorkerLink/connectionClosed()``).
    let counters: SharedRegion
    let appRegion: SharedRegion?
    /// Written to wake the event thread (a signal).
    let wakeRead: Int32
    let wakeWrite: Int32

    /// The processes, for the signal thread, and whether the server is stopping.
    struct Processes {
        var pids: [pid_t]
        var stopping = false
    }
    let processes: Mutex<Processes>
    let slots: Mutex<[Slot]>

    init(options: WorkerPool.Options, listener: Int32, logger: Logger) throws(WorkerError) {
        self.options = options
        self.listener = listener
        self.logger = logger
        counters = try SharedRegion.create(count: WorkerLink.countersBytes)
        appRegion = options.appRegionBytes > 0 ? try SharedRegion.create(count: options.appRegionBytes) : nil
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else { throw WorkerError("cannot make a pipe: \(WorkerError.errnoText())") }
        for end in pipeEnds {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        wakeRead = pipeEnds[0]
        wakeWrite = pipeEnds[1]
        processes = Mutex(Processes(pids: Array(repeating: 0, count: options.workers)))
        slots = Mutex(Array(repeating: Slot(), count: options.workers))
    }

    /// The first signal: every worker is told to stop; the event thread exits once none is left.
    func stop() {
        let pids = processes.withLock { state -> [pid_t] in
            state.stopping = true
            return state.pids.filter { $0 > 0 }
        }
        logger.notice("stopping: \(pids.count) worker(s) to stop")
        for pid in pids { kill(pid, SIGTERM) }
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
    }

    /// Before the process exits (a second signal, or the end of the grace): tells the workers left
    /// to exit at once (SIGUSR1: each writes what it owes before exiting, as a server alone does at
    /// a second signal: a recording's end, its trace), and kills those still running
    /// ``exitNanoseconds`` later.
    func killAll() {
        let pids = processes.withLock { state -> [pid_t] in
            state.stopping = true
            return state.pids.filter { $0 > 0 }
        }
        for pid in pids { kill(pid, SIGUSR1) }
        let deadline = SupervisorClock.nanoseconds() + WorkerPool.exitNanoseconds
        var left = pids.filter(Self.running)
        while !left.isEmpty, SupervisorClock.nanoseconds() < deadline {
            // Not reaped here (the event thread reaps): a worker that exited is a zombie until then.
            var pause = timespec(tv_sec: 0, tv_nsec: 2_000_000)
            nanosleep(&pause, nil)
            left = left.filter(Self.running)
        }
        for pid in left { kill(pid, SIGKILL) }
    }

    /// Whether `pid` still runs: neither gone nor exited (a zombie, not yet reaped).
    static func running(_ pid: pid_t) -> Bool {
        let fd = open("/proc/\(pid)/stat", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 512)
        let count = read(fd, &buffer, buffer.count)
        guard count > 0, let paren = buffer[..<count].lastIndex(of: UInt8(ascii: ")")), paren + 2 < count else { return false }
        // "pid (comm) S ...": the state follows the last parenthesis.
        return buffer[paren + 2] != UInt8(ascii: "Z")
    }

    var stopping: Bool { processes.withLock { $0.stopping } }

    // MARK: The event thread

    func run(port: Int, onListening: @Sendable (Int) -> Void) -> Never {
        // The first worker alone: what is wrong with the app's options, it says once.
        var started = false
        var spawned = 1
        // Accepting waits a little after the system ran out of descriptors.
        var acceptAfter: UInt64 = 0
        // Connections accepted whose request line has not arrived yet (``FirstLine``).
        var waiting: [(descriptor: Int32, deadline: UInt64)] = []
        start(0)
        while true {
            let now = SupervisorClock.nanoseconds()
            var descriptors: [pollfd] = [pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)]
            let current = slots.withLock { $0 }
            let anyReady = current.contains { $0.ready } && now >= acceptAfter
            if anyReady { descriptors.append(pollfd(fd: listener, events: Int16(POLLIN), revents: 0)) }
            var owners: [Int] = []
            for (index, slot) in current.enumerated() where slot.control >= 0 {
                descriptors.append(pollfd(fd: slot.control, events: Int16(POLLIN), revents: 0))
                owners.append(index)
            }
            let waitingOffset = descriptors.count
            for connection in waiting {
                descriptors.append(pollfd(fd: connection.descriptor, events: Int16(POLLIN), revents: 0))
            }
            // A worker gone but not yet reaped, or one to try again: look again soon.
            var timeout: Int32 = -1
            if current.contains(where: { $0.pid > 0 && $0.control < 0 }) || now < acceptAfter { timeout = 10 }
            for slot in current {
                if let at = slot.retryAt { timeout = Self.sooner(timeout, at > now ? Int32(min((at - now) / 1_000_000 + 1, 1000)) : 0) }
            }
            for connection in waiting {
                let at = connection.deadline
                timeout = Self.sooner(timeout, at > now ? Int32(min((at - now) / 1_000_000 + 1, 1000)) : 0)
            }
            let count = poll(&descriptors, nfds_t(descriptors.count), timeout)
            if count < 0 && errno != EINTR { logger.error("poll failed: \(WorkerError.errnoText())") }
            if descriptors[0].revents != 0 {
                var drain = [UInt8](repeating: 0, count: 64)
                while read(wakeRead, &drain, drain.count) > 0 {}
            }
            let offset = anyReady ? 2 : 1
            for (position, index) in owners.enumerated() where descriptors[offset + position].revents != 0 {
                readControl(index)
            }
            reap(started: started)
            let stopping = self.stopping
            if stopping, slots.withLock({ $0.allSatisfy { $0.pid == 0 } }) {
                logger.debug("every worker stopped")
                ServerShutdown.exitNow()
            }
            if !stopping { retryDue() }
            // A connection whose request line arrived (or that waited long enough) is handed over.
            let later = SupervisorClock.nanoseconds()
            var stillWaiting: [(descriptor: Int32, deadline: UInt64)] = []
            for (position, connection) in waiting.enumerated() {
                let arrived = descriptors[waitingOffset + position].revents != 0
                switch FirstLine.route(of: connection.descriptor, workers: options.workers) {
                case .notYet where !arrived && later < connection.deadline:
                    stillWaiting.append(connection)
                case .notYet:
                    handOver(connection.descriptor, preferring: nil)
                    close(connection.descriptor)
                case .worker(let index):
                    handOver(connection.descriptor, preferring: index)
                    close(connection.descriptor)
                }
            }
            waiting = stillWaiting
            if anyReady, descriptors[1].revents != 0 {
                let (accepted, ok) = acceptAll(waiting: waiting.count)
                waiting += accepted.map { ($0, SupervisorClock.nanoseconds() + FirstLine.waitNanoseconds) }
                if !ok { acceptAfter = SupervisorClock.nanoseconds() + 10_000_000 }
            }
            if !started {
                let state = slots.withLock { $0 }
                if spawned == 1, state[0].ready {
                    for index in 1..<options.workers { start(index) }
                    spawned = options.workers
                }
                if spawned == options.workers, state.allSatisfy(\.ready) {
                    started = true
                    onListening(port)
                }
            }
        }
    }

    private static func sooner(_ a: Int32, _ b: Int32) -> Int32 { a < 0 ? b : min(a, b) }

    /// Starts the worker of slot `index` (numbered from 1 for people), unless stopping.
    private func start(_ index: Int) {
        let result = processes.withLock { state -> Result<(pid_t, Int32), WorkerError>? in
            guard !state.stopping else { return nil }
            // Its count of closed connections starts again with it.
            _ = counters.withLock { data, _ in data.storeBytes(of: UInt64(0), toByteOffset: index * 8, as: UInt64.self) }
            do throws(WorkerError) {
                let started = try spawn(index: index)
                state.pids[index] = started.0
                return .success(started)
            } catch {
                return .failure(error)
            }
        }
        switch result {
        case nil:
            return
        case .success(let (pid, control)):
            slots.withLock { slots in
                slots[index] = Slot(pid: pid, control: control, everReady: false, passed: 0, retryAt: nil)
            }
            logger.debug("worker \(index + 1) starting (pid \(pid))")
        case .failure(let error):
            logger.error("worker \(index + 1) could not be started: \(error); trying again in a second")
            slots.withLock { $0[index].retryAt = SupervisorClock.nanoseconds() + WorkerPool.retryNanoseconds }
        }
    }

    private func retryDue() {
        let now = SupervisorClock.nanoseconds()
        let due = slots.withLock { slots in slots.indices.filter { slots[$0].pid == 0 && (slots[$0].retryAt ?? .max) <= now } }
        for index in due { start(index) }
    }

    /// A message from the worker of `index`: ready, or its socket closed (it is ending).
    private func readControl(_ index: Int) {
        let control = slots.withLock { $0[index].control }
        guard control >= 0 else { return }
        switch DescriptorPassing.receive(over: control) {
        case .message(DescriptorPassing.ready, let descriptor):
            if let descriptor { close(descriptor) }
            let pid = slots.withLock { slots -> pid_t in
                slots[index].ready = true
                slots[index].everReady = true
                return slots[index].pid
            }
            logger.info("worker \(index + 1) (pid \(pid)) serving")
        case .message(_, let descriptor):
            if let descriptor { close(descriptor) }
        case .nothing:
            break
        case .closed:
            close(control)
            slots.withLock { slots in
                slots[index].control = -1
                slots[index].ready = false
            }
        }
    }

    /// Collects the workers that ended; starts others in their place.
    private func reap(started: Bool) {
        let candidates = slots.withLock { slots in slots.indices.filter { slots[$0].pid > 0 && slots[$0].control < 0 } }
        for index in candidates {
            let pid = slots.withLock { $0[index].pid }
            var status: Int32 = 0
            let reaped = waitpid(pid, &status, WNOHANG)
            guard reaped == pid || (reaped < 0 && errno == ECHILD) else { continue }
            let stopping = processes.withLock { state -> Bool in
                state.pids[index] = 0
                return state.stopping
            }
            let wasReady = slots.withLock { slots -> Bool in
                let wasReady = slots[index].everReady
                slots[index] = Slot()
                return wasReady
            }
            let signalled = status & 0x7F
            let how = signalled == 0 ? "exited with status \((status >> 8) & 0xFF)" : "was killed by signal \(signalled)"
            if stopping {
                logger.debug("worker \(index + 1) (pid \(pid)) \(how)")
                continue
            }
            if !started {
                // A worker that cannot start (its own message is on stderr already): the server cannot.
                logger.debug("worker \(index + 1) (pid \(pid)) \(how) before it was ready")
                killAll()
                StderrLogHandler.flush()
                _exit(signalled == 0 ? (status >> 8) & 0xFF : 1)
            }
            if wasReady {
                let fate = options.keepsSessions
                    ? "its sessions are lost but the resumable ones, made again from --session-dir as their pages come back"
                    : "its sessions are lost"
                logger.warning("worker \(index + 1) (pid \(pid)) \(how): \(fate); starting another")
                start(index)
            } else {
                logger.error("worker \(index + 1) (pid \(pid)) \(how) before it was ready; trying again in a second")
                slots.withLock { $0[index].retryAt = SupervisorClock.nanoseconds() + WorkerPool.retryNanoseconds }
            }
        }
    }

    /// Accepts every connection waiting, and hands over each whose request line is there; returns
    /// the others (to wait for it, ``FirstLine``), and false when the system is out of descriptors
    /// or memory (accepting waits a little). `waiting`: connections waiting already.
    private func acceptAll(waiting: Int) -> ([Int32], Bool) {
        var accepted: [Int32] = []
        while true {
            let connection = accept(listener, nil, nil)
            if connection < 0 {
                switch errno {
                case EINTR, ECONNABORTED, EPROTO, EPERM: continue
                case EMFILE, ENFILE, ENOBUFS, ENOMEM:
                    // The supervisor holds few connections at a time: this is the system's limit.
                    logger.warning("accept failed: \(WorkerError.errnoText())")
                    return (accepted, false)
                default: return (accepted, true)
                }
            }
            _ = fcntl(connection, F_SETFD, FD_CLOEXEC)
            switch FirstLine.route(of: connection, workers: options.workers) {
            case .notYet where waiting + accepted.count < FirstLine.maxWaiting:
                accepted.append(connection)
            case .notYet:
                handOver(connection, preferring: nil)
                close(connection)
            case .worker(let index):
                handOver(connection, preferring: index)
                close(connection)
            }
        }
    }

    /// Gives `connection` to the worker `preferring` (the one holding the session it resumes) when
    /// it is ready, else to the least busy worker ready, to be served or, over a cap or when
    /// stopping, refused.
    private func handOver(_ connection: Int32, preferring: Int?) {
        let workers = options.workers
        let closed = counters.withLock { data, _ -> [UInt64] in
            (0..<workers).map { data.load(fromByteOffset: $0 * 8, as: UInt64.self) }
        } ?? Array(repeating: 0, count: workers)
        let stopping = self.stopping
        let current = slots.withLock { $0 }
        var open = 0
        var candidates: [(load: Int, index: Int)] = []
        for (index, slot) in current.enumerated() where slot.ready {
            let load = Supervisor.openConnections(passed: slot.passed, closed: closed[index])
            open += load
            candidates.append((load, index))
        }
        candidates.sort { ($0.load, $0.index) < ($1.load, $1.index) }
        if let preferring, let position = candidates.firstIndex(where: { $0.index == preferring }) {
            candidates.insert(candidates.remove(at: position), at: 0)
        }
        guard let least = candidates.min(by: { ($0.load, $0.index) < ($1.load, $1.index) }) else { return }
        let refuse =
            stopping || least.load >= options.maxConnectionsPerWorker || open >= (options.maxConnections ?? .max)
        for candidate in candidates {
            let control = current[candidate.index].control
            if DescriptorPassing.send(refuse ? DescriptorPassing.refuse : DescriptorPassing.serve, descriptor: connection, over: control) {
                slots.withLock { $0[candidate.index].passed += 1 }
                return
            }
            // EAGAIN: its queue is full (it is not taking connections); another: it is ending.
            if errno != EAGAIN && errno != EWOULDBLOCK { slots.withLock { $0[candidate.index].ready = false } }
        }
        logger.warning("no worker could take a connection; closed")
    }

    // MARK: Starting a worker

    /// Starts this executable again as the worker of slot `index`: its socket pair at descriptor 3,
    /// the counters at 4, the app's region at 5.
    private func spawn(index: Int) throws(WorkerError) -> (pid_t, Int32) {
        var pair: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue | SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            throw WorkerError("cannot make a socket pair: \(WorkerError.errnoText())")
        }
        // Above the descriptors the worker's are moved to, so that no move overwrites another's source.
        let workerEnd = fcntl(pair[1], F_DUPFD_CLOEXEC, 16)
        close(pair[1])
        defer { close(workerEnd) }
        var sources = [workerEnd, fcntl(counters.descriptor, F_DUPFD_CLOEXEC, 16)]
        if let appRegion { sources.append(fcntl(appRegion.descriptor, F_DUPFD_CLOEXEC, 16)) }
        defer { for source in sources.dropFirst() { close(source) } }
        guard !sources.contains(where: { $0 < 0 }) else {
            close(pair[0])
            throw WorkerError("cannot pass descriptors: \(WorkerError.errnoText())")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (offset, source) in sources.enumerated() {
            posix_spawn_file_actions_adddup2(&actions, source, WorkerLink.firstDescriptor + Int32(offset))
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for number in [SIGTERM, SIGINT, SIGPIPE, SIGHUP] { sigaddset(&defaults, number) }
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let arguments = CommandLine.arguments
        var environment: [String] = []
        var entry = environ
        while let pointer = entry.pointee {
            let text = String(cString: pointer)
            if !text.hasPrefix(WorkerLink.environmentName + "=") { environment.append(text) }
            entry += 1
        }
        environment.append("\(WorkerLink.environmentName)=\(index + 1)")
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, "/proc/self/exe", &actions, &attributes, argv, envp)
        guard result == 0 else {
            close(pair[0])
            throw WorkerError("cannot start a worker: \(WorkerError.errnoText(result))")
        }
        _ = fcntl(pair[0], F_SETFL, fcntl(pair[0], F_GETFL) | O_NONBLOCK)
        return (pid, pair[0])
    }
}

/// Monotonic time in nanoseconds, for the supervisor's timers.
enum SupervisorClock {
    static func nanoseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }
}
#endif

#if WebSocket
/// What the supervisor reads of a connection before handing it over: its request line, peeked
/// (left in the socket for the worker), for the token of a resume (`GET /rpc?resume=3.…`), whose
/// number is the worker holding the session (protocol/SPEC.md §12, "Resume").
enum FirstLine {
    enum Route: Equatable {
        /// Not arrived yet (or not whole).
        case notYet
        /// To this worker (numbered from 0), or to any (nil).
        case worker(Int?)
    }
    /// How long a connection may take to send its request line before it is handed to any worker.
    static let waitNanoseconds: UInt64 = 250_000_000
    /// Connections waiting for their request line at once; more are handed to any worker.
    static let maxWaiting = 1024
    /// The bytes looked at.
    static let peekBytes = 2048

    static func route(of descriptor: Int32, workers: Int) -> Route {
        var buffer = [UInt8](repeating: 0, count: peekBytes)
        let count = recv(descriptor, &buffer, buffer.count, Int32(MSG_PEEK | MSG_DONTWAIT))
        if count < 0 { return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? .notYet : .worker(nil) }
        return route(of: buffer[..<count], workers: workers)
    }

    /// The route of a request whose first bytes are `bytes` (all there is when empty: the peer
    /// closed).
    static func route(of bytes: ArraySlice<UInt8>, workers: Int) -> Route {
        if bytes.isEmpty { return .worker(nil) }
        guard let end = bytes.firstIndex(of: 0x0A) else { return bytes.count >= peekBytes ? .worker(nil) : .notYet }
        let line = String(decoding: bytes[bytes.startIndex..<end], as: UTF8.self)
        let parts = line.split(separator: " ")
        guard parts.count >= 2, parts[0] == "GET", parts[1].hasPrefix("/rpc?") else { return .worker(nil) }
        guard case .success(.resume(let token, _)) = ResumeRequest.parse(path: String(parts[1])),
            let dot = token.firstIndex(of: "."), let number = Int(token[..<dot]), (1...workers).contains(number)
        else { return .worker(nil) }
        return .worker(number - 1)
    }
}
#endif
