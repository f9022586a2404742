import VMHostEventLoop
import VMHostRuntime
import VMHostWire

/// An app's HTTP client, called from a kind's `Command` and `Work` bodies: the call suspends its
/// task, never the host thread, and the outcome comes back in one of the host's turns.
///
/// ```swift
/// let api = HTTPClient(baseURL: HTTPURL("https://chat.example/api")!, clock: clock, failures: ChatFailures())
/// api.headers["Authorization"] = "Bearer \(token)"          // every later call, this origin only
///
/// let page: MessagePage = try await api.get("/threads/7/messages", query: [("before", cursor)])
/// let sent: Message = try await api.send(try HTTPRequest(.post, "/threads/7/messages", json: draft))
/// ```
///
/// - **Cancellation**: cancelling the calling task (a command's `latest` restart, a
///   `$/cancelRequest`, `vm.dispose`) aborts the transfer at once: its connection is closed, the
///   server sees it, and the call throws `CancellationError`.
/// - **Deadline**: ``timeout`` (or the request's own) runs on the host's ``HostClock``: under a
///   `ManualClock` a call times out only when a test moves the clock past it. It covers the whole
///   call, redirects included, and fails as ``HTTPError/Kind/timedOut`` with the transfer aborted.
/// - **Size bound**: a response body over ``maxResponseBytes`` aborts the transfer and fails as
///   ``HTTPError/Kind/responseTooLarge``; the head is bounded to 64 KiB.
/// - **Redirects**: ``redirects`` (none followed by default); credentials never go to another origin.
/// - **Headers**: ``headers`` go with every call to the base URL's origin (never elsewhere), a
///   request's own are set over them. A field holding a line break is never sent.
/// - **Errors**: ``failures`` turns statuses, envelopes and transport failures into the app's own
///   errors (``HTTPFailureMapping``).
///
/// The engine is libcurl, loaded with `dlopen` by the first call of the process, with one thread
/// and a connection cache shared by every client (reused connections): a host that never calls
/// loads no library and starts no thread, so start-up and idle memory are those of a host without
/// HTTP. Where libcurl is not installed every call fails as ``HTTPError/Kind/unavailable``.
/// Bodies are written and read with the framework's ``JSON`` (no Foundation).
///
/// The engine is a ``HTTPTransport``: a client made while the server records a session
/// (`--record`) keeps its exchanges in the recording, and one made while it replays one
/// (`--http-replay FILE`) answers from it with no server (protocol/backend.md, "Recorded HTTP").
@HostActor
public final class HTTPClient {
    /// The largest response body read by default: 8 MiB.
    public nonisolated static let defaultMaxResponseBytes = 8 * 1024 * 1024

    /// Where a request's path is resolved; its origin is the one ``headers`` are sent to.
    public let baseURL: HTTPURL
    /// The clock deadlines run on: the host's (a `ManualClock` in tests).
    public let clock: any HostClock
    /// How long a call may take, on ``clock``, unless the request says otherwise.
    public var timeout: Duration
    /// The largest response body accepted, in bytes.
    public var maxResponseBytes: Int
    /// Header fields sent with every request to ``baseURL``'s origin (authentication, a device id).
    ///
    /// - Important: May hold secrets: never log them.
    public var headers: HTTPHeaders
    /// Which redirects are followed.
    public var redirects: HTTPRedirectPolicy
    /// How failures become the app's errors.
    public var failures: any HTTPFailureMapping

    /// What carries the calls: the one given, or libcurl; wrapped by the server's while it
    /// records or replays a session (``HTTPSessionTransport``).
    private let transport: any HTTPTransport

    /// A client of the server at `baseURL`. Nothing is loaded or started before the first call.
    ///
    /// `transport`: what carries the calls (a test's stub); nil for libcurl. While the server
    /// records a session or replays one, it takes the client's calls around this one.
    public convenience init(
        baseURL: HTTPURL, clock: any HostClock, timeout: Duration = .seconds(15),
        maxResponseBytes: Int = HTTPClient.defaultMaxResponseBytes, headers: HTTPHeaders = [:],
        redirects: HTTPRedirectPolicy = .none, failures: any HTTPFailureMapping = DefaultHTTPFailures(),
        transport: (any HTTPTransport)? = nil
    ) {
        self.init(
            baseURL: baseURL, clock: clock, timeout: timeout, maxResponseBytes: maxResponseBytes, headers: headers,
            redirects: redirects, failures: failures, transport: transport ?? CurlHTTPTransport(engine: nil))
    }

