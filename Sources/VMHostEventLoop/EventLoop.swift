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
/// The host thread is one logical thread: the loop's own thread runs its work, except while it waits
/// in `poll`: then a thread that has work for it may run that work itself, as the host thread, for
/// one turn (``runHere(_:)``), so that a host embedded in an app answers a call without a thread
/// hand-off. Whichever thread runs the loop's work holds its ownership; two never run it at once.
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
        /// A job of a task that prefers the loop as its task executor (``startTask(group:_:)``).
        case taskJob(UnownedJob)
        case closure(@Sendable () -> Void)
    }

    /// The loop as the task executor every task the host starts prefers (``startTask(group:_:)``):
    /// a job of such a task that the runtime would hand to its global pool (the task's first
    /// step, a continuation resumed by a timer or from another thread) is posted here instead, by
    /// the thread that released it. No task of the host waits for a thread of the pool, so no turn
    /// of the host waits for one either, however busy the machine or the pool (``drain()``).
    package let taskExecutor: HostTaskExecutor

    private struct Shared {
        var work: [Work] = []
        /// A post must write the wake-up pipe: the loop's thread waits in `poll` and no other
        /// thread runs its work.
        var sleeping = false
        /// The loop's own thread waits in `poll` (a thread may borrow the loop meanwhile).
        var polling = false
    }

    private let state = Mutex(Shared())
    /// Whether ``Shared/work`` may hold work: set by each post, cleared when the loop takes the
    /// work. Read without the lock by a thread that would borrow the loop, so that a writer
    /// finding work posted leaves the ownership alone (a writer trying it in a loop would keep the
    /// loop's own thread from taking it).
    private let mayHavePosted = Atomic<Bool>(false)
    /// Tasks released to run on the host thread that may not have reached its queue yet.
    private let inTransit = Atomic<Int>(0)
    /// Written to wake the loop from `poll`; read end is drained by the loop.
    private let wakeRead: Int32
    private let wakeWrite: Int32
    /// The thread running the loop's work now (``inLoop``): the loop's own thread, or one that
    /// borrowed the loop for a turn (``runHere(_:)``).
    private let owner = Atomic<UInt>(0)
    /// The loop's own thread.
    private let loopThread = Atomic<UInt>(0)
    /// Held by the thread that runs the loop's work: the loop's own thread, except while it waits
    /// in `poll`, or a thread that borrowed the loop.
    private let ownership = Mutex(())

    // Loop-thread-only state. Its properties are `@exclusivity(unchecked)`: every access to them
    // is a read, a write or a standard-library operation that calls no code of the loop's or of an
    // app's while it lasts (the closures and jobs they hold are copied out before they run), so no
    // two accesses can overlap and the run-time check, paid at each access, could never fire
    // (docs/Guide.md, "Exclusivity checks").
    /// Work taken from ``state`` and not run yet, from ``readyHead`` on. A posted closure may drain
    /// (``drain()`` nests): the nested drain runs this first, in order, so that no work taken by an
    /// outer drain is hidden from it (a closure waiting for a job the outer drain holds would wait
    /// in vain).
    @exclusivity(unchecked) private var ready: [Work] = []
    @exclusivity(unchecked) private var readyHead = 0
    /// Closures a drain nested in a closure, an input handler or a borrowed turn met and kept for
    /// the loop's next turn (``drain()``), from ``heldHead`` on, in order.
    @exclusivity(unchecked) private var held: [Work] = []
    @exclusivity(unchecked) private var heldHead = 0
    /// How many closures, input handlers and borrowed turns are running (``drain()``).
    @exclusivity(unchecked) private var holdingClosures = 0
    @exclusivity(unchecked) private var runningJob = false
    @exclusivity(unchecked) private var input: (fd: Int32, handler: @HostActor (InputEvent) -> Void)?
    /// A descriptor watched for the error or hang-up its reader's going away reports, and what to
    /// call then (``watchHangUp(fd:handler:)``).
    @exclusivity(unchecked) private var hangUp: (fd: Int32, handler: @HostActor () -> Void)?
    @exclusivity(unchecked) private var timers = TimerHeap()
    /// Input is read into this (never zeroed: only the bytes a read wrote are looked at, and the
    /// pages a short read never reaches are never touched). The loop lives as long as the process.
    private let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
    @exclusivity(unchecked) private var idleHooks: [Action] = []
    /// Run once after the next drain that ran work or the next due timers (``runAfterWork(_:)``).
    @exclusivity(unchecked) private var afterWork: [Action] = []
    @exclusivity(unchecked) private var nextHookID = 0
    /// What the loop's own thread waits for in `poll`: the deadline of its time-out (`.max`: none)
    /// and the input descriptor (-1: none). A thread that borrowed the loop and changed either
    /// wakes it, so that it waits for the right things.
    @exclusivity(unchecked) private var polledDeadline = UInt64.max
    @exclusivity(unchecked) private var polledInput: Int32 = -1
    @exclusivity(unchecked) private var polledHangUp: Int32 = -1

    /// What the input handler is told.
    package enum InputEvent {
        /// Bytes read; valid only during the call.
        case data(UnsafeRawBufferPointer)
        /// End of input, or a read error.
        case end
    }

    private init() {
        taskExecutor = HostTaskExecutor()
        var fds: [Int32] = [0, 0]
        precondition(pipe(&fds) == 0, "pipe() failed")
        wakeRead = fds[0]
        wakeWrite = fds[1]
        _ = fcntl(wakeRead, F_SETFL, fcntl(wakeRead, F_GETFL) | O_NONBLOCK)
        _ = fcntl(wakeWrite, F_SETFL, fcntl(wakeWrite, F_GETFL) | O_NONBLOCK)
        _ = fcntl(wakeRead, F_SETFD, FD_CLOEXEC)
        _ = fcntl(wakeWrite, F_SETFD, FD_CLOEXEC)
        taskExecutor.loop = self
        let started = Latch()
        startThread(stackSize: 8 << 20) { [unowned(unsafe) self] in
            let id = Self.currentThreadID()
            self.owner.store(id, ordering: .releasing)
            self.loopThread.store(id, ordering: .releasing)
            started.open()
            self.run()
        }
        // Wait for the thread to publish its identity: `inLoop` must be exact from the first job on.
        // Blocked, not spinning: on a busy machine the new thread may wait for a CPU, and a thread
        // calling sched_yield in a loop kept its own (a start-up spent up to 8,000 calls and 10 ms
        // of CPU there while the machine's other work ran).
        started.wait()
    }

    /// The calling thread's identity, as ``owner`` holds it.
    private static func currentThreadID() -> UInt {
        #if canImport(Darwin)
        UInt(bitPattern: pthread_self())
        #else
        UInt(pthread_self())
        #endif
    }

    /// True on the host thread: the loop's own thread, or a thread running a turn of it
    /// (``runHere(_:)``).
    package var inLoop: Bool { owner.load(ordering: .relaxed) == Self.currentThreadID() }

    // MARK: SerialExecutor

    /// Runs `job` on the host thread, in order with the rest of its work: a job of a task isolated
    /// to ``HostActor`` (the loop as the actor's serial executor).
    public func enqueue(_ job: consuming ExecutorJob) {
        post(.job(UnownedJob(job)))
    }

    /// Runs `job`, a job of a task that prefers the loop as its task executor (``taskExecutor``),
    /// on the host thread. Such a job runs isolated to the host actor and on that task executor at
    /// once, so that the task's next hop to the actor needs no switch (a job run otherwise would
    /// be posted again at each hop).
    fileprivate func enqueueTaskJob(_ job: UnownedJob) {
        post(.taskJob(job))
    }

    /// Traps unless called on the host thread.
    public func checkIsolated() {
        precondition(inLoop, "expected to run on the vmhost host thread")
    }

    /// Whether the calling thread is the host thread: what the runtime asks first when it checks
    /// isolation outside a job (``HostActor/assumeIsolated(_:)``, and the check a closure isolated
    /// to the host actor makes when the standard library calls it), cheaper than a
    /// ``checkIsolated()`` that does not trap.
    public func isIsolatingCurrentContext() -> Bool? {
        inLoop
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
            mayHavePosted.store(true, ordering: .relaxed)
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

    /// Watches `fd`, an output, for its reader going away: `handler` is called once, on the host
    /// thread, when `poll` reports an error or hang-up on it (no event is asked for, so a reader
    /// that is merely slow never wakes the loop; a regular file never reports one). The loop's own
    /// `poll` watches it, so that no thread waits for it alone. Call from the host thread.
    @HostActor
    package func watchHangUp(fd: Int32, handler: @escaping @HostActor () -> Void) {
        hangUp = (fd, handler)
    }

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
        afterWork.append(Action(run: action))
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
        idleHooks.append(Action(id: nextHookID, run: hook))
        return nextHookID
    }

    /// True when work was posted and not taken by the loop yet.
    package var hasPostedWork: Bool { state.withLock { !$0.work.isEmpty } }

    /// True when jobs or closures are waiting to run, or released work is on its way here.
    package var hasPendingWork: Bool {
        if inTransit.load(ordering: .acquiring) > 0 { return true }
        if inLoop && (readyHead < ready.count || heldHead < held.count) { return true }
        return state.withLock { !$0.work.isEmpty }
    }

    /// Records that a task was released (a continuation resumed) and will run on the host thread.
    ///
    /// Counting it keeps ``settle()`` and ``settle(group:within:)`` (which wait by yielding, never
    /// by blocking the loop) from returning before it has run: a task of the host is posted here
    /// by its releaser (``drain()``), but one made with a bare `Task { @HostActor in … }`
    /// may pass through the runtime's global executor first. Pair every call with
    /// ``endTransit()`` once the task runs on the host thread again.
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

    /// Starts a task on the host actor that prefers the loop as its task executor
    /// (``taskExecutor``): its first step, and every step a continuation releases later, is posted
    /// here by the thread that releases it, never through the runtime's global pool. It is counted
    /// as in transit until it first runs (``settle(group:within:)``). Every task the host starts
    /// goes through here so that ``settle()`` and a manual clock are exact.
    /// The task belongs to `group` (``WorkGroup/current`` inside it), if one is given.
    @discardableResult
    package static func startTask<T: Sendable>(group: WorkGroup? = nil, _ body: @escaping @HostActor () async -> T) -> Task<T, Never> {
        shared.beginTransit(group: group)
        let operation: @Sendable @HostActor () async -> T = {
            shared.endTransit(group: group)
            return await WorkGroup.$current.withValue(group) { await body() }
        }
        return Task(executorPreference: shared.taskExecutor, operation: operation)
    }

    /// ``startTask(group:_:)`` for work that throws.
    @discardableResult
    package static func startTask<T: Sendable>(group: WorkGroup? = nil, _ body: @escaping @HostActor () async throws -> T) -> Task<T, any Error> {
        shared.beginTransit(group: group)
        let operation: @Sendable @HostActor () async throws -> T = {
            shared.endTransit(group: group)
            return try await WorkGroup.$current.withValue(group) { try await body() }
        }
        return Task(executorPreference: shared.taskExecutor, operation: operation)
    }

    /// Empties the wake-up pipe: one `read` takes every byte written so far unless it fills the
    /// buffer (a wake-up is one byte, written only to a sleeping loop), so a second one, which
    /// would find the pipe empty, is made only then.
    private func drainWakePipe() {
        var sink = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        let size = MemoryLayout.size(ofValue: sink)
        while withUnsafeMutableBytes(of: &sink, { read(wakeRead, $0.baseAddress, $0.count) }) == size {}
    }

    // MARK: Running

    /// Runs ready jobs until none is left. See the type's discussion for when it may be called.
    ///
    /// When it returns, everything the work so far released to run here has run: a task the host
    /// started (``startTask(group:_:)``) prefers the loop as its task executor, so whoever releases
    /// it (a timer here, another thread) posts it here before the release returns; nothing is on
    /// its way through Swift's global pool that a wait could see arrive, and the loop never waits
    /// for it. (A task made with a bare `Task { @HostActor in … }` has no such preference: it may
    /// hop through the pool, and the loop does not wait for it.)
    ///
    /// Posted closures are run only by a drain at the top of the loop's turn. Inside a closure, an
    /// input handler or a borrowed turn (``holdingClosures``), a drain runs jobs only and keeps the
    /// closures it meets, in order, for the loop's next turn: the message one host is handling lets
    /// its own work run, never another host's messages (a closure is how a write from another
    /// thread reaches its host), so no host's turn contains another's, and a thread that borrowed
    /// the loop to write to one host never runs the backlog of another.
    package func drain() {
        guard inLoop, !runningJob else { return }
        var ranAny = false
        while true {
            // Closures kept by a nested drain are older than anything still to take: first.
            if holdingClosures == 0, let work = nextHeld() {
                ranAny = true
                run(work)
                continue
            }
            guard let work = nextReady() else { break }
            if holdingClosures > 0, case .closure = work {
                held.append(work)
                continue
            }
            ranAny = true
            run(work)
        }
        if ranAny { runAfterWorkActions() }
    }

    /// ``drain()``, closures included though it runs inside one: for a harness whose whole run is a
    /// single closure on the loop (the fuzz driver), which stands in for the loop's own turns.
    package func drainIncludingClosures() {
        guard inLoop, !runningJob else { return }
        let holding = holdingClosures
        holdingClosures = 0
        defer { holdingClosures = holding }
        drain()
    }

    /// The next closure kept by a nested drain, if any.
    private func nextHeld() -> Work? {
        guard heldHead < held.count else {
            if heldHead > 0 {
                held.removeAll(keepingCapacity: held.capacity <= 1024)
                heldHead = 0
            }
            return nil
        }
        let work = held[heldHead]
        held[heldHead] = .closure({})
        heldHead += 1
        return work
    }

    /// The next work to run: from ``ready``, refilled with everything posted when it runs out.
    private func nextReady() -> Work? {
        if readyHead == ready.count {
            ready.removeAll(keepingCapacity: ready.capacity <= 4096)
            readyHead = 0
            state.withLock { shared in
                swap(&ready, &shared.work)
                mayHavePosted.store(false, ordering: .relaxed)
            }
            if ready.isEmpty { return nil }
        }
        let work = ready[readyHead]
        readyHead += 1
        return work
    }

    private func run(_ work: Work) {
        switch work {
        case .taskJob(let job):
            runningJob = true
            job.runSynchronously(isolatedTo: asUnownedSerialExecutor(), taskExecutor: taskExecutor.asUnownedTaskExecutor())
            runningJob = false
        case .job(let job):
            runningJob = true
            job.runSynchronously(on: asUnownedSerialExecutor())
            runningJob = false
        case .closure(let body):
            holdingClosures += 1
            body()
            holdingClosures -= 1
        }
    }

    private func run() {
        var pollFDs = [pollfd](repeating: pollfd(), count: 3)
        while true {
            // One turn with the ownership held, then the wait in `poll` without it: a thread
            // that borrows the loop meanwhile (``runHere(_:)``) runs its work itself.
            // The input's and the hang-up watch's index in `pollFDs`, or -1.
            let wait: (timeout: Int32, count: Int, input: Int, hangUp: Int)? = ownership.withLock { _ in
                turn()
                // Go to sleep only if nothing was posted meanwhile.
                if heldHead < held.count { return nil }
                let mustSleep = state.withLock { shared -> Bool in
                    if shared.work.isEmpty {
                        shared.sleeping = true
                        shared.polling = true
                        return true
                    }
                    return false
                }
                guard mustSleep else { return nil }
                var timeout: Int32 = -1
                polledDeadline = .max
                if let next = timers.nextDeadline {
                    let now = Self.monotonicNanoseconds()
                    // Rounded up to whole milliseconds; a far deadline (a saturated one) waits Int32.max ms.
                    timeout = next <= now ? 0 : Int32(clamping: (next - now - 1) / 1_000_000 + 1)
                    polledDeadline = next
                }
                pollFDs[0] = pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0)
                var count = 1
                var inputIndex = -1
                var hangUpIndex = -1
                polledInput = input?.fd ?? -1
                if let input {
                    pollFDs[count] = pollfd(fd: input.fd, events: Int16(POLLIN), revents: 0)
                    inputIndex = count
                    count += 1
                }
                polledHangUp = hangUp?.fd ?? -1
                if let hangUp {
                    pollFDs[count] = pollfd(fd: hangUp.fd, events: 0, revents: 0)
                    hangUpIndex = count
                    count += 1
                }
                return (timeout, count, inputIndex, hangUpIndex)
            }
            guard let wait else { continue }
            let ready = poll(&pollFDs, nfds_t(wait.count), wait.timeout)
            state.withLock {
                $0.sleeping = false
                $0.polling = false
            }
            if ready <= 0 { continue }
            ownership.withLock { _ in
                if pollFDs[0].revents != 0 { drainWakePipe() }
                // The input may have changed while a borrower ran: read only the one still watched.
                if wait.input >= 0, pollFDs[wait.input].revents != 0, let input, input.fd == pollFDs[wait.input].fd {
                    readInput(fd: input.fd, handler: input.handler)
                }
                if wait.hangUp >= 0, Int32(pollFDs[wait.hangUp].revents) & (POLLERR | POLLHUP) != 0,
                    let hangUp, hangUp.fd == pollFDs[wait.hangUp].fd
                {
                    self.hangUp = nil
                    holdingClosures += 1
                    callAsOwner(hangUp.handler)
                    holdingClosures -= 1
                }
            }
        }
    }

    /// The work of one turn: ready jobs and closures, due timers, then the idle hooks.
    private func turn() {
        drain()
        runDueTimers()
        if !idleHooks.isEmpty {
            let hooks = idleHooks
            for entry in hooks { callAsOwner(entry.run) }
        }
    }

    // MARK: Borrowing the loop

    /// Runs `body` on the calling thread as the host thread, when the loop is idle, and returns its
    /// result; nil, without running it, when the loop is busy (its own thread, or another thread,
    /// is running its work), when work was posted and waits for the loop's thread (what one thread
    /// posts and then writes keeps its order: the caller posts behind it), when the caller is on
    /// the host thread already, or when the caller runs a Swift task (jobs do not nest). A caller
    /// that gets nil posts its work instead (``execute(_:)``).
    ///
    /// The calling thread runs `body`, outside any job (it may ``drain()``), then the jobs that
    /// became ready, due timers and the idle hooks, never a closure posted meanwhile (another
    /// host's input: ``borrowTurn(_:)``); then the loop's own thread, which waited in `poll`
    /// meanwhile, takes over again (woken if work was posted, or a timer or the input it waits for
    /// changed). An app's host answers a call so without a thread hand-off: the reply is written
    /// before the call returns.
    package func runHere<T>(_ body: @HostActor () -> T) -> T? {
        var result: T?
        guard borrowTurn({ result = asOwner(body) }) else { return nil }
        return result
    }

    /// ``runHere(_:)`` for a body with no result: true when it ran. Not generic, so that a caller
    /// in another module (an embedded host's write, once per call) runs no unspecialised code.
    package func runHereIfIdle(_ body: @HostActor () -> Void) -> Bool {
        borrowTurn { asOwner(body) }
    }

    /// The borrowed turn of ``runHere(_:)``, running `work` where `body` goes.
    ///
    /// Only when nothing waits to run: work posted before (a write to some host, a task released)
    /// is the loop's own thread's to run, in order, so the caller posts its work behind it
    /// instead. A borrowed turn runs `work`, the jobs it releases, due timers and the idle hooks,
    /// never a closure posted meanwhile (``drain()``): a thread that writes to one host never runs
    /// the messages written to another, whatever their number.
    private func borrowTurn(_ work: () -> Void) -> Bool {
        guard !inLoop, !Self.inTask, !mayHavePosted.load(ordering: .relaxed) else { return false }
        return ownership.withLockIfAvailable { _ -> Bool in
            let busy = state.withLock { shared -> Bool in
                if !shared.work.isEmpty { return true }
                // Posts need not wake the loop's thread while this one runs the work.
                shared.sleeping = false
                return false
            }
            guard !busy, readyHead == ready.count, heldHead == held.count else { return false }
            owner.store(Self.currentThreadID(), ordering: .relaxed)
            defer { owner.store(loopThread.load(ordering: .relaxed), ordering: .relaxed) }
            holdingClosures += 1
            defer { holdingClosures -= 1 }
            defer { finishBorrowedTurn() }
            work()
            return true
        } ?? false
    }

    /// Ends a borrowed turn: runs the jobs that are ready, due timers and the idle hooks, then
    /// hands the loop back to its thread, waking it when work was posted meanwhile (its to run) or
    /// what it waits for in `poll` changed.
    private func finishBorrowedTurn() {
        turn()
        let (posted, polling) = state.withLock { shared -> (Bool, Bool) in
            // Later posts wake the loop's thread, if it still waits in `poll`.
            shared.sleeping = shared.polling
            return (!shared.work.isEmpty, shared.polling)
        }
        guard polling else { return }
        let deadline = timers.nextDeadline ?? .max
        if posted || heldHead < held.count || deadline < polledDeadline || (input?.fd ?? -1) != polledInput
            || (hangUp?.fd ?? -1) != polledHangUp
        {
            var byte: UInt8 = 1
            _ = write(wakeWrite, &byte, 1)
        }
    }

    /// Runs `body` as isolated to the host actor, for the loop's own calls: made only by the
    /// thread that holds the ownership (the check ``HostActor/assumeIsolated(_:)`` makes would
    /// find what the ownership already guarantees, at a cost paid on every message).
    ///
    /// A body with no result and no error (every embedded write, every idle turn) takes the
    /// overload below, which allocates nothing.
    private func asOwner<T>(_ body: @HostActor () throws -> T) rethrows -> T {
        typealias Plain = () throws -> T
        return try withoutActuallyEscaping(body) { isolated in
            try unsafeBitCast(isolated, to: Plain.self)()
        }
    }

    /// Calls a stored host-actor closure as the owner (``asOwner(_:)``), with no closure around it.
    private func callAsOwner(_ body: @escaping @HostActor () -> Void) {
        unsafeBitCast(IsolatedBody(run: body), to: PlainBody.self).run()
    }

    /// ``asOwner(_:)`` for a body with no result: the closure is cast inside a struct, so that it is
    /// not handed to a generic function as a closure (which wraps it in a thunk allocated per call).
    private func asOwner(_ body: @HostActor () -> Void) {
        withoutActuallyEscaping(body) { escaping in
            unsafeBitCast(IsolatedBody(run: escaping), to: PlainBody.self).run()
        }
    }

    /// An idle hook (with the id that removes it) or an action after work. A struct, not a tuple
    /// or a bare closure: a closure kept as an array's element is stored in the array's generic
    /// form and wrapped in a thunk, allocated, at each write and each read.
    private struct Action {
        var id = 0
        let run: @HostActor () -> Void
    }

    /// The same closure typed with and without its isolation (``asOwner(_:)``).
    private struct IsolatedBody {
        let run: @HostActor () -> Void
    }

    private struct PlainBody {
        let run: () -> Void
    }

    /// Whether the calling thread runs a Swift task.
    private static var inTask: Bool { withUnsafeCurrentTask { $0 != nil } }

    /// Runs `body` as the host thread and returns its result: at once on the host thread, on the
    /// calling thread when the loop is idle (``runHere(_:)``), else posted and waited for. For a
    /// call that must answer synchronously (an embedded host opened from an app's thread); never
    /// from a host-actor task that waits for other host work (it would wait for itself).
    package func runAndWait<T: Sendable>(_ body: @escaping @HostActor @Sendable () -> T) -> T {
        if inLoop { return HostActor.assumeIsolated(body) }
        if let result = runHere(body) { return result }
        let result = Mutex<T?>(nil)
        let latch = Latch()
        execute {
            let value = HostActor.assumeIsolated(body)
            result.withLock { $0 = value }
            latch.open()
        }
        latch.wait()
        return result.withLock { $0! }
    }

    private func readInput(fd: Int32, handler: @escaping @HostActor (InputEvent) -> Void) {
        let n = read(fd, buffer.baseAddress, buffer.count)
        if n < 0 && (errno == EINTR || errno == EAGAIN) { return }
        holdingClosures += 1
        asOwner {
            if n > 0 {
                handler(.data(UnsafeRawBufferPointer(rebasing: buffer[..<n])))
            } else {
                input = nil
                handler(.end)
            }
        }
        holdingClosures -= 1
    }

    private func runDueTimers() {
        guard timers.nextDeadline != nil else { return }
        let now = Self.monotonicNanoseconds()
        var fired = false
        while let (_, action) = timers.popDue(now: now) {
            asOwner { action() }
            fired = true
            drain()
        }
        // A timer's own changes (a countdown tick) are output too, even when it started no job.
        if fired { runAfterWorkActions() }
    }

    private func runAfterWorkActions() {
        guard !afterWork.isEmpty else { return }
        let actions = afterWork
        afterWork.removeAll(keepingCapacity: actions.count <= 1024)
        for action in actions { callAsOwner(action.run) }
    }
}


/// The host thread as the task executor of the tasks the host starts (``EventLoop/taskExecutor``).
///
/// A type of its own, not a second conformance of ``EventLoop``: the loop must know whether a job
/// came to it as the actor's or as the task executor's, to run it with the executors its task
/// expects (``EventLoop/enqueueTaskJob(_:)``).
package final class HostTaskExecutor: TaskExecutor, @unchecked Sendable {
    fileprivate unowned(unsafe) var loop: EventLoop!

    public func enqueue(_ job: consuming ExecutorJob) {
        loop.enqueueTaskJob(UnownedJob(job))
    }

    public func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }
}
