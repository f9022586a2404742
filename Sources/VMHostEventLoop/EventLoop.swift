#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// The host thread: a serial executor that runs Swift jobs, posted closures, due system timers and
/// the handler of one watched input file descriptor, all on one thread.
///
/// The loop sleeps in `poll(2)` on the input descriptor and a wake-up pipe, with a timeout set by the
/// earliest system timer: there is no polling interval and no sleep on the read path.
///
/// Order of work: after every input chunk and every posted closure, jobs are run until none is
/// ready (``drain()``). An input handler that handles several messages from one chunk calls
/// ``drain()`` between them, so the work a message started has run before the next message is
/// looked at, whatever the read chunk sizes were. This is what makes the wire deterministic.
///
/// - Important: ``drain()`` may only be called from the loop thread outside any job (from an input
///   handler or a posted closure). Inside a job it returns at once, so that jobs never nest.
///
/// Not for apps: a kind runs on ``HostActor`` and starts its work with ``HostActor/startTask(_:)``;
/// a transport that serves the host (WebSocket) uses what `@_spi(Transport)` shows of it.
@_spi(Transport)
public final class EventLoop: SerialExecutor, @unchecked Sendable {
    /// The process-wide loop; its thread starts on first use.
    public static let shared = EventLoop()

    enum Work {
        case job(UnownedJob)
        case closure(@Sendable () -> Void)
    }

    private struct Shared {
        var work: [Work] = []
        var sleeping = false
    }

    private let state = Mutex(Shared())
    /// Tasks released to run on the host thread that may not have reached its queue yet.
    private let inTransit = Atomic<Int>(0)
    /// Written to wake the loop from `poll`; read end is drained by the loop.
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private var thread = pthread_t()

    // Loop-thread-only state.
    /// Work taken from ``state`` and not run yet, from ``readyHead`` on. A posted closure may drain
    /// (``drain()`` nests): the nested drain runs this first, in order, so that no work taken by an
    /// outer drain is hidden from it (a closure waiting for a job the outer drain holds would wait
    /// in vain).
    private var ready: [Work] = []
    private var readyHead = 0
    private var runningJob = false
    private var input: (fd: Int32, handler: @HostActor (InputEvent) -> Void)?
    private var timers = TimerHeap()
    /// Input is read into this (never zeroed: only the bytes a read wrote are looked at, and the
    /// pages a short read never reaches are never touched). The loop lives as long as the process.
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
    private var idleHooks: [(id: Int, hook: @HostActor () -> Void)] = []
    /// Run once after the next drain that ran work or the next due timers (``runAfterWork(_:)``).
    private var afterWork: [@HostActor () -> Void] = []
    private var nextHookID = 0

    /// What the input handler is told.
    package enum InputEvent {
        /// Bytes read; valid only during the call.
        case data(UnsafeRawBufferPointer)
        /// End of input, or a read error.
        case end
    }

    private init() {
        var fds: [Int32] = [0, 0]
        precondition(pipe(&fds) == 0, "pipe() failed")
        wakeRead = fds[0]
        wakeWrite = fds[1]
        _ = fcntl(wakeRead, F_SETFL, fcntl(wakeRead, F_GETFL) | O_NONBLOCK)
        _ = fcntl(wakeWrite, F_SETFL, fcntl(wakeWrite, F_GETFL) | O_NONBLOCK)
        _ = fcntl(wakeRead, F_SETFD, FD_CLOEXEC)
        _ = fcntl(wakeWrite, F_SETFD, FD_CLOEXEC)
        let threadID = Mutex<pthread_t?>(nil)
        startThread(stackSize: 8 << 20) { [unowned(unsafe) self] in
            threadID.withLock { $0 = pthread_self() }
            self.run()
        }
        // Wait for the thread to publish its identity: `inLoop` must be exact from the first job on.
        while true {
            if let id = threadID.withLock({ $0 }) { thread = id; break }
            sched_yield()
        }
    }

