#if canImport(Glibc)
import Glibc
#endif
@_spi(Transport) import VMHostEventLoop
import Synchronization
import Testing

/// A system timer that fires while no input arrives must still reach the output: the loop runs what
/// was asked for after work (the host's flush) after due timers, not only after jobs.
@Suite("Event loop", .timeLimit(.minutes(1)))
struct EventLoopTests {
    @Test func anActionAskedForByADueTimerRunsAfterItOnItsOwn() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            EventLoop.shared.execute {
                HostActor.assumeIsolated {
                    // Already due: fires on the loop's next turn, with no job and no input behind it.
                    _ = EventLoop.shared.schedule(at: 0) {
                        EventLoop.shared.runAfterWork { done.resume() }
                    }
                }
            }
        }
    }

    /// What a host asks for when its properties change (its flush): run after the work that asked,
    /// once; the loop's later turns (a timer firing) do not run it again.
    @Test func anActionAskedForDuringWorkRunsOnceAfterIt() async {
        let log = await withCheckedContinuation { (done: CheckedContinuation<[String], Never>) in
            EventLoop.shared.execute {
                HostActor.assumeIsolated {
                    let log = Log()
                    EventLoop.shared.runAfterWork { log.entries.append("after") }
                    log.entries.append("work")
                    _ = EventLoop.shared.schedule(at: 0) {
                        log.entries.append("timer")
                        // Later than the first timer's turn, whose end runs what was asked for after work.
                        let later = EventLoop.monotonicNanoseconds() + 1_000_000
                        _ = EventLoop.shared.schedule(at: later) { done.resume(returning: log.entries) }
                    }
                }
            }
        }
        #expect(log == ["work", "after", "timer"])
    }

    /// A posted closure that drains (as one feeding a message does) runs the jobs posted before it
    /// returns, including jobs the loop took together with the closure (a closure that waits for a
    /// job, a manual clock's advance waiting for a woken command, would otherwise wait in vain), but
    /// not the closures posted with it: those are other messages (another host's input), run by
    /// the loop's next turn, in order, so that no host's turn contains another's.
    @Test func aNestedDrainRunsJobsTakenWithTheClosureButNotOtherClosures() async {
        let order = await withCheckedContinuation { (done: CheckedContinuation<[String], Never>) in
            EventLoop.shared.execute {
                // All posted from the loop thread: the loop takes them in one turn.
                let log = SharedLog()
                EventLoop.shared.execute {
                    log.append("first")
                    EventLoop.shared.drain()
                    log.append("first drained")
                }
                EventLoop.shared.execute { log.append("second") }
                EventLoop.startTask { log.append("job") }
                EventLoop.shared.execute { log.append("third") }
                EventLoop.shared.execute { done.resume(returning: log.entries) }
            }
        }
        // The job may run earlier still, in the nested drain of another test's closure.
        #expect(order.filter { $0 != "job" } == ["first", "first drained", "second", "third"])
        #expect((order.firstIndex(of: "job") ?? .max) < (order.firstIndex(of: "first drained") ?? 0))
    }

    /// A task the host started, released by another thread, is on the host thread's queue when
    /// the release returns: it never passes through the runtime's global pool, so no turn of the
    /// host (a manual clock's advance, the end of an embedded host's input) has anything to wait
    /// for, whatever the pool and the machine are doing.
    @Test func aHostTaskReleasedElsewhereIsPostedByItsReleaser() async throws {
        let waiter = HostWaiter<Int>()
        let waiting = ReleaseFlag()
        let task = EventLoop.startTask { @HostActor in
            try await waiter.wait(start: { waiting.set() })
        }
        let posted = await withCheckedContinuation { (done: CheckedContinuation<Bool?, Never>) in
            startThread {
                let deadline = EventLoop.monotonicNanoseconds() + 10_000_000_000
                while !waiting.isSet, EventLoop.monotonicNanoseconds() < deadline { sched_yield() }
                // Released while this thread holds the loop, so that nothing runs the task meanwhile.
                var outcome: Bool?
                while outcome == nil, EventLoop.monotonicNanoseconds() < deadline {
                    outcome = EventLoop.shared.runHere {
                        waiter.resume(with: .success(7))
                        return EventLoop.shared.hasPostedWork
                    }
                    if outcome == nil { sched_yield() }
                }
                done.resume(returning: outcome)
            }
        }
        #expect(posted == true, "the released task was not on the host thread's queue (nil: the loop was never idle)")
        #expect(try await task.value == 7)
    }

    /// The loop's own `poll` watches an output for its reader going away (a closed stdout ends
    /// the host, SPEC §7): the handler runs once, on the host thread, when the read end of a pipe
    /// is closed, and not while the reader is merely there.
    @Test func aWatchedOutputWhoseReaderGoesAwayCallsItsHandlerOnce() async {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        let (readEnd, writeEnd) = (ends[0], ends[1])
        defer { close(writeEnd) }
        let calls = await withCheckedContinuation { (done: CheckedContinuation<Int, Never>) in
            EventLoop.shared.execute {
                HostActor.assumeIsolated {
                    let log = Log()
                    EventLoop.shared.watchHangUp(fd: writeEnd) {
                        log.entries.append("hang-up")
                        // A later turn of the loop (a timer) must not call it again.
                        let later = EventLoop.monotonicNanoseconds() + 5_000_000
                        _ = EventLoop.shared.schedule(at: later) { done.resume(returning: log.entries.count) }
                    }
                    // The reader is there: a turn of the loop passes without a call.
                    _ = EventLoop.shared.schedule(at: 0) {
                        #expect(log.entries.isEmpty)
                        close(readEnd)
                    }
                }
            }
        }
        #expect(calls == 1)
    }
}

private final class ReleaseFlag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .releasing) }
    var isSet: Bool { value.load(ordering: .acquiring) }
}

private final class SharedLog: Sendable {
    private let state = Mutex<[String]>([])
    func append(_ entry: String) { state.withLock { $0.append(entry) } }
    var entries: [String] { state.withLock { $0 } }
}

@HostActor
private final class Log {
    var entries: [String] = []
}
