import Testing
@_spi(Transport) import VMHost
@_spi(Transport) package import VMHostCore
@_spi(Transport) import VMHostEventLoop
@_spi(Transport) import VMHostWire

/// A host driven in-process, as the stdio transport drives it, for tests.
///
/// Messages go in through the same ``Connection`` (framing, one frame at a time, work drained
/// between frames); what the host writes is taken from its output queue and parsed. A test can
/// stop reading (``pauseReading()``) to act as a slow client: the queue then merges changes.
///
/// ```swift
/// let clock = ManualClock()
/// let client = InProcessConnection(kinds: [TodoListViewModel.factory(api: backend)], clock: clock)
/// let reply = await client.request("vm.create", ["kind": "TodoList"])
/// #expect(reply.result?["vm"] == "vm1")
/// await client.advance(ms: 200)       // control.clock.advance: latencies and timers due fire
/// await client.finish()               // every message was read, no request is pending
/// ```
///
/// Parallel suites: each connection has its own host, clock and output queue; connections share
/// only the host thread, so tests running at once cannot see each other's messages.
public final class InProcessConnection: Sendable {
    /// The host under test.
    package let host: Host
    private let connection: Connection
    private let received = ReceivedMessages()

    /// A host serving `kinds` on `clock` (a new ``ManualClock`` when nil), with the `control.*`
    /// methods (`controls` added) unless `testControls` is false.
    @HostActor
    public convenience init(
        kinds: [ViewModelFactory], clock: (any HostClock)? = nil, testControls: Bool = true, controls: [TestControl] = []
    ) {
        self.init(
            configuration: .init(
                clock: clock ?? ManualClock(), factories: kinds, testControls: testControls,
                controlMethods: controls.map { ($0.name, $0.handler) }))
    }

    /// A host of `configuration`: its kinds, clock, locales, error kinds and controls as given.
    @HostActor
    package init(configuration: Host.Configuration, framing: Framing = .ndjson, maxMessageBytes: Int = 4 << 20) {
        host = Host(configuration: configuration)
        connection = Connection(host: host, framing: framing, maxMessageBytes: maxMessageBytes)
    }

    /// The host an app's `server` makes when started with `arguments` (its own options and the
    /// standard ones, `--clock manual --test-controls` added unless given): its kinds, locales, error
    /// kinds and test controls, exactly as its `main` serves them. Throws the usage error the
    /// command line would exit 64 with.
    @HostActor
    public convenience init(server: Server, arguments: [String] = []) throws(UsageError) {
        var arguments = arguments
        if !arguments.contains("--clock") { arguments += ["--clock", "manual"] }
        if !arguments.contains("--test-controls") { arguments.append("--test-controls") }
        let app = try server.prepareApp(arguments: arguments)
        self.init(configuration: app.host, framing: app.framing, maxMessageBytes: app.maxMessageBytes)
    }

    /// The manual clock of this host (traps if it runs on another clock).
    @HostActor
    public var clock: ManualClock { host.configuration.clock as! ManualClock }

    // MARK: Sending

