import HTTPTypes
import Hummingbird
import HummingbirdCore
import HummingbirdWebSocket
import Logging
import NIOCore
import NIOHTTP1
import VMHostCore
import VMHostEventLoop
import VMHostWire

/// Serves protocol version 1 over WebSocket at `/rpc`, and a folder of static files at `/`.
///
/// Each connection is a session with its own ``Host`` made by `makeHost` on the host thread; all
/// sessions share the host's single executor. One JSON-RPC message or batch per text frame, in
/// both directions. A frame over ``Options/maxMessageBytes`` closes the connection with 1009, a
/// binary frame with 1003; closing the connection disposes the session's view-models.
///
/// The handshake is refused with 403 when its `Origin` is neither the server's own origin nor one
/// of ``Options/allowedOrigins``, and with 401 when a ``Options/token`` is set and the handshake
/// carries neither `Authorization: Bearer <token>` nor `?token=<token>`. See protocol/SPEC.md,
/// "WebSocket transport".
public enum WebSocketTransport {
    public struct Options: Sendable {
        /// The address to listen on; loopback unless told otherwise.
        public var host: String = "127.0.0.1"
        public var port: Int = 8787
        /// Origins besides the server's own that may open a session (`http://localhost:3000`).
        public var allowedOrigins: [String] = []
        /// When set, the handshake must carry it.
        public var token: String?
        /// The largest message (frame) accepted, in bytes.
        public var maxMessageBytes: Int = 4 * 1024 * 1024
        /// Replies and events a session may hold for a page that does not read them, in bytes;
        /// beyond it the session is closed (1008).
        public var maxPendingBytes: Int = 16 * 1024 * 1024
        /// The folder served at `/`, if any.
        public var staticDirectory: String?
        /// Where `/` redirects when the folder has no index.html (the demo's page inside it).
        public var indexRedirect: String?
        /// Sees every message in and out (`--trace`): the direction ("in", "out") and the body.
        public var traceIncoming: (@Sendable (JSON) -> Void)?
        public var traceOutgoing: (@Sendable ([UInt8]) -> Void)?
        /// A tap of each session's traffic (a recording), asked for when the session's host is made.
        public var tapSession: (@HostActor @Sendable (Host) -> SessionTap?)?

        public init() {}
    }

    /// Runs the server until SIGTERM or SIGINT. `onListening` is called with the bound port.
    public static func run(
        options: Options, logger: Logger, makeHost: @escaping @HostActor @Sendable () -> Host,
        onListening: @escaping @Sendable (Int) -> Void = { _ in }
    ) async throws {
        let registry = SessionRegistry(options: options, makeHost: makeHost, logger: logger)
        let gate = HandshakeGate(allowedOrigins: options.allowedOrigins, token: options.token)

        let router = Router()
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

        var webSocket = WebSocketServerConfiguration(maxFrameSize: options.maxMessageBytes)
        webSocket.autoPing = .enabled(timePeriod: .seconds(30))
        let maxMessageBytes = options.maxMessageBytes
        let server = HTTPServerBuilder.http1WebSocketUpgrade(configuration: .init(ws: webSocket)) {
            request, channel, _ -> ShouldUpgradeResult<WebSocketDataHandler<HTTP1WebSocketUpgradeChannel.Context>> in
            guard HandshakeGate.path(of: request) == "/rpc" else { return .dontUpgrade }
            if let status = gate.check(request).status {
                try? await HandshakeGate.refuse(channel: channel, status: status)
                return .dontUpgrade
            }
            return .upgrade([:]) { inbound, outbound, _ in
                try await registry.serve(channel: channel, inbound: inbound, outbound: outbound, maxMessageBytes: maxMessageBytes)
            }
        }
        let app = Application(
            router: router, server: server,
            configuration: .init(address: .hostname(options.host, port: options.port), serverName: nil),
            onServerRunning: { channel in onListening(channel.localAddress?.port ?? options.port) },
            logger: logger)
        try await app.runService()
    }
}