    /// True on the host thread.
    package var inLoop: Bool { pthread_equal(pthread_self(), thread) != 0 }

    // MARK: SerialExecutor

    /// Runs `job` on the host thread, in order with the rest of its work.
    public func enqueue(_ job: consuming ExecutorJob) {
        post(.job(UnownedJob(job)))
    }

    /// Traps unless called on the host thread.
    public func checkIsolated() {
        precondition(inLoop, "expected to run on the vmhost host thread")
    }

    /// This loop as the executor of ``HostActor``.
    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    // MARK: Posting work

    /// Runs `body` on the host thread, in order with jobs, outside any job (so it may ``drain()``).
    public func execute(_ body: @escaping @Sendable () -> Void) {
        post(.closure(body))
    }

    private func post(_ work: Work) {
        let wake = state.withLock { shared -> Bool in
            shared.work.append(work)
            let wasSleeping = shared.sleeping
            shared.sleeping = false
            return wasSleeping
        }
        if wake {
            var byte: UInt8 = 1
            _ = write(wakeWrite, &byte, 1)
        }
    }

    /// Watches `fd` for input; `handler` is called on the host thread with each chunk read and once
    /// with `.end`. Reads are at most 64 KiB. Call from the host thread.
    @HostActor
    package func watchInput(fd: Int32, handler: @escaping @HostActor (InputEvent) -> Void) {
        input = (fd, handler)
    }

    /// Stops watching the input descriptor.
    @HostActor
    package func stopWatchingInput() { input = nil }

    // MARK: Timers (monotonic nanoseconds)

