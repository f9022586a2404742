#if WebSocket
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization
@_spi(Transport) import VMHost
@_spi(Transport) import VMHostCore
@_spi(Transport) import VMHostEventLoop
@_spi(Transport) import VMHostWire

/// Serves protocol version 1 over WebSocket at `/rpc`, and a folder of static files at `/`.
///
/// A server is a supervisor and its workers (``WorkerPool``): the supervisor accepts the connections
/// and hands each to a worker, which serves it here. Each connection is a session with its own
/// ``Host`` made on the worker's host thread from the configuration `makeConfiguration` gives (given
/// the session's recording, if any), with
/// the caps of ``Options/sessionLimits``; the sessions of a worker share its host's single executor.
/// One JSON-RPC message or batch per text frame, in both
/// directions. A frame over ``Options/maxMessageBytes`` closes the connection with 1009, a binary
/// frame with 1003, invalid UTF-8 with 1007, an unmasked frame with 1002; closing the connection
/// disposes the session's view-models.
///
/// Every request must name the server in `Host` (``HandshakeGate``); the handshake is refused
/// with 403 when its `Origin` is neither the server's own origin nor one of
/// ``Options/allowedOrigins``, and with 401 when a ``Options/token`` is set and the handshake
/// carries neither `Authorization: Bearer <token>` nor `?token=<token>`. See protocol/SPEC.md,
/// "WebSocket transport".
@_spi(Transport)
public enum WebSocketTransport {
    public struct Options: Sendable {
        /// The address to listen on; loopback unless told otherwise.
        public var host: String = "127.0.0.1"
        public var port: Int = 8787
        /// Origins besides the server's own that may open a session (`http://localhost:3000`).
        public var allowedOrigins: [String] = []
        /// Names besides the loopback ones, IP addresses and the listen address that requests may
        /// give in `Host` (`vmhost.example`).
        public var allowedHosts: [String] = []
        /// When set, the handshake must carry it.
        public var token: String?
        /// The largest message (frame) accepted, in bytes.
        public var maxMessageBytes: Int = 4 * 1024 * 1024
        /// Replies and events a session may hold for a page that does not read them, in bytes;
        /// beyond it the session is closed.
        public var maxPendingBytes: Int = 16 * 1024 * 1024
        /// What one session may hold at once.
        public var sessionLimits = WebSocketTransport.defaultSessionLimits
        /// The time a connection has to be answered its first request (a handshake or a file),
        /// and the time an HTTP connection may stay open with no request, in milliseconds.
        public var httpTimeoutMilliseconds: Int64 = 10_000
        /// Connections open at once in this process; nil: by the descriptor limit
        /// (``connectionsWithinDescriptorLimit()``). The server's cap is its supervisor's (``WorkerPool``).
        public var maxConnections: Int?
        /// The folder served at `/`, if any.
        public var staticDirectory: String?
        /// Where `/` redirects when the folder has no index.html (the demo's page inside it).
        public var indexRedirect: String?
        /// Sees every message in and out (`--trace`): the direction ("in", "out") and the body.
        public var traceIncoming: (@Sendable (JSON) -> Void)?
        public var traceOutgoing: (@Sendable ([UInt8]) -> Void)?
        /// Runs once before the process exits after a signal (flushing a trace).
        public var beforeExit: (@Sendable () -> Void)?
        /// How long a resumable session waits for its page to come back after its connection
        /// dropped, in milliseconds; 0: no session is resumable (protocol/SPEC.md §12, "Resume").
        public var resumeGraceMilliseconds: Int64 = 30_000
        /// The bytes of output a resumable session keeps for a page that may not have received
        /// it; past it, a resume sends the current state instead (a resync).
        public var resumeBufferBytes = 1024 * 1024
        /// Sessions suspended at once in a worker; past it, the oldest is closed.
        public var maxSuspendedSessions = 1000
        /// The folder where each resumable session keeps what makes its screens again after the
        /// server restarted (`--session-dir`, protocol/SPEC.md §12, "After a restart"); nil: a
        /// restart ends every session.
        public var sessionDirectory: String?
        /// The app's secret member names (``ServerConfiguration/secretMembers``): a value holding
        /// one is never kept in ``sessionDirectory``.
        public var secretMembers: Set<String> = []
        /// Each session's recording, if any, asked for when the session opens, before its host
        /// is made (``SessionRecording``).
        public var recordSession: (@HostActor @Sendable () -> SessionRecording?)?

        public init() {}
    }