/// The handshake's checks: origin and token.
struct HandshakeGate: Sendable {
    let allowedOrigins: Set<String>
    let token: String?

    init(allowedOrigins: [String], token: String?) {
        self.allowedOrigins = Set(allowedOrigins.map { Self.normalized($0) })
        self.token = token
    }

    struct Verdict {
        /// Nil when the handshake may proceed.
        var status: HTTPResponse.Status?
    }

    func check(_ request: HTTPRequest) -> Verdict {
        if let origin = request.headerFields[.origin] {
            let own = request.authority.map { "http://" + $0.lowercased() }
            let given = Self.normalized(origin)
            guard given == own || allowedOrigins.contains(given) else { return Verdict(status: .forbidden) }
        }
        if let token {
            let bearer = request.headerFields[.authorization].flatMap { value -> String? in
                value.hasPrefix("Bearer ") ? String(value.dropFirst(7)) : nil
            }
            let query = Self.queryValue("token", in: request.path ?? "")
            guard Self.same(bearer, token) || Self.same(query, token) else { return Verdict(status: .unauthorized) }
        }
        return Verdict(status: nil)
    }

    /// Answers a refused handshake with `status` and closes the connection. (A refused upgrade is
    /// otherwise answered 400 whatever the reason: the answer is written here, below the HTTP
    /// encoder, before the upgrade handler answers on a connection already closed.)
    static func refuse(channel: any Channel, status: HTTPResponse.Status) async throws {
        let text = "HTTP/1.1 \(status.code) \(status.reasonPhrase)\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        try await channel.eventLoop.flatSubmit {
            do {
                let context = try channel.pipeline.syncOperations.context(handlerType: HTTPResponseEncoder.self)
                return context.writeAndFlush(NIOAny(ByteBuffer(string: text))).flatMap { channel.close() }
            } catch {
                return channel.eventLoop.makeFailedFuture(error)
            }
        }.get()
    }

    static func normalized(_ origin: String) -> String {
        var text = origin.lowercased()
        while text.hasSuffix("/") { text.removeLast() }
        return text
    }

    static func path(of request: HTTPRequest) -> Substring {
        let full = request.path ?? ""
        return full.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
    }

    /// The value of `name` in the query of `path`, percent-decoded.
    static func queryValue(_ name: String, in path: String) -> String? {
        guard let mark = path.firstIndex(of: "?") else { return nil }
        for pair in path[path.index(after: mark)...].split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            if parts.first == Substring(name) { return parts.count > 1 ? percentDecoded(parts[1]) : "" }
        }
        return nil
    }

    static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next(), let low = iterator.next(),
                    let value = UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)
                else { return nil }
                bytes.append(value)
            } else {
                bytes.append(byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
            }
        }
        return String(validating: bytes, as: UTF8.self)
    }

    /// Compares without stopping at the first difference.
    static func same(_ given: String?, _ expected: String) -> Bool {
        guard let given else { return false }
        let a = Array(given.utf8), b = Array(expected.utf8)
        var difference = a.count ^ b.count
        for index in 0..<max(a.count, b.count) {
            difference |= Int((index < a.count ? a[index] : 0) ^ (index < b.count ? b[index] : 0))
        }
        return difference == 0
    }
}

/// The sessions, on the host thread, and the idle hook that wakes their writers.
final class SessionRegistry: Sendable {
    let options: WebSocketTransport.Options
    let makeHost: @HostActor @Sendable () -> Host
    let logger: Logger

    init(options: WebSocketTransport.Options, makeHost: @escaping @HostActor @Sendable () -> Host, logger: Logger) {
        self.options = options
        self.makeHost = makeHost
        self.logger = logger
    }

    @HostActor static var sessions: [Int: WebSocketSession] = [:]
    /// The sessions that queued output since their writers were last woken, each once.
    @HostActor static var withOutput: [WebSocketSession] = []
    static let inbox = Inbox()

