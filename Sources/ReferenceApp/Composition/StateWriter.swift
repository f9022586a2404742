import Logging
import StateStore
import VMHost

/// The writes of the app's state, one transaction at a time in the order they were asked, each
/// tried again on the host's clock while another process (another host on the same directory)
/// holds the database's lock.
///
/// A write is tried at once; when the lock is held (past the store's short busy timeout, so the
/// host thread is never held longer), it waits 10 ms, then twice as long each time up to a
/// second, for at most ``retryWindow`` from when it was asked (the last try at that deadline). Later writes wait behind it, so
/// none overtakes another (a logout's deletion always comes after the saves asked before it). A
/// write that fails in the end is logged as a warning naming what was not stored, and its waiters
/// hear the failure.
///
/// The database is the truth: nothing is kept in memory once written or failed.
@HostActor
final class StateWriter {
    /// How long a write is tried for while the database is locked.
    nonisolated static let retryWindow: Duration = .seconds(10)
    nonisolated static let firstRetry: Duration = .milliseconds(10)
    nonisolated static let longestRetry: Duration = .seconds(1)

    /// One write, waiting its turn or its next try.
    final class Pending {
        fileprivate let what: String
        fileprivate let body: @HostActor (StateTransaction) throws(StateStoreError) -> Void
        fileprivate let deadline: Duration
        fileprivate var delay = StateWriter.firstRetry
        fileprivate var waited = false
        fileprivate(set) var outcome: Result<Void, StateStoreError>?
        fileprivate var waiters: [HostWaiter<Result<Void, StateStoreError>>] = []

        fileprivate init(what: String, deadline: Duration, body: @escaping @HostActor (StateTransaction) throws(StateStoreError) -> Void) {
            self.what = what
            self.deadline = deadline
            self.body = body
        }
    }

    let store: StateStore
    let clock: any HostClock
    let logger: Logger
    private var queue: [Pending] = []
    private var retry: ClockTimer?

    init(store: StateStore, clock: any HostClock, logger: Logger) {
        self.store = store
        self.clock = clock
        self.logger = logger
    }

    /// Asks for a write: `body` runs in one transaction of the store, when its turn comes (at once
    /// when no other waits). `what` names it in the logs ("saving the list '…'").
    @discardableResult
    func submit(_ what: String, _ body: @escaping @HostActor (StateTransaction) throws(StateStoreError) -> Void) -> Pending {
        let pending = Pending(what: what, deadline: clock.now + Self.retryWindow, body: body)
        queue.append(pending)
        if queue.count == 1 { drain() }
        return pending
    }

    /// The outcome of `pending`, once it was written or failed in the end.
    func outcome(of pending: Pending) async -> Result<Void, StateStoreError> {
        if let outcome = pending.outcome { return outcome }
        // Answered in ``finish(_:_:)``, through a cancellation of the caller too (what it asked is
        // written anyway), and counted until the caller runs again, so a manual clock's advance
        // (and `settle`) wait for what it does next.
        let waiter = HostWaiter<Result<Void, StateStoreError>>()
        pending.waiters.append(waiter)
        // The waiter is only ever answered with the outcome, never with an error.
        return try! await waiter.waitIgnoringCancellation()
    }

    /// Writes what waits, in order, until the queue is empty or the lock is held.
    private func drain() {
        retry = nil
        while let first = queue.first {
            do throws(StateStoreError) {
                try store.transaction(first.body)
                finish(first, .success(()))
            } catch where error.isBusy && clock.now < first.deadline {
                if !first.waited {
                    first.waited = true
                    logger.notice("\(first.what) waits: another process holds the state database's lock; trying again for up to \(Self.retryWindow)")
                }
                // The last try comes at the deadline itself, not past it.
                retry = clock.schedule(after: min(first.delay, first.deadline - clock.now)) { [weak self] in self?.drain() }
                first.delay = min(first.delay * 2, Self.longestRetry)
                return
            } catch {
                logger.warning("\(first.what) failed: \(error.message)")
                finish(first, .failure(error))
            }
        }
    }

    private func finish(_ pending: Pending, _ outcome: Result<Void, StateStoreError>) {
        queue.removeFirst()
        pending.outcome = outcome
        let waiters = pending.waiters
        pending.waiters = []
        for waiter in waiters { waiter.resume(with: .success(outcome)) }
    }
}