    /// The caps of a session unless told otherwise (protocol/SPEC.md §10).
    public static let defaultSessionLimits = Host.Limits(maxViewModels: 1000, maxSubscriptions: 1000, maxCommandsInFlight: 100)
    /// Descriptors kept for the server's own (event loops, backend connections, a state database)
    /// when the connections are capped by the descriptor limit.
    public static let reservedDescriptors = 64
    /// Members of a batch handled before the host thread turns to other sessions.
    public static let batchSlice = 16

    /// The cap of connections by the descriptor limit: the soft limit is first raised to the hard
    /// one; ``reservedDescriptors`` are kept, and half the rest is for connections, each of which
    /// may hold a second descriptor (a file being sent). At least 1 connection.
    public static func connectionsWithinDescriptorLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        let soft = UInt64(limit.rlim_cur)
        return max(1, (Int(min(soft, UInt64(Int32.max))) - reservedDescriptors) / 2)
    }

    /// Serves, as worker `worker` of a ``WorkerPool``, the connections its supervisor hands over,
    /// until SIGTERM or SIGINT (or the supervisor gone), then exits the process (protocol/SPEC.md
    /// §7, §12); with a link of ``WorkerLink/singleProcess(host:port:onListening:)``, the
    /// connections it accepts itself. `eventLoopThreads`: the threads that carry this worker's bytes.
    public static func run(
        options: Options, logger: Logger, worker: WorkerLink, eventLoopThreads: Int,
        makeConfiguration: @escaping @HostActor @Sendable (_ recorder: SessionRecorder?) -> Host.Configuration
    ) async throws {
        let limiter = ConnectionLimiter(maxConnections: options.maxConnections ?? connectionsWithinDescriptorLimit())
        let registry = SessionRegistry(
            options: options, makeConfiguration: makeConfiguration, logger: logger, limiter: limiter, worker: worker.index,
            link: worker)
        let gate = HandshakeGate(
            allowedOrigins: options.allowedOrigins, allowedHosts: options.allowedHosts, listenHost: options.host,
            token: options.token)
        // The supervisor forwards its signals; it decides when a second one ends the server. A
        // single process takes them itself.
        ServerShutdown.install(
            escalate: worker.isSingleProcess,
            stop: { EventLoop.shared.execute { HostActor.assumeIsolated { registry.table.stop(limiter: limiter) } } },
            beforeExit: options.beforeExit ?? {})

        let router = Router()
        router.add(middleware: StaticGuard(gate: gate, staticDirectory: options.staticDirectory))
        router.get("/rpc") { request, _ -> Response in
            // Reached only when the upgrade was refused, or without an upgrade.
            let verdict = gate.check(request.head)
            return Response(status: verdict.status ?? .upgradeRequired)
        }
        if let folder = options.staticDirectory {
            router.add(middleware: FileMiddleware(folder, searchForIndexHtml: true, logger: logger))
        }
        if let target = options.indexRedirect {
            router.get("/") { _, _ -> Response in Response(status: .found, headers: [.location: target]) }
        }

        let timeout = TimeAmount.milliseconds(options.httpTimeoutMilliseconds)
        var webSocket = WebSocketServerConfiguration(maxFrameSize: options.maxMessageBytes)
        webSocket.autoPing = .enabled(timePeriod: .seconds(30))
        // The reason of a close frame from the page must be UTF-8 too (text messages are checked
        // as they are joined, MessageAssembly).
        webSocket.validateUTF8 = true
        webSocket.closeTimeout = .milliseconds(SessionRegistry.closeTimeoutMilliseconds)
        let maxMessageBytes = options.maxMessageBytes
        // The worker that serves a session, in the answer to its handshake (protocol/SPEC.md §12).
        let workerHeader: HTTPFields = [HTTPField.Name.vmhostWorker: String(worker.index)]
        let shouldUpgrade: @Sendable (HTTPRequest, any Channel, Logger) async throws -> ShouldUpgradeResult<
            WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>
        > = { request, channel, _ in
            guard HandshakeGate.path(of: request) == "/rpc" else { return .dontUpgrade }
            let verdict = gate.check(request)
            if let status = verdict.status {
                // A refusal is the client's doing, not the server's: not an error.
                logger.debug("handshake refused with \(status.code): \(verdict.reason)")
                try? await HandshakeGate.refuse(channel: channel, status: status)
                return .dontUpgrade
            }
            let resume: ResumeRequest
            switch ResumeRequest.parse(path: request.path ?? "") {
            case .success(let request): resume = request
            case .failure(let malformed):
                logger.debug("handshake refused with 400: \(malformed.reason)")
                try? await HandshakeGate.refuse(channel: channel, status: .badRequest)
                return .dontUpgrade
            }
            let origin = request.headerFields[.origin]
            let upgrade = await registry.upgradeStarting(on: channel)
            // The session's reader, in place before the first frame is decoded.
            let reader = try await channel.eventLoop.submit {
                let reader = FrameReader<WebSocketSession>(eventLoop: channel.eventLoop, maxMessageBytes: maxMessageBytes)
                try channel.pipeline.syncOperations.addHandler(FrameReaderInstaller(reader))
                return reader.handle
            }.get()
            return .upgrade(workerHeader) { inbound, outbound, _ in
                try await registry.serve(
                    channel: channel, upgrade: upgrade, reader: reader, inbound: inbound, outbound: outbound,
                    maxMessageBytes: maxMessageBytes, resume: resume, origin: origin)
            }
        }
        let configuration = HTTP1WebSocketUpgradeChannel.Configuration(http1: .init(idleTimeout: timeout), ws: webSocket)
        let connection = GuardedChildChannel(
            inner: HTTP1WebSocketUpgradeChannel(
                responder: httpResponder(router.buildResponder(), logger: logger), configuration: configuration,
                shouldUpgrade: shouldUpgrade),
            limiter: limiter, timeout: timeout)

        let group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, eventLoopThreads))
        // The supervisor gone (killed): stop as at a signal.
        let handed = worker.connections(onSupervisorGone: { kill(getpid(), SIGTERM) })
        worker.ready()
        await withDiscardingTaskGroup { tasks in
            for await connectionHanded in handed {
                tasks.addTask {
                    await serve(connectionHanded, with: connection, group: group, logger: logger, worker: worker)
                }
            }
        }
        // The supervisor is gone and the signal's stop is under way: it exits the process.
        while true { try await Task.sleep(for: .seconds(3600)) }
    }

    /// Serves one connection the supervisor handed over, as a server's accepted connection is.
    private static func serve(
        _ handed: WorkerLink.Handed, with connection: GuardedChildChannel<HTTP1WebSocketUpgradeChannel>,
        group: MultiThreadedEventLoopGroup, logger: Logger, worker: WorkerLink
    ) async {
        // Its close is counted once, for the supervisor's balance and caps, whatever ends it.
        let counted = Atomic<Bool>(false)
        let value: GuardedChildChannel<HTTP1WebSocketUpgradeChannel>.Value
        do {
            value = try await ClientBootstrap(group: group)
                .channelOption(.allowRemoteHalfClosure, value: true)
                .channelOption(.tcpOption(.tcp_nodelay), value: 1)
                .withConnectedSocket(handed.descriptor) { channel in
                    counted.store(true, ordering: .relaxed)
                    channel.closeFuture.whenComplete { _ in  worker.connectionClosed() }
                    return connection.setup(channel: channel, logger: logger, refuse: handed.refuse)
                }
        } catch {
            // Refused at once (closed while it was registered), or never made a channel.
            if !counted.load(ordering: .relaxed) { worker.connectionClosed() }
            return
        }
        await connection.handle(value: value, logger: logger)
    }

    /// The HTTP side of a connection: the router's answer to each request, as a Hummingbird
    /// application answers (a `Date` header; an error that is no HTTP answer is a 500).
    private static func httpResponder(
        _ responder: RouterResponder<BasicRequestContext>, logger: Logger
    ) -> HTTPChannelHandler.Responder {
        let dates = HTTPDate()
        return { request, writer, channel in
            let context = BasicRequestContext(source: ApplicationRequestContextSource(channel: channel, logger: logger))
            var response: Response
            do {
                response = try await responder.respond(to: request, context: context)
            } catch let error as HTTPParserError {
                throw error
            } catch {
                logger.debug("unrecognised error: \(error)")
                response = Response(status: .internalServerError, body: .init())
            }
            response.headers[.date] = dates.now()
            do {
                try await writer.write(response: response.head, body: response.body)
            } catch is HTTPParserError {
                // Thrown on as it is, it would have another answer written.
                throw ResponseNotWritten()
            }
        }
    }

    private struct ResponseNotWritten: Error {}
}

extension HTTPField.Name {
    /// The number of the worker serving a session (``WorkerPool``), in the answer to its handshake.
    static let vmhostWorker = Self("VMHost-Worker")!
}

/// The `Date` of HTTP answers (RFC 9110 §5.6.7), made once a second.
final class HTTPDate: Sendable {
    private let cached = Mutex<(second: Int, text: String)>((-1, ""))

    func now() -> String {
        let second = time(nil)
        return cached.withLock { cached in
            if cached.second == second { return cached.text }
            var parts = tm()
            var now = second
            gmtime_r(&now, &parts)
            let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
            let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
            func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
            let text =
                "\(days[Int(parts.tm_wday) % 7]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon) % 12]) \(parts.tm_year + 1900) "
                + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
            cached = (second, text)
            return text
        }
    }
}
#endif
