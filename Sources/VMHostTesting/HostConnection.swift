import Foundation
import Synchronization
import Testing
import VMHost

/// A host a test talks to over the protocol: in process (``InProcessConnection``) or the built
/// executable over stdio (``SpawnedConnection``). A test written against it runs either way:
///
/// ```swift
/// @Test func aSavedEditorReloadsItsList() async throws {
///     let client = try await HostConnections.connect(server: TodoServer.server, arguments: ["--latency-ms", "200"])
///     await client.request("vm.create", ["kind": "TodoList", "id": "list"])
///     …
///     await client.finish()
/// }
/// // swift test                                              : in process
/// // VMHOST_TEST_BINARY=.build/debug/todo-host swift test     : the same test against the binary
/// ```
///
/// Both read what a message caused deterministically: the host handles one message at a time and
/// writes everything it caused before it reads the next (SPEC §4), so what comes before the answer
/// to a later message (a `ping` the connection adds where it needs to know) is all of it.
@HostActor
public protocol HostConnection: AnyObject, Sendable {
    /// Sends a request and returns every message written up to and including its response; a
    /// failure (no response: the host hung, exited or closed its output) is recorded at `sourceLocation`.
    func request(_ method: String, _ params: JSON?, id: JSON?, sourceLocation: SourceLocation) async -> Exchange
    /// Sends a notification and returns what it caused.
    func notify(_ method: String, _ params: JSON?, sourceLocation: SourceLocation) async -> [JSON]
    /// Sends a request without waiting for its response (a command that ends later); returns what
    /// its handling wrote.
    func start(_ method: String, _ params: JSON?, id: JSON, sourceLocation: SourceLocation) async -> [JSON]
    /// Every message written and not read yet (`takeMessages(sourceLocation: #_sourceLocation)`).
    func takeMessages(sourceLocation: SourceLocation) async -> [JSON]
    /// Ends the test: fails it when messages are left unread or a request has no reply.
    func finish(sourceLocation: SourceLocation) async
}

extension HostConnection {
    /// Sends a request with the next id and returns every message written up to and including its
    /// response. A failure is recorded at the caller's line.
    @discardableResult
    public func request(_ method: String, _ params: JSON? = nil, sourceLocation: SourceLocation = #_sourceLocation) async -> Exchange {
        await request(method, params, id: nil, sourceLocation: sourceLocation)
    }

    /// Sends a request with the id `id` and returns every message written up to and including its response.
    @discardableResult
    public func request(_ method: String, _ params: JSON?, id: JSON?, sourceLocation: SourceLocation = #_sourceLocation) async -> Exchange {
        await request(method, params, id: id, sourceLocation: sourceLocation)
    }

    /// Sends a notification and returns what it caused.
    @discardableResult
    public func notify(_ method: String, _ params: JSON? = nil, sourceLocation: SourceLocation = #_sourceLocation) async -> [JSON] {
        await notify(method, params, sourceLocation: sourceLocation)
    }

    /// Sends a request without waiting for its response (a command that ends later); returns what
    /// its handling wrote.
    @discardableResult
    public func start(_ method: String, _ params: JSON? = nil, id: JSON, sourceLocation: SourceLocation = #_sourceLocation) async -> [JSON] {
        await start(method, params, id: id, sourceLocation: sourceLocation)
    }

    /// Moves the host's manual clock (`control.clock.advance`) and returns everything written.
    @discardableResult
    public func advance(ms: Int, sourceLocation: SourceLocation = #_sourceLocation) async -> Exchange {
        await request("control.clock.advance", ["ms": .int(Int64(ms))], id: nil, sourceLocation: sourceLocation)
    }

    /// Ends the test: fails it when messages are left unread or a request has no reply.
    public func finish(sourceLocation: SourceLocation = #_sourceLocation) async { await finish(sourceLocation: sourceLocation) }
}

/// How a test reaches an app's host: the one switch between in process and the built binary.
public enum HostConnections {
    /// The environment variable that names the binary to test against instead of the host in process.
    public static let binaryVariable = "VMHOST_TEST_BINARY"

