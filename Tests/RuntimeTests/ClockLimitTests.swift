@_spi(Transport) import VMHostEventLoop
import Testing
@testable import VMHostRuntime

/// The manual clock at its limits: a documented ceiling instead of a crash, and a heap of timers.
@Suite("Manual clock limits")
@HostActor
struct ClockLimitTests {
    @Test func theCeilingIsTwoToTheSixtyThreeNanoseconds() {
        #expect(ManualClock.ceilingMilliseconds == 9_223_372_036_854)
        #expect(ManualClock.ceiling == .nanoseconds(Int64.max))
        #expect(ManualClock().remaining == ManualClock.ceiling)
    }

    /// 1001 advances of Int64.max ms used to crash ("Not enough bits to represent the passed value").
    @Test func repeatedAdvancesOfInt64MaxStopAtTheCeiling() {
        let clock = ManualClock()
        var fired = 0
        clock.schedule(after: .milliseconds(5)) { fired += 1 }
        clock.schedule(after: .nanoseconds(Int64.max)) { fired += 10 }
        for _ in 0..<1001 {
            clock.advance(by: .milliseconds(Int64.max))
            #expect(clock.now == ManualClock.ceiling)
        }
        #expect(clock.now.milliseconds == ManualClock.ceilingMilliseconds)
        #expect(clock.remaining == .zero)
        // A timer due at the ceiling fires; one past it never does, and stays pending.
        #expect(fired == 11)
        clock.schedule(after: .milliseconds(1)) { fired += 100 }
        clock.schedule(after: .seconds(Int64.max)) { fired += 100 }
        clock.advance(by: .seconds(1))
        #expect(fired == 11)
        #expect(clock.pendingCount == 2)
    }

    @Test func aNegativeOrZeroAdvanceFiresWhatIsDueNowOnly() {
        let clock = ManualClock()
        var fired: [String] = []
        clock.schedule(after: .milliseconds(-5)) { fired.append("now") }
        clock.schedule(after: .milliseconds(1)) { fired.append("later") }
        clock.advance(by: .milliseconds(-100))
        #expect(fired == ["now"])
        #expect(clock.now == .zero)
    }

    @Test func theSystemClockSaturatesAFarDeadline() {
        let clock = SystemClock()
        let timer = clock.schedule(after: .seconds(Int64.max)) {}
        clock.cancel(timer)
    }

    /// Many timers, many cancelled: every live one fires once, in deadline then scheduling order.
    @Test func aThousandTimersFireInOrderWhateverWasCancelled() {
        let clock = ManualClock()
        var fired: [Int] = []
        var timers: [Int: ClockTimer] = [:]
        for n in 0..<1000 {
            let deadline = (n * 7919) % 500  // equal deadlines in pairs, scheduled out of order
            timers[n] = clock.schedule(after: .milliseconds(deadline)) { fired.append(n) }
        }
        for n in stride(from: 0, to: 1000, by: 3) { clock.cancel(timers[n]!) }
        clock.cancel(timers[0]!)  // twice: a no-op
        #expect(clock.pendingCount == 666)
        clock.advance(by: .milliseconds(250))
        clock.advance(by: .milliseconds(250))
        let expected = (0..<1000).filter { $0 % 3 != 0 }.sorted { a, b in
            ((a * 7919) % 500, a) < ((b * 7919) % 500, b)
        }
        #expect(fired == expected)
        #expect(clock.pendingCount == 0)
    }
}

/// The heap under the clocks, directly.
@Suite("Timer heap")
@HostActor
struct TimerHeapTests {
    @Test func popsDueTimersInDeadlineThenInsertionOrderSkippingCancelled() {
        var heap = TimerHeap()
        var order: [String] = []
        let a = heap.insert(deadline: 30) { order.append("a") }
        _ = heap.insert(deadline: 10) { order.append("b") }
        _ = heap.insert(deadline: 30) { order.append("c") }
        let d = heap.insert(deadline: 5) { order.append("d") }
        heap.remove(d)
        heap.remove(d)
        #expect(heap.count == 3)
        #expect(heap.nextDeadline == 10)
        while let (_, action) = heap.popDue(now: 20) { action() }
        #expect(order == ["b"])
        heap.remove(a)
        while let (_, action) = heap.popDue(now: .max) { action() }
        #expect(order == ["b", "c"])
        #expect(heap.count == 0 && heap.nextDeadline == nil)
    }

    @Test func cancellingMostTimersKeepsTheRestInOrder() {
        var heap = TimerHeap()
        var ids: [TimerID] = []
        for n in 0..<10_000 { ids.append(heap.insert(deadline: UInt64(10_000 - n)) {}) }
        for (n, id) in ids.enumerated() where n % 100 != 0 { heap.remove(id) }
        #expect(heap.count == 100)
        var deadlines: [UInt64] = []
        while let (deadline, _) = heap.popDue(now: .max) { deadlines.append(deadline) }
        #expect(deadlines == stride(from: 0, to: 10_000, by: 100).map { UInt64(10_000 - $0) }.sorted())
    }
}
