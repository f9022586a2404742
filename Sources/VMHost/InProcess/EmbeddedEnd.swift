import Logging
import Synchronization
@_spi(Transport) import VMHostCore
@_spi(Transport) import VMHostEventLoop
@_spi(Transport) import VMHostWire

/// The state of an embedded host that any thread reads: open, closing, or ended with a status;
/// and the waiters for its end.
final class EmbeddedEnd: Sendable {
    enum Phase {
        case open
        /// The input is closed (a close, or `exit`); the host is ending.
        case closing
        case ended(Int32)
    }

    private struct State {
        var phase = Phase.open
        var waiters: [CheckedContinuation<Int32, Never>] = []
    }

    private let state = Mutex(State())
    private let latch = Latch()
    /// Whether the phase is still `open`, read without the lock (once per write); cleared, under
    /// the lock, when the phase moves on.
    private let open = Atomic<Bool>(true)

    var isOpen: Bool { open.load(ordering: .acquiring) }

    var status: Int32? {
        state.withLock { if case .ended(let status) = $0.phase { status } else { nil } }
    }

    /// Runs `post` while the input is open, under the lock (so that it is ordered before any
    /// close); false, without running it, once closed.
    func ifOpen(_ post: () -> Void) -> Bool {
        state.withLock { state in
            guard case .open = state.phase else { return false }
            post()
            return true
        }
    }

    /// Marks the input closed and runs `post` (under the lock), once; false when it was closed
    /// already.
    func close(_ post: () -> Void) -> Bool {
        state.withLock { state in
            guard case .open = state.phase else { return false }
            state.phase = .closing
            open.store(false, ordering: .releasing)
            post()
            return true
        }
    }

    /// The input is closed by the host itself (`exit`).
    func closing() {
        state.withLock { state in
            if case .open = state.phase {
                state.phase = .closing
                open.store(false, ordering: .releasing)
            }
        }
    }

    /// The host has ended with `status` (``status`` tells it from now on); the waiters go on
    /// when the returned function is called (after the last callback).
    func ended(status: Int32) -> @Sendable () -> Void {
        let waiters = state.withLock { state -> [CheckedContinuation<Int32, Never>] in
            state.phase = .ended(status)
            open.store(false, ordering: .releasing)
            defer { state.waiters = [] }
            return state.waiters
        }
        let latch = latch
        return {
            latch.open()
            for waiter in waiters { waiter.resume(returning: status) }
        }
    }

    func ended() async -> Int32 {
        await withCheckedContinuation { continuation in
            let status = state.withLock { state -> Int32? in
                if case .ended(let status) = state.phase { return status }
                state.waiters.append(continuation)
                return nil
            }
            if let status { continuation.resume(returning: status) }
        }
    }

    func waitBlocking() -> Int32 {
        latch.wait()
        return status ?? 0
    }
}