    /// The host `server` makes from `arguments` (`--clock manual --test-controls` added unless
    /// given): in process, or, when ``binaryVariable`` names an executable, that executable started
    /// with the same arguments and driven over stdio.
    @HostActor
    public static func connect(server: Server, arguments: [String] = []) throws -> any HostConnection {
        if let binary = ProcessInfo.processInfo.environment[binaryVariable], !binary.isEmpty {
            var arguments = arguments
            if !arguments.contains("--clock") { arguments += ["--clock", "manual"] }
            if !arguments.contains("--test-controls") { arguments.append("--test-controls") }
            return try SpawnedConnection(binary: binary, arguments: arguments)
        }
        return try InProcessConnection(server: server, arguments: arguments)
    }
}

extension InProcessConnection: HostConnection {}

/// A built executable driven over stdio, for the tests of ``HostConnection`` run against it.
///
/// Every wait is bounded (``timeout``, real time) and ends as soon as the host exits or closes its
/// output, with a failure at the test's line that says which (the exit status or signal). Once a
/// wait failed, the host is not waited for again: every later request fails at once, naming the
/// first failure, so a test against a host that hangs or dies fails in one timeout at most.
///
/// The release check of `vm.dispose` needs the view-model's memory: it runs in process only.
@HostActor
package final class SpawnedConnection: HostConnection {
    private let process = Process()
    private let input: FileHandle
    private let reader: LineReader
    private let ids = IDCounter()
    /// How long a wait for the host lasts before the test fails (10 s).
    package let timeout: Duration
    /// Why the host stopped answering, once it did: no wait is made after it.
    private var broken: String?

    /// Starts `binary` with `arguments`, stdin and stdout as pipes (stderr kept by the test's own).
    package init(binary: String, arguments: [String], timeout: Duration = .seconds(10)) throws {
        let stdin = Pipe()
        let stdout = Pipe()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        process.standardInput = stdin
        process.standardOutput = stdout
        try process.run()
        input = stdin.fileHandleForWriting
        reader = LineReader(stdout.fileHandleForReading)
        self.timeout = timeout
    }

    isolated deinit {
        try? input.close()
        if process.isRunning { process.terminate() }
    }

    private func write(_ message: JSON) {
        // A host that has exited reads nothing: writing to its closed pipe would raise SIGPIPE.
        guard broken == nil, process.isRunning else { return }
        input.write(Data(message.serialized() + [UInt8(ascii: "\n")]))
    }

    /// Reads up to the response to `id` (included); a failure at `sourceLocation` when the host
    /// exits, closes its output or stays silent past the deadline first.
    private func read(until id: JSON, _ what: String, _ sourceLocation: SourceLocation) async -> [JSON] {
        if let broken {
            Issue.record(Comment(rawValue: "no answer to \(what): \(broken)"), sourceLocation: sourceLocation)
            return []
        }
        var messages: [JSON] = []
        let deadline = ContinuousClock.now + timeout
        while true {
            switch await reader.next(until: deadline) {
            case .message(let message):
                messages.append(message)
                if message["id"] == id && message["method"] == nil { return messages }
            case .ended:
                let why = await ended()
                broken = "\(why) (before answering \(what))"
                Issue.record(Comment(rawValue: "no answer to \(what): \(why)"), sourceLocation: sourceLocation)
                return messages
            case .timedOut:
                broken = "the host wrote nothing for \(timeout) (waiting for the answer to \(what))"
                Issue.record(
                    Comment(rawValue: "no answer to \(what): the host is running but wrote nothing for \(timeout)"),
                    sourceLocation: sourceLocation)
                return messages
            }
        }
    }

    /// Why the host's output ended: it exited (with its status or signal), or it closed its
    /// output and still runs. An exit is waited for a moment (the pipe ends as the process does).
    private func ended() async -> String {
        let deadline = ContinuousClock.now + .seconds(1)
        while process.isRunning && ContinuousClock.now < deadline { await Task.yield() }
        guard !process.isRunning else { return "the host closed its output but is still running" }
        let status = process.terminationStatus
        return process.terminationReason == .uncaughtSignal
            ? "the host was killed by signal \(status)" : "the host exited with status \(status)"
    }

    /// What the host wrote before answering a `ping` sent now: all that what came before caused.
    private func barrier(_ sourceLocation: SourceLocation) async -> [JSON] {
        let id = JSON.string("barrier-\(ids.next())")
        write(["jsonrpc": "2.0", "id": id, "method": "ping"])
        let messages = await read(until: id, "a ping", sourceLocation)
        return messages.last?["id"] == id ? Array(messages.dropLast()) : messages
    }

    package func request(_ method: String, _ params: JSON?, id: JSON?, sourceLocation: SourceLocation) async -> Exchange {
        let requestID = id ?? .int(ids.next())
        var message: JSONObject = ["jsonrpc": "2.0", "id": requestID, "method": .string(method)]
        if let params { message.append("params", params) }
        write(.object(message))
        return Exchange(id: requestID, messages: await read(until: requestID, method, sourceLocation))
    }

    package func notify(_ method: String, _ params: JSON?, sourceLocation: SourceLocation) async -> [JSON] {
        var message: JSONObject = ["jsonrpc": "2.0", "method": .string(method)]
        if let params { message.append("params", params) }
        write(.object(message))
        return await barrier(sourceLocation)
    }

    package func start(_ method: String, _ params: JSON?, id: JSON, sourceLocation: SourceLocation) async -> [JSON] {
        var message: JSONObject = ["jsonrpc": "2.0", "id": id, "method": .string(method)]
        if let params { message.append("params", params) }
        write(.object(message))
        return await barrier(sourceLocation)
    }

    package func takeMessages(sourceLocation: SourceLocation) async -> [JSON] { await barrier(sourceLocation) }

    package func finish(sourceLocation: SourceLocation) async {
        if broken == nil {
            let unread = await barrier(sourceLocation)
            if !unread.isEmpty {
                Issue.record(Comment(rawValue: "unfinished test:\n  messages nobody read: \(unread.count)"), sourceLocation: sourceLocation)
            }
        }
        try? input.close()
        let deadline = ContinuousClock.now + timeout
        while process.isRunning && ContinuousClock.now < deadline { await Task.yield() }
        if process.isRunning {
            Issue.record(Comment(rawValue: "the host did not exit within \(timeout) of the end of its input"), sourceLocation: sourceLocation)
            process.terminate()
        }
    }
}

/// What a wait for the host's next line found.
enum HostOutput {
    /// A message.
    case message(JSON)
    /// The end of the output: the host closed it, or exited.
    case ended
    /// Nothing before the deadline, the output still open.
    case timedOut
}

/// The lines of a pipe, parsed as JSON, read on a thread of their own.
final class LineReader: @unchecked Sendable {
    private struct State {
        var messages: [JSON] = []
        var ended = false
        var waiter: CheckedContinuation<Void, Never>?
    }