    /// A client on `engine` (tests: one whose library is missing); nil for the process's.
    convenience init(
        baseURL: HTTPURL, clock: any HostClock, timeout: Duration, maxResponseBytes: Int, headers: HTTPHeaders,
        redirects: HTTPRedirectPolicy, failures: any HTTPFailureMapping, engine: CurlEngine?
    ) {
        self.init(
            baseURL: baseURL, clock: clock, timeout: timeout, maxResponseBytes: maxResponseBytes, headers: headers,
            redirects: redirects, failures: failures, transport: CurlHTTPTransport(engine: engine))
    }

    private init(
        baseURL: HTTPURL, clock: any HostClock, timeout: Duration, maxResponseBytes: Int, headers: HTTPHeaders,
        redirects: HTTPRedirectPolicy, failures: any HTTPFailureMapping, transport: any HTTPTransport
    ) {
        self.baseURL = baseURL
        self.clock = clock
        self.timeout = timeout
        self.maxResponseBytes = max(0, maxResponseBytes)
        self.headers = headers
        self.redirects = redirects
        self.failures = failures
        self.transport = HTTPSessionTransport.current?(transport) ?? transport
    }

    // MARK: Calls

    /// Sends `request` and returns its response once ``failures`` accepted it.
    ///
    /// Throws `CancellationError` when the calling task is cancelled, else the error ``failures``
    /// makes of what went wrong.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let response: HTTPResponse
        do {
            response = try await exchange(request)
        } catch let failure as HTTPError {
            throw failures.error(for: failure)
        }
        try failures.check(response)
        return response
    }

    /// Sends `request` and decodes its body as `Value`; a body that does not fit goes through
    /// ``failures`` as ``HTTPError/Kind/undecodable``.
    public func send<Value: Decodable>(_ request: HTTPRequest, as type: Value.Type = Value.self) async throws -> Value {
        let response = try await send(request)
        do {
            return try response.decode(type)
        } catch {
            throw failures.error(for: error)
        }
    }

    /// `GET target` decoded as `Value`.
    public func get<Value: Decodable>(
        _ target: String, query: [(String, String)] = [], headers: HTTPHeaders = [:], as type: Value.Type = Value.self
    ) async throws -> Value {
        try await send(HTTPRequest(.get, target, query: query, headers: headers), as: type)
    }

    /// `method target` with `body` as JSON, the response decoded as `Value`.
    public func send<Body: Encodable, Value: Decodable>(
        _ method: HTTPMethod, _ target: String, json body: Body, headers: HTTPHeaders = [:], as type: Value.Type = Value.self
    ) async throws -> Value {
        let request: HTTPRequest
        do {
            request = try HTTPRequest(method, target, headers: headers, json: body)
        } catch {
            throw failures.error(for: error)
        }
        return try await send(request, as: type)
    }

    // MARK: The exchange

    /// The call of `request` through the transport; the response as it came (no mapping).
    func exchange(_ request: HTTPRequest) async throws -> HTTPResponse {
        try Task.checkCancellation()
        let hop = try prepare(request)
        return try await transport.carry(
            HTTPCall(
                method: hop.method, url: hop.url, headers: hop.headers, body: hop.body, timeout: request.timeout ?? timeout,
                maxResponseBytes: maxResponseBytes, redirects: redirects, clock: clock))
    }

    /// The first hop of `request`: its URL, and the client's headers under its own when it goes to
    /// the base URL's origin.
    private func prepare(_ request: HTTPRequest) throws(HTTPError) -> Hop {
        var target = request.target
        if !request.query.isEmpty {
            target += (target.contains("?") ? "&" : "?") + URLComponentEncoding.query(request.query.map { ($0.name, $0.value) })
        }
        let url: HTTPURL?
        if target.hasPrefix("/") {
            url = baseURL.appending(target)
        } else {
            url = HTTPURL(target)
        }
        guard let url else { throw HTTPError(.invalidRequest, "the request's target is not a path or an http(s) URL") }
        let fields = url.isSameOrigin(as: baseURL) ? headers.merging(request.headers) : request.headers
        return try Hop(method: request.method, url: url, headers: fields, body: request.body)
    }
}

/// The transport of libcurl: redirects followed by the policy, the whole call raced against the
/// deadline on the host's clock.
@HostActor
final class CurlHTTPTransport: HTTPTransport {
    /// The engine of a test; nil for the process's, which the first call makes (``CurlEngine/shared``
    /// is not touched before: it loads libcurl and starts a thread).
    private let ownEngine: CurlEngine?

