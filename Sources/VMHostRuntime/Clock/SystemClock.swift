#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Transport) import VMHostEventLoop

/// Real monotonic time; timers fire from the host thread's event loop.
@HostActor
package final class SystemClock: HostClock {
    private let origin = EventLoop.monotonicNanoseconds()
    private var timers: [ClockTimer: TimerID] = [:]
    private var nextID: UInt64 = 0

    package init() {}

    package var now: Duration { .nanoseconds(Int64(EventLoop.monotonicNanoseconds() - origin)) }

    /// The system's real-time clock (`CLOCK_REALTIME`).
    package var wallTime: Duration {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return .seconds(Int64(time.tv_sec)) + .nanoseconds(Int64(time.tv_nsec))
    }

    @discardableResult
    package func schedule(after delay: Duration, _ action: @escaping @HostActor () -> Void) -> ClockTimer {
        nextID += 1
        let handle = ClockTimer(raw: nextID)
        // Saturating: a delay past the end of the monotonic clock never fires.
        let (sum, overflow) = EventLoop.monotonicNanoseconds().addingReportingOverflow(UInt64(max(0, delay.nanoseconds)))
        let deadline = overflow ? .max : sum
        timers[handle] = EventLoop.shared.schedule(at: deadline) { [weak self] in
            self?.timers[handle] = nil
            action()
        }
        return handle
    }

    package func cancel(_ timer: ClockTimer) {
        if let id = timers.removeValue(forKey: timer) { EventLoop.shared.cancel(id) }
    }
}

extension Duration {
    /// The duration in whole nanoseconds (saturating).
    package var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (product, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds < 0 ? .min : .max }
        return product &+ attoseconds / 1_000_000_000
    }

    /// The duration in whole milliseconds (saturating).
    public var milliseconds: Int64 { nanoseconds / 1_000_000 }
}