    /// Feeds raw bytes, as read from a pipe, and waits until the host handled them.
    package func feed(_ bytes: [UInt8]) async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            EventLoop.shared.execute { [connection] in
                HostActor.assumeIsolated {
                    bytes.withUnsafeBytes { connection.consume($0) }
                }
                done.resume()
            }
        }
    }

    /// Feeds one message as an ndjson line.
    package func feed(_ message: JSON) async {
        await feed(message.serialized() + [UInt8(ascii: "\n")])
    }

    private let ids = IDCounter()

    /// Sends a request and returns every message written up to and including its response. A
    /// `vm.dispose` that succeeds fails the test (at `sourceLocation`) when anything still holds the
    /// view-model once the work its disposal cancelled has unwound, as ``ViewModelTest``'s
    /// `finish` does.
    @discardableResult
    public func request(
        _ method: String, _ params: JSON? = nil, id: JSON? = nil, sourceLocation: SourceLocation = #_sourceLocation
    ) async -> Exchange {
        let requestID = id ?? .int(ids.next())
        var message: JSONObject = ["jsonrpc": "2.0", "id": requestID, "method": .string(method)]
        if let params { message.append("params", params) }
        let release = method == "vm.dispose" ? await ReleaseWatch(host: host, handle: params?["vm"]?.stringValue) : nil
        await feed(.object(message))
        let exchange = Exchange(id: requestID, messages: output())
        if let release, exchange.result != nil, let problem = await release.problem(within: .seconds(5)) {
            Issue.record(Comment(rawValue: problem), sourceLocation: sourceLocation)
        }
        return exchange
    }

    /// Sends a notification and returns what was written meanwhile.
    @discardableResult
    public func notify(_ method: String, _ params: JSON? = nil, sourceLocation: SourceLocation = #_sourceLocation) async -> [JSON] {
        var message: JSONObject = ["jsonrpc": "2.0", "method": .string(method)]
        if let params { message.append("params", params) }
        await feed(.object(message))
        return output()
    }

    /// Sends a request without waiting for its response (for commands that end later); returns
    /// what was written meanwhile.
    @discardableResult
    public func start(_ method: String, _ params: JSON? = nil, id: JSON, sourceLocation: SourceLocation = #_sourceLocation) async -> [JSON] {
        var message: JSONObject = ["jsonrpc": "2.0", "id": id, "method": .string(method)]
        if let params { message.append("params", params) }
        await feed(.object(message))
        return output()
    }

    /// Moves the manual clock through the wire method and returns everything written.
    @discardableResult
    public func advance(ms: Int, sourceLocation: SourceLocation = #_sourceLocation) async -> Exchange {
        await request("control.clock.advance", ["ms": .int(Int64(ms))], sourceLocation: sourceLocation)
    }

    // MARK: Reading

    /// Every message written since the last take, parsed, in order. Empty while reading is paused.
    public func takeMessages() -> [JSON] { output() }

    /// ``takeMessages()``; nothing here waits, so nothing fails at `sourceLocation`.
    public func takeMessages(sourceLocation: SourceLocation) -> [JSON] { output() }

    private func output() -> [JSON] {
        if received.paused { return [] }
        return host.outputQueue.takeAll().map { try! JSON.parse($0) }
    }

    /// Ends a test: fails it when the host wrote messages no take has read, when a request has no
    /// reply yet, or when the manual clock holds timers (latencies, countdowns still running).
    @HostActor
    public func finish(sourceLocation: SourceLocation = #_sourceLocation) async {
        var problems: [String] = []
        let unread = host.outputQueue.pendingCount
        if unread > 0 { problems.append("messages nobody read: \(unread)") }
        if host.engine.pendingCount > 0 { problems.append("requests without a reply: \(host.engine.pendingCount)") }
        if let clock = host.configuration.clock as? ManualClock, clock.pendingCount > 0 {
            problems.append("timers still armed: \(clock.pendingCount)")
        }
        guard problems.isEmpty else {
            Issue.record(Comment(rawValue: "unfinished test:\n  " + problems.joined(separator: "\n  ")), sourceLocation: sourceLocation)
            return
        }
    }

    /// Stops taking output: the host's queue fills and merges as with a client that stopped reading.
    package func pauseReading() {
        received.paused = true
        host.outputQueue.setStalled(true)
    }

    /// Takes output again after ``pauseReading()``.
    package func resumeReading() {
        received.paused = false
        host.outputQueue.setStalled(false)
    }

    /// Entries waiting in the output queue (bounded while paused).
    package var pendingOutputCount: Int { host.outputQueue.pendingCount }
}

/// A view-model about to be disposed, watched without holding it: whether anything still holds it
/// once `vm.dispose` answered and the work its disposal cancelled unwound.
@HostActor
private final class ReleaseWatch {
    private weak var instance: AnyObject?
    private let context: ViewModelContext
    private let kind: String
    private let handle: String

    init?(host: Host, handle: String?) {
        guard let handle, let live = host.liveViewModel(handle) else { return nil }
        (instance, context, kind, self.handle) = (live.instance, live.context, live.kind, handle)
    }

    /// What holds the view-model, once the cancelled work has unwound (or `limit` of real time
    /// passed: then the work is named instead).
    func problem(within limit: Duration) async -> String? {
        let deadline = ContinuousClock.now + limit
        while context.hasLiveTasks {
            if ContinuousClock.now >= deadline { return "\(kind) \(handle): its work did not end within \(limit) of vm.dispose" }
            await Task.yield()
        }
        guard instance != nil else { return nil }
        return "\(kind) \(handle) outlived vm.dispose: something still holds it (a closure that captures the view-model "
            + "instead of taking it as its parameter, or an observer of a shared object not ended in onDispose)"
    }
}

/// The messages written while one request was handled, ending with its response (if it came).
public struct Exchange: Sendable {
    /// The request's id.
    public let id: JSON
    /// Every message written, in order.
    public let messages: [JSON]

    /// The response to the request, if it was written.
    public var response: JSON? {
        messages.last { $0["id"] == id && $0["method"] == nil }
    }
    /// The response's `result`, if it succeeded.
    public var result: JSON? { response?["result"] }
    /// The response's `error`, if it failed.
    public var error: JSON? { response?["error"] }
    /// The code of ``error``.
    public var errorCode: Int64? { error?["code"]?.intValue }
    /// Notifications written before the response.
    public var notifications: [JSON] { messages.filter { $0["method"] != nil } }
    /// The `params` of each `vm.changed` notification, in order.
    public var changes: [JSON] { notifications.filter { $0["method"] == "vm.changed" }.compactMap { $0["params"] } }
    /// The `params` of each `vm.event` notification, in order.
    public var events: [JSON] { notifications.filter { $0["method"] == "vm.event" }.compactMap { $0["params"] } }
}

final class IDCounter: @unchecked Sendable {
    private let lock = NSLockLike()
    private var value: Int64 = 0
    func next() -> Int64 { lock.withLock { value += 1; return value } }
}

final class ReceivedMessages: @unchecked Sendable {
    private let lock = NSLockLike()
    private var _paused = false
    var paused: Bool {
        get { lock.withLock { _paused } }
        set { lock.withLock { _paused = newValue } }
    }
}
