#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization
import Testing
import VMHost
@_spi(Transport) import VMHostEventLoop

/// A thread lending itself to the host thread: ``EventLoop/runHere(_:)``.
@Suite struct RunHereTests {
    /// Runs `body` on a new thread (not one of Swift's pool) and returns its result.
    func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            startThread { continuation.resume(returning: body()) }
        }
    }

    /// Tries `runHere` until the loop is idle (it may be busy with other tests' hosts), for at
    /// most 10 s.
    static func borrow<T>(_ body: @HostActor () -> T) -> T? {
        let deadline = EventLoop.monotonicNanoseconds() + 10_000_000_000
        while EventLoop.monotonicNanoseconds() < deadline {
            if let result = EventLoop.shared.runHere(body) { return result }
            sched_yield()
        }
        return nil
    }

    @Test func aThreadRunsTheWorkAsTheHostThread() async {
        let outcome = await onThread { () -> (ran: Bool?, inLoopAfter: Bool) in
            let ran = Self.borrow { EventLoop.shared.inLoop }
            return (ran, EventLoop.shared.inLoop)
        }
        #expect(outcome.ran == true, "the loop was never idle")
        #expect(outcome.inLoopAfter == false)
    }

    @Test func notOnTheHostThreadNorInATask() async {
        #expect(EventLoop.shared.runHere { 1 } == nil)
        let onHost = await onThread {
            EventLoop.shared.runAndWait { EventLoop.shared.runHere { 1 } == nil }
        }
        #expect(onHost)
    }

    /// Work posted and not run yet is the loop's own thread's: a thread never borrows the loop
    /// past it (what one thread posts and then writes keeps its order; the caller posts behind it),
    /// and never runs a closure posted while it holds the loop (another host's input).
    @Test func postedWorkIsNeverPassedNorRunByABorrower() async {
        let outcome = await onThread { () -> (ranHere: Bool, order: [Int])? in
            let deadline = EventLoop.monotonicNanoseconds() + 10_000_000_000
            let order = Mutex<[Int]>([])
            // Held while posting, so that the loop's thread cannot take the post before the try.
            let refused = Self.borrow { () -> Bool in
                EventLoop.shared.execute { order.withLock { $0.append(1) } }
                return true
            }
            guard refused == true else { return nil }
            // Posted inside the borrowed turn: left for the loop's thread, which runs it.
            while order.withLock({ $0.isEmpty }), EventLoop.monotonicNanoseconds() < deadline { sched_yield() }
            EventLoop.shared.execute { order.withLock { $0.append(2) } }
            var ranHere: Bool?
            while ranHere == nil, EventLoop.monotonicNanoseconds() < deadline {
                // Refused while 2 waits; once the loop's thread ran it, the borrow goes through.
                ranHere = EventLoop.shared.runHere { order.withLock { $0.append(3) } ; return true }
                if ranHere == nil { sched_yield() }
            }
            return (ranHere == true, order.withLock { $0 })
        }
        #expect(outcome != nil, "the loop was never idle")
        #expect(outcome?.ranHere == true)
        #expect(outcome?.order == [1, 2, 3], "a borrower passed work posted before it")
    }

    @Test func aTimerArmedInABorrowedTurnFires() async {
        let fired = Flag()
        let signal = AsyncSignal()
        let armed = await onThread {
            Self.borrow {
                // Due in 5 ms: the loop's thread, asleep without a deadline, must wake for it.
                _ = EventLoop.shared.schedule(at: EventLoop.monotonicNanoseconds() + 5_000_000) {
                    fired.set()
                    signal.signal()
                }
                return true
            }
        }
        #expect(armed == true, "the loop was never idle")
        let done = await signal.until("the timer armed in a borrowed turn", sourceLocation: #_sourceLocation) {
            fired.isSet ? true : nil
        }
        #expect(done == true)
    }

    @Test func runAndWaitAnswersFromAnyThread() async {
        let values = await withTaskGroup(of: Int.self) { group in
            for index in 0..<8 {
                group.addTask { await self.onThread { EventLoop.shared.runAndWait { index * 2 } } }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(values.sorted() == (0..<8).map { $0 * 2 })
    }
}

final class Flag: Sendable {
    private let value = Atomic<Bool>(false)
    func set() { value.store(true, ordering: .releasing) }
    var isSet: Bool { value.load(ordering: .acquiring) }
}
