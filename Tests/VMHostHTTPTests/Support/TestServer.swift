import LoopbackTesting
import Foundation
import Synchronization

/// A request as the test server received it.
struct ReceivedRequest: Sendable {
    var method: String
    var path: String
    var query: [String: String]
    /// Names lower-cased.
    var headers: [String: String]
    var body: [UInt8]
}

/// What the test server does with a request.
enum Reply: Sendable {
    /// Answers this status, these extra header lines and this body.
    case respond(Int, headers: [String] = [], body: [UInt8] = [])
    /// Never answers; reports when the client closes the connection.
    case neverAnswer
    /// Sends a body that never ends; reports when the client closes the connection.
    case endlessBody
}

/// A real HTTP/1.1 server on 127.0.0.1 for the client's tests: one request per connection, each
/// answered by `handler`; records every request, and reports connections the client closed on a
/// request left unanswered (proof that a cancelled or timed-out call closed its connection).
/// Waits resume when the server sees the event (never by sleeping), and fail when it stops.
final class TestServer: Sendable {
    struct Stopped: Error {}

    private struct State {
        var requests: [ReceivedRequest] = []
        var closedByClient: [String] = []
        var waiters: [(condition: @Sendable (State) -> Bool, continuation: CheckedContinuation<Void, any Error>)] = []
        var connections: Set<Int32> = []
        var stopped = false
    }

    let port: UInt16
    private let listener: Int32
    private let state = Mutex(State())
    private let handler: @Sendable (ReceivedRequest) -> Reply

    init(_ handler: @escaping @Sendable (ReceivedRequest) -> Reply) throws {
        (listener, port) = try Socket.listenOnLoopback()
        self.handler = handler
        Thread.detachNewThread { [self] in acceptLoop() }
    }

    deinit { stop() }

    /// `http://127.0.0.1:<port>`.
    var base: String { "http://127.0.0.1:\(port)" }

    var requests: [ReceivedRequest] { state.withLock { $0.requests } }

    /// Waits until `count` requests have arrived.
    func requests(count: Int) async throws -> [ReceivedRequest] {
        try await wait { $0.requests.count >= count }
        return requests
    }

    /// Waits until the client closed the `occurrence`-th unanswered connection to `path`.
    func closedByClient(path: String, occurrence: Int = 1) async throws {
        try await wait { $0.closedByClient.filter { $0 == path }.count >= occurrence }
    }

    func stop() {
        let (connections, waiters, wasStopped) = state.withLock { state in
            defer { state.stopped = true; state.waiters = []; state.connections = [] }
            return (state.connections, state.waiters, state.stopped)
        }
        guard !wasStopped else { return }
        Socket.shutdownBoth(listener)
        for fd in connections { Socket.shutdownBoth(fd) }
        for waiter in waiters { waiter.continuation.resume(throwing: Stopped()) }
    }

    private func wait(_ condition: @escaping @Sendable (State) -> Bool) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let outcome = state.withLock { state -> Result<Void, any Error>? in
                if condition(state) { return .success(()) }
                if state.stopped { return .failure(Stopped()) }
                state.waiters.append((condition, continuation))
                return nil
            }
            if let outcome { continuation.resume(with: outcome) }
        }
    }

    private func update(_ change: (inout State) -> Void) {
        let ready = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            change(&state)
            let now = state
            let ready = state.waiters.filter { $0.condition(now) }.map(\.continuation)
            state.waiters.removeAll { $0.condition(now) }
            return ready
        }
        for continuation in ready { continuation.resume() }
    }

    private var isStopped: Bool { state.withLock { $0.stopped } }

    private func acceptLoop() {
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

    private func serve(_ fd: Int32) {
        defer {
            state.withLock { _ = $0.connections.remove(fd) }
            Socket.closeSocket(fd)
        }
        guard let request = readRequest(fd) else { return }
        update { $0.requests.append(request) }
        switch handler(request) {
        case .respond(let status, let headers, let body):
            let head = "HTTP/1.1 \(status) Status\r\nContent-Length: \(body.count)\r\n"
                + headers.map { $0 + "\r\n" }.joined() + "Connection: close\r\n\r\n"
            Socket.writeAll(fd, Array(head.utf8) + body)
        case .neverAnswer:
            while !Socket.receive(fd).isEmpty {}
            if !isStopped { update { $0.closedByClient.append(request.path) } }
        case .endlessBody:
            let head = "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n"
            guard Socket.writeAll(fd, Array(head.utf8)) else { return }
            let chunk = [UInt8](repeating: UInt8(ascii: " "), count: 65_536)
            while !isStopped, Socket.writeAll(fd, chunk) {}
            if !isStopped { update { $0.closedByClient.append(request.path) } }
        }
    }

    private func readRequest(_ fd: Int32) -> ReceivedRequest? {
        var buffer: [UInt8] = []
        var headEnd: Int?
        while headEnd == nil {
            let chunk = Socket.receive(fd)
            if chunk.isEmpty || buffer.count > 1 << 20 { return nil }
            buffer += chunk
            headEnd = HTTPRequestHead.end(in: buffer)
        }
        guard let headEnd, let head = HTTPRequestHead(buffer[..<headEnd]), head.contentLength <= 1 << 20 else { return nil }
        while buffer.count - headEnd < head.contentLength {
            let chunk = Socket.receive(fd)
            if chunk.isEmpty { return nil }
            buffer += chunk
        }
        return ReceivedRequest(
            method: head.method, path: head.path, query: head.query, headers: head.headers,
            body: Array(buffer[headEnd..<(headEnd + head.contentLength)]))
    }
}