    /// Handles what the sessions received, in order, until the inbox is empty; wakes the writers
    /// after each batch, so that a steady stream of input does not hold the output back.
    @HostActor
    static func pump() {
        while true {
            let batch = inbox.takeAll()
            if batch.isEmpty { return }
            for (session, bytes) in batch { session.receive(bytes) }
            wakeWriters()
        }
    }
    @HostActor static var nextID = 0
    @HostActor static var idleHook: Int?

    /// Runs on the host thread.
    static func onHost<T: Sendable>(_ body: @escaping @HostActor @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            EventLoop.shared.execute { continuation.resume(returning: HostActor.assumeIsolated { body() }) }
        }
    }

    func serve(
        channel: any Channel, inbound: WebSocketInboundStream, outbound: WebSocketOutboundWriter, maxMessageBytes: Int
    ) async throws {
        let options = options
        let makeHost = makeHost
        let logger = logger
        let session = await Self.onHost { () -> WebSocketSession in
            Self.installIdleHook(maxPendingBytes: options.maxPendingBytes, logger: logger)
            Self.nextID += 1
            let host = makeHost()
            let tap = options.tapSession?(host)
            let trace = options.traceIncoming
            if trace != nil || tap != nil {
                host.engine.tracer = { message in
                    trace?(message)
                    tap?.incoming(message)
                }
            }
            let session = WebSocketSession(
                id: Self.nextID, host: host, maxMessageBytes: maxMessageBytes, channel: channel, tap: tap)
            host.onExit = { [weak session] _ in session?.channel.close(promise: nil) }
            Self.sessions[session.id] = session
            logger.debug("session \(session.id) opened")
            return session
        }
        defer {
            EventLoop.shared.execute {
                HostActor.assumeIsolated {
                    session.close()
                    Self.sessions[session.id] = nil
                }
            }
        }
        let observe = Self.observer(trace: options.traceOutgoing, tap: session.tap)
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await session.writeOutput(to: outbound, observe: observe) }
            for try await message in inbound.messages(maxSize: maxMessageBytes) {
                switch message {
                case .text(let text):
                    if Self.inbox.append(session, Array(text.utf8)) {
                        EventLoop.shared.execute { HostActor.assumeIsolated { Self.pump() } }
                    }
                    await session.credit.received()
                case .binary:
                    try await outbound.close(.unacceptableData, reason: "binary frames are not accepted: send JSON-RPC as text")
                    group.cancelAll()
                    return
                }
            }
            group.cancelAll()
        }
    }

    /// What sees each body written to a session: the trace's and the tap's, if any.
    static func observer(trace: (@Sendable ([UInt8]) -> Void)?, tap: SessionTap?) -> (@Sendable ([UInt8]) -> Void)? {
        guard trace != nil || tap != nil else { return nil }
        return { body in
            trace?(body)
            tap?.outgoing(body)
        }
    }

    @HostActor static var maxPendingBytes = 16 * 1024 * 1024
    @HostActor static var logger = Logger(label: "vmhost-web")

    @HostActor
    static func installIdleHook(maxPendingBytes: Int, logger: Logger) {
        guard idleHook == nil else { return }
        self.maxPendingBytes = maxPendingBytes
        self.logger = logger
        idleHook = EventLoop.shared.addIdleHook { wakeWriters() }
    }

    /// Wakes the writer of every session that queued output since the last call: the cost is the
    /// sessions with output, not every session. Closes a session whose page let more than
    /// ``maxPendingBytes`` of replies and events pile up (checked as it queues more).
    @HostActor
    static func wakeWriters() {
        guard !withOutput.isEmpty else { return }
        let listed = withOutput
        withOutput.removeAll(keepingCapacity: listed.count <= 1024)
        for session in listed {
            session.hasOutputListed = false
            guard !session.closed, session.queue.pendingCount > 0 else { continue }
            if session.queue.pendingPlainBytes > maxPendingBytes {
                logger.warning("session \(session.id): more than \(maxPendingBytes) bytes of output not read; closing it")
                session.close()
                session.channel.close(promise: nil)
                continue
            }
            session.wake.yield()
        }
    }
}
