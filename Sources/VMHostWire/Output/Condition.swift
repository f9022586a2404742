#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A mutex with a condition variable, for the writer thread to sleep on.
///
/// - Important: `wait()` must be called while holding the lock (inside ``withLock(_:)``).
final class Condition: @unchecked Sendable {
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        pthread_mutex_init(mutex, nil)
        pthread_cond_init(condition, nil)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
        condition.deallocate()
    }

    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body()
    }

    func wait() { pthread_cond_wait(condition, mutex) }

    /// Waits at most `nanoseconds`; false on time-out.
    func wait(nanoseconds: UInt64) -> Bool {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        var total = UInt64(now.tv_nsec) + nanoseconds
        var deadline = timespec()
        deadline.tv_sec = now.tv_sec + Int(total / 1_000_000_000)
        total %= 1_000_000_000
        deadline.tv_nsec = Int(total)
        return pthread_cond_timedwait(condition, mutex, &deadline) == 0
    }

    func broadcast() { pthread_cond_broadcast(condition) }
}
