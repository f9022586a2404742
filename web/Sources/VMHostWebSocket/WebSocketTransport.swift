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
@_spi(Transport) import VMHostCore
@_spi(Transport) import VMHostEventLoop
@_spi(Transport) import VMHostWire

/// Serves protocol version 1 over WebSocket at `/rpc`, and a folder of static files at `/`.
///
/// Each connection is a session with its own ``Host`` made on the host thread from the
/// configuration `makeConfiguration` gives, with the caps of ``Options/sessionLimits``; all sessions
/// share the host's single executor. One JSON-RPC message or batch per text frame, in both
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
        /// Connections open at once; nil: by the descriptor limit (``connectionsWithinDescriptorLimit()``).
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
        /// A tap of each session's traffic (a recording), asked for when the session's host is made.
        public var tapSession: (@HostActor @Sendable (Host) -> SessionTap?)?

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

    /// Runs the server until SIGTERM or SIGINT, then exits the process (protocol/SPEC.md §7).
    /// `onListening` is called with the bound port.
    public static func run(
        options: Options, logger: Logger,
        makeConfiguration: @escaping @HostActor @Sendable () -> Host.Configuration,
        onListening: @escaping @Sendable (Int) -> Void = { _ in }
    ) async throws {
        let limiter = ConnectionLimiter(maxConnections: options.maxConnections ?? connectionsWithinDescriptorLimit())
        let registry = SessionRegistry(options: options, makeConfiguration: makeConfiguration, logger: logger, limiter: limiter)
        let gate = HandshakeGate(
            allowedOrigins: options.allowedOrigins, allowedHosts: options.allowedHosts, listenHost: options.host,
            token: options.token)
        ServerShutdown.install(
            stop: { EventLoop.shared.execute { HostActor.assumeIsolated { SessionRegistry.stop(limiter: limiter) } } },
            beforeExit: options.beforeExit ?? {})

        let router = Router()
        router.add(middleware: StaticGuard(gate: gate))
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
            return .upgrade([:]) { inbound, outbound, _ in
                try await registry.serve(channel: channel, inbound: inbound, outbound: outbound, maxMessageBytes: maxMessageBytes)
            }
        }
        let configuration = HTTP1WebSocketUpgradeChannel.Configuration(http1: .init(idleTimeout: timeout), ws: webSocket)
        let server = HTTPServerBuilder { responder in
            GuardedChildChannel(
                inner: HTTP1WebSocketUpgradeChannel(responder: responder, configuration: configuration, shouldUpgrade: shouldUpgrade),
                limiter: limiter, timeout: timeout)
        }
        let app = Application(
            router: router, server: server,
            configuration: .init(address: .hostname(options.host, port: options.port), serverName: nil),
            onServerRunning: { channel in onListening(channel.localAddress?.port ?? options.port) },
            logger: logger)
        // Signals are this server's own (above), not the service group's.
        try await app.runService(gracefulShutdownSignals: [])
    }
}
