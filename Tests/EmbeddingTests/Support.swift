#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization
import Testing
import VMHost
import VMHostTesting

/// A server of the probe kind, with the framework's options only.
let probeServer = Server(name: "probe", version: "1.0.0") { _ in ServedApp(kinds: [ProbeViewModel.factory()]) }

/// The messages a callback host delivered, from any thread, and its end. Waits are async (the
/// host's tasks may need the threads a blocking wait would hold) and bounded: they fail the test
/// with what they waited for.
final class Inbox: Sendable {
    private struct State {
        var messages: [JSON] = []
        var read = 0
        var status: Int32?
        var endCalls = 0
    }

    private let state = Mutex(State())
    private let changed = AsyncSignal()
    /// Called with each message, on the delivering thread (to write from inside the callback).
    let reply: Mutex<(@Sendable (JSON) -> Void)?> = Mutex(nil)

    func receive(_ body: [UInt8]) {
        let message = try! JSON.parse(body)
        state.withLock { $0.messages.append(message) }
        reply.withLock { $0 }?(message)
        changed.signal()
    }

    func ended(_ status: Int32) {
        state.withLock {
            $0.status = status
            $0.endCalls += 1
        }
        changed.signal()
    }

    var status: Int32? { state.withLock { $0.status } }
    var endCalls: Int { state.withLock { $0.endCalls } }
    var all: [JSON] { state.withLock { $0.messages } }

    /// The next message not read yet, waiting for it at most 10 s.
    func next(_ what: String, sourceLocation: SourceLocation = #_sourceLocation) async -> JSON? {
        await changed.until(what, sourceLocation: sourceLocation) {
            state.withLock { state -> JSON? in
                guard state.read < state.messages.count else { return nil }
                state.read += 1
                return state.messages[state.read - 1]
            }
        }
    }

    /// Messages up to and including the response with `id`.
    func exchange(id: JSON, sourceLocation: SourceLocation = #_sourceLocation) async -> [JSON] {
        var messages: [JSON] = []
        while let message = await next("the reply to \(id)", sourceLocation: sourceLocation) {
            messages.append(message)
            if message["id"] == id && message["method"] == nil { break }
        }
        return messages
    }

    /// Waits (at most 10 s) for the end; its status.
    func end(sourceLocation: SourceLocation = #_sourceLocation) async -> Int32? {
        await changed.until("the end of the host", sourceLocation: sourceLocation) { status }
    }
}

/// Wakes async waiters when something changed; each wait is bounded.
final class AsyncSignal: Sendable {
    private struct State {
        var generation = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextID = 0
    }

    private let state = Mutex(State())

    func signal() {
        let waiters = state.withLock { state in
            state.generation += 1
            defer { state.waiters = [:] }
            return state.waiters
        }
        for waiter in waiters.values { waiter.resume() }
    }

    /// Waits until `ready` gives a value, at most 10 s; records an issue naming `what` then.
    func until<T>(_ what: String, sourceLocation: SourceLocation, _ ready: () -> T?) async -> T? {
        let deadline = ContinuousClock.now + .seconds(10)
        while true {
            let generation = state.withLock { $0.generation }
            if let value = ready() { return value }
            guard ContinuousClock.now < deadline else {
                Issue.record("nothing within 10 s: \(what)", sourceLocation: sourceLocation)
                return nil
            }
            let id = state.withLock { state in
                state.nextID += 1
                return state.nextID
            }
            let timer = Task {
                try? await Task.sleep(until: deadline)
                self.resume(id)
            }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                // A change since the look above: look again at once.
                let stale = state.withLock { state -> Bool in
                    guard state.generation == generation else { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if stale { continuation.resume() }
            }
            timer.cancel()
        }
    }

    private func resume(_ id: Int) {
        state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
    }
}

func request(_ id: Int, _ method: String, _ params: JSON? = nil) -> String {
    var message: JSONObject = ["jsonrpc": "2.0", "id": .int(Int64(id)), "method": .string(method)]
    if let params { message.append("params", params) }
    return String(decoding: JSON.object(message).serialized(), as: UTF8.self)
}

func notification(_ method: String, _ params: JSON? = nil) -> String {
    var message: JSONObject = ["jsonrpc": "2.0", "method": .string(method)]
    if let params { message.append("params", params) }
    return String(decoding: JSON.object(message).serialized(), as: UTF8.self)
}

/// A host of the probe server delivering to `inbox`.
func openProbe(_ inbox: Inbox, _ arguments: [String] = ["--clock", "manual", "--test-controls"]) throws -> EmbeddedHost {
    try EmbeddedHost(
        probeServer, arguments: arguments, onMessage: { inbox.receive($0) }, onEnd: { inbox.ended($0) })
}
