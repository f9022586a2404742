import Synchronization

/// A plain lock for test-support state touched from test tasks and the host thread.
final class NSLockLike: Sendable {
    private let mutex = Mutex(())
    func withLock<T>(_ body: () throws -> T) rethrows -> T {
        try mutex.withLock { _ in try body() }
    }
}