    private let state = Mutex(State())

    init(_ handle: FileHandle) {
        let thread = Thread { [weak self] in
            var pending: [UInt8] = []
            while true {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                pending += chunk
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = Array(pending[..<newline])
                    pending.removeSubrange(...newline)
                    if let message = try? JSON.parse(line) { self?.deliver(message) }
                }
            }
            self?.end()
        }
        thread.start()
    }

    private func deliver(_ message: JSON) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.messages.append(message)
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    private func end() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.ended = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// Wakes a waiter (its deadline passed).
    private func wake() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// The next message; or the end of the pipe, as soon as it ends; or the deadline passed.
    func next(until deadline: ContinuousClock.Instant) async -> HostOutput {
        // The deadline's own wake-up, for a host that writes nothing more.
        let watchdog = Task { [weak self] in
            try? await Task.sleep(until: deadline, clock: .continuous)
            self?.wake()
        }
        defer { watchdog.cancel() }
        while true {
            let taken = state.withLock { state -> (JSON?, Bool) in
                if !state.messages.isEmpty { return (state.messages.removeFirst(), false) }
                return (nil, state.ended)
            }
            if let message = taken.0 { return .message(message) }
            if taken.1 { return .ended }
            if ContinuousClock.now >= deadline { return .timedOut }
            // Woken by the next line, the end of the pipe, or the deadline.
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> Bool in
                    if !state.messages.isEmpty || state.ended { return true }
                    state.waiter = continuation
                    return false
                }
                if ready { continuation.resume() }
            }
        }
    }
}
