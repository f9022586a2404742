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

    /// A posted closure that drains (as one feeding a message does) runs the work posted before it
    /// returns, including work the loop took together with the closure: a closure that waits for a
    /// job (a manual clock's advance waiting for a woken command) would otherwise wait in vain.
    @Test func aNestedDrainRunsWorkTakenWithTheClosureThatDrains() async {
        let order = await withCheckedContinuation { (done: CheckedContinuation<[String], Never>) in
            EventLoop.shared.execute {
                // Both posted from the loop thread: the loop takes them in one turn.
                let log = SharedLog()
                EventLoop.shared.execute {
                    log.append("first")
                    EventLoop.shared.drain()
                    log.append("first drained")
                    done.resume(returning: log.entries)
                }
                EventLoop.shared.execute { log.append("second") }
            }
        }
        #expect(order == ["first", "second", "first drained"])
    }

    /// A task released on another thread may take a while to be posted here (the runtime's pool is
    /// busy): ``EventLoop/drainSettled()`` waits for it rather than giving up after a few thousand
    /// yields, which is what a manual clock's advance needs to see the work a timer released.
    @Test func drainSettledWaitsForWorkStillInTransit() async {
        let arrived = await withCheckedContinuation { (done: CheckedContinuation<[String], Never>) in
            EventLoop.shared.execute {
                let log = SharedLog()
                EventLoop.shared.beginTransit()
                startThread {
                    // Slow to post, as a busy pool thread is (no clock involved: it only yields).
                    for _ in 0..<100_000 { sched_yield() }
                    EventLoop.shared.execute {
                        log.append("arrived")
                        EventLoop.shared.endTransit()
                    }
                }
                EventLoop.shared.drainSettled()
                done.resume(returning: log.entries)
            }
        }
        #expect(arrived == ["arrived"])
    }
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