    init(engine: CurlEngine?) { ownEngine = engine }

    func carry(_ call: HTTPCall) async throws -> HTTPResponse {
        try Task.checkCancellation()
        var hop = try Hop(method: call.method, url: call.url, headers: call.headers, body: call.body)
        let current = CurrentTransfer()
        let engine = ownEngine ?? CurlEngine.shared
        let clock = call.clock
        let deadline = clock.schedule(after: call.timeout) {
            current.timedOut = true
            current.transfer?.finish(.failure(HTTPError.timedOut), abortingOn: engine)
        }
        defer { clock.cancel(deadline) }
        let redirects = call.redirects
        var redirectsLeft = redirects.maxRedirects
        while true {
            let transfer = CurlTransfer(
                url: hop.url.text, method: hop.method.rawValue, headers: hop.headerLines, body: hop.body,
                maxResponseBytes: call.maxResponseBytes, backstopMilliseconds: backstopMilliseconds(call))
            current.transfer = transfer
            let response = try await transfer.run(on: engine).get()
            current.transfer = nil
            guard [301, 302, 303, 307, 308].contains(response.status), redirects.maxRedirects > 0,
                  let location = response.headers["Location"]
            else { return response }
            guard redirectsLeft > 0 else {
                throw HTTPError(.invalidRequest, "more than \(redirects.maxRedirects) redirects")
            }
            redirectsLeft -= 1
            try Task.checkCancellation()
            if current.timedOut { throw HTTPError.timedOut }
            hop = try hop.redirected(status: response.status, location: location, dropping: redirects.droppedAcrossOrigins)
        }
    }

    /// libcurl's own deadline: a backstop only, far behind the host clock's. None on a manual
    /// clock: there time moves only when told, and a second clock running in real time would end a
    /// call that a slow test run has not timed out yet (0: libcurl sets no deadline).
    private func backstopMilliseconds(_ call: HTTPCall) -> Int {
        guard !(call.clock is ManualClock) else { return 0 }
        let seconds = call.timeout.components.seconds
        return max(30_000, Int(min(max(seconds, 0), 43_200)) * 2000)
    }
}

/// The transfer of a call in flight, for its deadline to abort.
@HostActor
private final class CurrentTransfer {
    var transfer: CurlTransfer?
    var timedOut = false
}

/// One request on the wire: a call's first, or a redirect's.
private struct Hop {
    var method: HTTPMethod
    var url: HTTPURL
    var headers: HTTPHeaders
    var body: [UInt8]?
    /// `Name: value` lines, checked.
    let headerLines: [String]

    init(method: HTTPMethod, url: HTTPURL, headers: HTTPHeaders, body: [UInt8]?) throws(HTTPError) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        var lines: [String] = []
        for field in headers {
            // A line break would cut the field in two and add one of the server's choosing; the
            // error names the field, never its value (it may be a secret).
            guard !field.name.isEmpty, !field.name.utf8.contains(where: { $0 <= 0x20 || $0 == UInt8(ascii: ":") || $0 >= 0x7F }),
                  !field.value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 })
            else { throw HTTPError(.invalidRequest, "the header field \(field.name.utf8.count <= 64 ? field.name : "(unnamed)") cannot be sent (a line break or a control character)") }
            // "Name:" with no value would remove libcurl's own field: send it empty ("Name;").
            lines.append(field.value.isEmpty ? "\(field.name);" : "\(field.name): \(field.value)")
        }
        if body == nil, method == .post || method == .put || method == .patch {
            // libcurl would otherwise send POST without Content-Length.
            self.body = []
        }
        headerLines = lines
    }

    /// The hop a redirect `status` to `location` leads to.
    func redirected(status: Int, location: String, dropping credentials: Set<String>) throws(HTTPError) -> Hop {
        guard let next = url.resolving(location) else {
            throw HTTPError(.invalidRequest, "a redirect leads to a location that is not an http(s) URL")
        }
        var headers = self.headers
        if !next.isSameOrigin(as: url) { headers.remove(lowercasedNames: credentials) }
        var method = self.method
        var body = self.body
        if status == 303 && method != .head || (status == 301 || status == 302) && method == .post {
            method = .get
            body = nil
            headers.remove(lowercasedNames: ["content-type", "content-length"])
        }
        return try Hop(method: method, url: next, headers: headers, body: body)
    }
}
