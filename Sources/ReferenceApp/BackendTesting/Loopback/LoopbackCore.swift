import LoopbackTesting
import Backend
import Foundation
import Synchronization
import VMHost

/// The state and threads of a ``LoopbackServer``, shared by its accepting and connection threads.
///
/// - Important: All state is behind ``state``'s lock; blocking socket calls are made outside it.
final class LoopbackCore: Sendable {
    struct State {
        var demo = DemoServer()
        var faults: [String: LoopbackFault] = [:]
        var requests: [RecordedRequest] = []
        /// The paths of unanswered connections the client closed, in order.
        var closedByClient: [String] = []
        var connections: Set<Int32> = []
        var waiters: [Waiter] = []
        var stopped = false
    }

    enum Condition: Sendable {
        case request(path: String, occurrence: Int)
        case closedByClient(path: String, occurrence: Int)

        func holds(in state: State) -> Bool {
            switch self {
            case .request(let path, let occurrence):
                state.requests.lazy.filter { $0.path == path }.count >= occurrence
            case .closedByClient(let path, let occurrence):
                state.closedByClient.lazy.filter { $0 == path }.count >= occurrence
            }
        }
    }

    struct Waiter {
        var condition: Condition
        var continuation: CheckedContinuation<Void, any Error>
    }

    let listener: Int32
    let state = Mutex(State())

    /// How envelopes are written (demo answers and scripted business failures alike).
    let convention: EnvelopeConvention

    init(listener: Int32, convention: EnvelopeConvention) {
        self.listener = listener
        self.convention = convention
    }

    /// Suspends until `condition` holds; throws ``LoopbackServerStopped`` if the server stops first.
    func wait(for condition: Condition) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let outcome = state.withLock { state -> Result<Void, any Error>? in
                if condition.holds(in: state) { return .success(()) }
                if state.stopped { return .failure(LoopbackServerStopped()) }
                state.waiters.append(Waiter(condition: condition, continuation: continuation))
                return nil
            }
            if let outcome { continuation.resume(with: outcome) }
        }
    }

    /// Changes the state and resumes the waiters whose condition now holds.
    func update(_ change: (inout State) -> Void) {
        let ready = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            change(&state)
            var ready: [CheckedContinuation<Void, any Error>] = []
            var waiting: [Waiter] = []
            for waiter in state.waiters {
                if waiter.condition.holds(in: state) { ready.append(waiter.continuation) } else { waiting.append(waiter) }
            }
            state.waiters = waiting
            return ready
        }
        for continuation in ready { continuation.resume() }
    }

    func stop() {
        let (connections, waiters, wasStopped) = state.withLock { state in
            defer { state.stopped = true; state.waiters = []; state.connections = [] }
            return (state.connections, state.waiters, state.stopped)
        }
        guard !wasStopped else { return }
        // Shutting the sockets down wakes the threads blocked on them; each closes its own.
        Socket.shutdownBoth(listener)
        for fd in connections { Socket.shutdownBoth(fd) }
        for waiter in waiters { waiter.continuation.resume(throwing: LoopbackServerStopped()) }
    }

    var isStopped: Bool { state.withLock { $0.stopped } }

    func acceptLoop() {
        defer { Socket.closeSocket(listener) }
        while let client = Socket.acceptClient(listener) {
            let accepted = state.withLock { state -> Bool in
                guard !state.stopped else { return false }
                state.connections.insert(client)
                return true
            }
            guard accepted else {
                Socket.closeSocket(client)
                return
            }
            Thread.detachNewThread { [self] in serve(client) }
        }
    }
}