    /// The monotonic clock, in nanoseconds.
    public static func monotonicNanoseconds() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }

    /// Runs `action` on the host thread once the monotonic clock reaches `deadline`.
    @HostActor
    public func schedule(at deadline: UInt64, _ action: @escaping @HostActor () -> Void) -> TimerID {
        timers.insert(deadline: deadline, action: action)
    }

    /// Cancels a timer; a no-op for one that already fired.
    @HostActor
    package func cancel(_ timer: TimerID) { timers.remove(timer) }

    /// Runs `action` once, on the host thread, after the next ``drain()`` that ran work or the next
    /// due system timers fired: the host flushes there the output changes that jobs (command
    /// completions) and timers (countdown ticks) made. A host whose properties changed asks for its
    /// flush here, so that the work after a message costs the hosts with changes, not every host of
    /// the process.
    @HostActor
    package func runAfterWork(_ action: @escaping @HostActor () -> Void) {
        afterWork.append(action)
    }

    /// Removes a hook added with ``addIdleHook(_:)``.
    @HostActor
    package func removeIdleHook(_ id: Int) {
        idleHooks.removeAll { $0.id == id }
    }

    /// Adds `hook`, run on the host thread each time the loop has run out of ready work (after an
    /// input chunk was handled, jobs drained and due timers fired), just before it looks for more
    /// input or goes to sleep. The output is written there: once per burst, not per message.
    /// Remove it with ``removeIdleHook(_:)``.
    @HostActor
    public func addIdleHook(_ hook: @escaping @HostActor () -> Void) -> Int {
        nextHookID += 1
        idleHooks.append((nextHookID, hook))
        return nextHookID
    }

    /// True when jobs or closures are waiting to run, or released work is on its way here.
    package var hasPendingWork: Bool {
        if inTransit.load(ordering: .acquiring) > 0 { return true }
        if inLoop && readyHead < ready.count { return true }
        return state.withLock { !$0.work.isEmpty }
    }

    /// Records that a task was released (a continuation resumed) and will run on the host thread.
    ///
    /// A resumed task may pass through the runtime's global executor before it is enqueued here;
    /// counting it keeps ``settle()`` and ``drainSettled()`` from returning before it has run.
    /// Pair every call with ``endTransit()`` once the task runs on the host thread again.
    package func beginTransit(group: WorkGroup? = nil) {
        inTransit.add(1, ordering: .releasing)
        group?.add(1)
    }

    /// Ends what ``beginTransit(group:)`` began: the released task runs on the host thread.
    package func endTransit(group: WorkGroup? = nil) {
        inTransit.subtract(1, ordering: .releasing)
        group?.add(-1)
    }

    /// Suspends the calling host-actor task until every job that was ready has run, including the
    /// jobs those jobs made ready. For code that runs inside a job (tests) and so cannot ``drain()``.
    @HostActor
    package func settle() async {
        while hasPendingWork { await Task.yield() }
    }

    /// Suspends the calling host-actor task until no task of `group` is on its way here: the work
    /// of one test, not of every test of the process (work another test released is not waited
    /// for). The calling task yields once more after that, so that a job of the group already
    /// queued behind it runs first.
    ///
    /// Gives up after `limit` of real time, and then answers false: a task stuck on its way here
    /// fails the test that waits instead of hanging it.
    @HostActor
    @discardableResult
    package func settle(group: WorkGroup, within limit: Duration = .seconds(10)) async -> Bool {
        let deadline = ContinuousClock.now + limit
        repeat {
            while !group.isSettled {
                if ContinuousClock.now >= deadline { return false }
                await Task.yield()
            }
            await Task.yield()
        } while !group.isSettled
        return true
    }

    /// Starts a task on the host actor, counted as in transit until it first runs there (a new
    /// task, like a resumed one, may pass through the runtime's global executor first). Every task
    /// the host starts goes through here so that ``settle()`` and a manual clock are exact.
    /// The task belongs to `group` (``WorkGroup/current`` inside it), if one is given.
    @discardableResult
    package static func startTask<T: Sendable>(group: WorkGroup? = nil, _ body: @escaping @HostActor () async -> T) -> Task<T, Never> {
        shared.beginTransit(group: group)
        return Task { @HostActor in
            shared.endTransit(group: group)
            return await WorkGroup.$current.withValue(group) { await body() }
        }
    }

    /// ``startTask(group:_:)`` for work that throws.
    @discardableResult
    package static func startTask<T: Sendable>(group: WorkGroup? = nil, _ body: @escaping @HostActor () async throws -> T) -> Task<T, any Error> {
        shared.beginTransit(group: group)
        return Task { @HostActor in
            shared.endTransit(group: group)
            return try await WorkGroup.$current.withValue(group) { try await body() }
        }
    }

    /// ``drain()``, repeated until no released task is still on its way here. Same rules as ``drain()``.
    ///
    /// A released task may wait for a thread of the runtime's global executor before it is enqueued
    /// here: with that pool busy (other work of the process, a loaded machine) this takes from
    /// microseconds to, rarely, a second. The loop thread waits for it in `poll` on its wake-up
    /// pipe, so it sleeps until the task is posted; the wait is bounded (``settleLimitNanoseconds``)
    /// so that a task that never comes cannot stall the host.
    package func drainSettled() {
        guard inLoop, !runningJob else { return }
        drain()
        let deadline = Self.monotonicNanoseconds() + Self.settleLimitNanoseconds
        while inTransit.load(ordering: .acquiring) > 0 {
            let now = Self.monotonicNanoseconds()
            guard now < deadline else { return }
            waitForWork(nanoseconds: min(deadline - now, 1_000_000))
            drain()
        }
    }

    /// How long ``drainSettled()`` waits at most for released work to arrive.
    static let settleLimitNanoseconds: UInt64 = 10_000_000_000

    /// Blocks the loop thread until work is posted or `nanoseconds` pass.
    private func waitForWork(nanoseconds: UInt64) {
        let mustWait = state.withLock { shared -> Bool in
            guard shared.work.isEmpty else { return false }
            shared.sleeping = true
            return true
        }
        guard mustWait else { return }
        var wake = pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)
        if poll(&wake, 1, Int32(clamping: (nanoseconds + 999_999) / 1_000_000)) > 0 {
            drainWakePipe()
        }
        state.withLock { $0.sleeping = false }
    }

    private func drainWakePipe() {
        var sink = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        while withUnsafeMutableBytes(of: &sink, { read(wakeRead, $0.baseAddress, $0.count) }) > 0 {}
    }

    // MARK: Running

    /// Runs ready jobs until none is left. See the type's discussion for when it may be called.
    package func drain() {
        guard inLoop, !runningJob else { return }
        var ranAny = false
        while let work = nextReady() {
            ranAny = true
            run(work)
        }
        if ranAny { runAfterWorkActions() }
    }

    /// The next work to run: from ``ready``, refilled with everything posted when it runs out.
    private func nextReady() -> Work? {
        if readyHead == ready.count {
            ready.removeAll(keepingCapacity: ready.capacity <= 4096)
            readyHead = 0
            state.withLock { swap(&ready, &$0.work) }
            if ready.isEmpty { return nil }
        }
        let work = ready[readyHead]
        readyHead += 1
        return work
    }

    private func run(_ work: Work) {
        switch work {
        case .job(let job):
            runningJob = true
            job.runSynchronously(on: asUnownedSerialExecutor())
            runningJob = false
        case .closure(let body):
            body()
        }
    }

    private func run() {
        var pollFDs = [pollfd](repeating: pollfd(), count: 2)
        while true {
            drain()
            runDueTimers()
            if !idleHooks.isEmpty {
                HostActor.assumeIsolated { for entry in idleHooks { entry.hook() } }
            }
            // Go to sleep only if nothing was posted meanwhile.
            let mustSleep = state.withLock { shared -> Bool in
                if shared.work.isEmpty { shared.sleeping = true; return true }
                return false
            }
            if !mustSleep { continue }
            var timeout: Int32 = -1
            if let next = timers.nextDeadline {
                let now = Self.monotonicNanoseconds()
                // Rounded up to whole milliseconds; a far deadline (a saturated one) waits Int32.max ms.
                timeout = next <= now ? 0 : Int32(clamping: (next - now - 1) / 1_000_000 + 1)
            }
            pollFDs[0] = pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)
            var count = 1
            if let input {
                pollFDs[1] = pollfd(fd: input.fd, events: Int16(POLLIN), revents: 0)
                count = 2
            }
            let ready = poll(&pollFDs, nfds_t(count), timeout)
            state.withLock { $0.sleeping = false }
            if ready <= 0 { continue }
            if pollFDs[0].revents != 0 { drainWakePipe() }
            if count == 2, pollFDs[1].revents != 0, let input {
                readInput(fd: input.fd, handler: input.handler)
            }
        }
    }

    private func readInput(fd: Int32, handler: @escaping @HostActor (InputEvent) -> Void) {
        let n = read(fd, buffer.baseAddress, buffer.count)
        if n < 0 && (errno == EINTR || errno == EAGAIN) { return }
        HostActor.assumeIsolated {
            if n > 0 {
                handler(.data(UnsafeRawBufferPointer(rebasing: buffer[..<n])))
            } else {
                input = nil
                handler(.end)
            }
        }
    }

    private func runDueTimers() {
        guard timers.nextDeadline != nil else { return }
        let now = Self.monotonicNanoseconds()
        var fired = false
        while let (_, action) = timers.popDue(now: now) {
            HostActor.assumeIsolated { action() }
            fired = true
            drain()
        }
        // A timer's own changes (a countdown tick) are output too, even when it started no job.
        if fired { runAfterWorkActions() }
    }

    private func runAfterWorkActions() {
        guard !afterWork.isEmpty else { return }
        HostActor.assumeIsolated {
            let actions = afterWork
            afterWork.removeAll(keepingCapacity: actions.count <= 1024)
            for action in actions { action() }
        }
    }
}
