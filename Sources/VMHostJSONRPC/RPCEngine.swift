import VMHostEventLoop
import VMHostWire

/// The JSON-RPC 2.0 engine of one connection: turns frames into calls, dispatches them through a
/// method table, and turns answers into response frames.
///
/// It implements the whole of JSON-RPC 2.0: requests, notifications (never answered), batches (an
/// array answered by an array once every member is answered; `[]` → one -32600; only
/// notifications → no reply), ids of any allowed type, and the standard error codes. Methods are
/// added with ``register(_:_:)`` by the layers above; the engine knows none of them except
/// `$/cancelRequest`.
///
/// Responses are handed to `output` as JSON bodies (unframed): a fixed envelope around the id and
/// the result or error, each written by jansson. Requests still in flight when their frame has
/// been handled are registered by id, so a `$/cancelRequest` right behind a request always finds
/// it.
///
/// - Important: Isolated to ``HostActor``; frames must be fed in the order they were read.
@_spi(Transport)
@HostActor
public final class RPCEngine {
    /// Handles one call of a method: answers it, at once or later.
    package typealias Handler = @HostActor (Call) -> Void
    /// Takes the response to one member of a batch (nil: none, for a notification).
    typealias Delivery = @HostActor ([UInt8]?) -> Void

    /// A method table that the engines of many connections share (built once, not per engine):
    /// each handler is given the engine that received the call, whose ``owner`` it works for.
    package struct MethodTable {
        /// Handles one call for the engine given.
        package typealias SharedHandler = @HostActor (RPCEngine, Call) -> Void

        enum Method {
            /// Registered on one engine (``RPCEngine/register(_:_:)``).
            case own(Handler)
            /// From a shared table.
            case shared(SharedHandler)
        }

        fileprivate var methods: [String: Method]

        /// A table of `$/cancelRequest` only, the one method every engine serves.
        package init() {
            methods = [
                "$/cancelRequest": .shared { engine, call in
                    // A notification by the spec; a request is answered too, with `null`.
                    if let raw = call.params?["id"], let id = RequestID(raw) {
                        engine.cancel(id)
                    }
                    call.succeed(.null)
                }
            ]
        }

        /// Adds or replaces a method.
        package mutating func register(_ method: String, _ handler: @escaping SharedHandler) {
            methods[method] = .shared(handler)
        }

        /// Adds a method answered at once from its params.
        package mutating func registerSync(_ method: String, _ body: @escaping @HostActor (RPCEngine, Call) throws(RPCError) -> JSON) {
            methods[method] = .shared { engine, call in
                do throws(RPCError) { call.succeed(try body(engine, call)) } catch { call.fail(error) }
            }
        }
    }

    // The method table, the requests in flight, the shutdown flag and the hooks are
    // `@exclusivity(unchecked)`: each access is a read or a write (of a dictionary entry) that
    // calls out to nothing while it lasts (a handler or hook is copied out before it runs), so none
    // can overlap another (docs/Guide.md, "Exclusivity checks").
    @exclusivity(unchecked) private var methods: [String: MethodTable.Method]
    /// What a shared table's handlers work for (the host that made this engine); set once, by
    /// the owner, which holds the engine.
    package unowned var owner: AnyObject?
    /// Takes every response body written (set once, by the owner that made the engine before it
    /// could name itself).
    @exclusivity(unchecked) package var output: @HostActor ([UInt8]) -> Void
    /// Requests answered later, by ``RequestID/cancellationKey``, for `$/cancelRequest`; several
    /// when a client reuses an id while it is in flight.
    @exclusivity(unchecked) private var inFlight: [JSON: [Call]] = [:]
    /// Called with every incoming message (parsed), for `--trace`. Outgoing bodies are traced by
    /// whoever writes them.
    @exclusivity(unchecked) public var tracer: (@HostActor (_ message: JSON) -> Void)?
    /// Called when an incoming message cannot be used; for logging.
    @exclusivity(unchecked) package var onProblem: (@HostActor (String) -> Void)?

    /// What one batch may cost (protocol/SPEC.md §10).
    package struct Limits: Sendable {
        /// Members (requests and notifications) a batch may hold; a larger batch is refused whole.
        package var maxBatchMembers = 1000
        /// Bytes the replies of a batch's members may add up to; once reached, the batch's
        /// further requests are answered with an error without being handled.
        package var maxBatchReplyBytes = 4 * 1024 * 1024

        /// The limits of protocol/SPEC.md §10.
        package init() {}
    }

    /// What one batch may cost.
    package var limits = Limits()
    /// When set, a batch is handled this many members at a time: ``receive(frame:)`` returns with
    /// ``hasPendingBatch`` true, and the transport calls ``continueBatch()`` once it has served
    /// others (a transport of many sessions on one thread). Nil: a batch is handled in one go.
    public var batchSlice: Int?
    /// The batch whose members are not all handled yet (with ``batchSlice``).
    private var batchInProgress: BatchInProgress?
    /// True while a batch has members left to handle (``continueBatch()``). No other message may
    /// be fed to the engine meanwhile: the transport holds them back, in order.
    public var hasPendingBatch: Bool { batchInProgress != nil }

    /// Once true, every request but `exit` is answered -32005.
    @exclusivity(unchecked) package var isShutDown = false

    /// An engine that hands every response body to `output`, serving `methods` (a table shared
    /// with other engines costs this one nothing until it registers a method of its own).
    package init(methods: MethodTable = MethodTable(), output: @escaping @HostActor ([UInt8]) -> Void) {
        self.methods = methods.methods
        self.output = output
    }

    /// Adds or replaces a method.
    package func register(_ method: String, _ handler: @escaping Handler) {
        methods[method] = .own(handler)
    }

    /// Adds a method answered at once from its params.
    package func registerSync(_ method: String, _ body: @escaping @HostActor (Call) throws(RPCError) -> JSON) {
        methods[method] = .own { call in
            do throws(RPCError) { call.succeed(try body(call)) } catch { call.fail(error) }
        }
    }

    /// The methods registered, sorted.
    package var methodNames: [String] { methods.keys.sorted() }

    /// Requests not answered yet.
    public var pendingCount: Int { inFlight.values.reduce(0) { $0 + $1.count } }

    /// The ids of the requests not answered yet, in no order.
    package var pendingIDs: [JSON] {
        var ids: [JSON] = []
        for calls in inFlight.values {
            for call in calls { if let id = call.id { ids.append(id.json) } }
        }
        return ids
    }

    // MARK: Input

    /// How this engine reads a frame's text, for a transport that parses it on another thread
    /// (``ParsedFrame``): read once the tracer is set, which changes it (a tracer sees every
    /// message whole, so with one a batch over the bound is built).
    public var parsing: ParsedFrame.Parsing {
        // A batch of more members than it may hold is refused whatever they are: past the
        // bound its members are checked (a text that is not JSON is still a parse error) but
        // not built.
        ParsedFrame.Parsing(keptArrayMembers: tracer == nil ? limits.maxBatchMembers : .max)
    }

    /// Frames this engine parsed itself (``receive(frame:)``), not handed parsed
    /// (``receive(parsed:)``): a count for tests.
    package private(set) var framesParsed = 0

    /// Handles one frame's bytes.
    package func receive(frame bytes: UnsafeRawBufferPointer) {
        framesParsed &+= 1
        receive(parsed: ParsedFrame(bytes, rules: parsing))
    }

    /// Handles one frame parsed already (on any thread, with this engine's ``parsing``), as
    /// ``receive(frame:)`` handles its text: the same replies, parse errors and trace.
    public func receive(parsed frame: ParsedFrame) {
        switch frame.content {
        case .unparsable(let error, let byteCount):
            // The unparsable text is not repeated (the parse error's message never quotes it):
            // it cannot be redacted, and it may hold a password.
            tracer?(["unparsable": .int(Int64(byteCount))])
            send(errorResponse(id: nil, .parseError("\(error.message) at line \(error.line), column \(error.column)")))
        case .message(.value(let value)): receive(value)
        case .message(.longArray(let members)): refuseBatch(members: members)
        }
    }

    /// Handles one parsed message (a request, a notification or a batch).
    package func receive(_ message: JSON) {
        tracer?(message)
        switch message {
        case .array(let elements):
            receiveBatch(elements)
        case .object(let object):
            handle(object, nil)
        default:
            send(errorResponse(id: nil, .invalidRequest("expected an object or an array, got \(message.typeName)")))
        }
    }

    /// Answers a frame that was skipped for being over the size limit. The text does not give the
    /// message's size: an ndjson line is refused as soon as it is too long, before its end has
    /// been read, so the size is not always known, and the reply must not depend on read sizes.
    package func receiveOversized(byteCount: Int?, limit: Int) {
        send(errorResponse(id: nil, RPCError(
            code: RPCError.invalidRequestCode,
            message: "Invalid Request: message exceeds the limit of \(limit) bytes (--max-message-bytes); it was skipped",
            data: .object(["limit": .int(Int64(limit))]))))
    }

    /// Answers a header block that could not be used.
    package func receiveBadHeader(_ problem: String) {
        send(errorResponse(id: nil, .parseError("bad message header: \(problem)")))
    }

    // MARK: Cancellation

    /// Cancels every request in flight with this id (numbers compared by value, see
    /// ``RequestID/cancellationKey``): a no-op when none is.
    package func cancel(_ id: RequestID) {
        for call in inFlight[id.cancellationKey] ?? [] { call.cancel() }
    }

    /// Cancels every request in flight (the end of the host or the connection, `shutdown`).
    package func cancelAll(except keep: Call? = nil) {
        for call in inFlight.values.joined() where call !== keep { call.cancel() }
    }

    // MARK: Dispatch

    private func receiveBatch(_ elements: [JSON]) {
        if elements.isEmpty {
            send(errorResponse(id: nil, .invalidRequest("empty batch")))
            return
        }
        // Refused whole, before any member is handled: what a batch may cost is known up front.
        guard elements.count <= limits.maxBatchMembers else {
            refuseBatch(members: elements.count)
            return
        }
        batchInProgress = BatchInProgress(elements: elements)
        continueBatch()
    }

    /// Answers a batch of more members than ``Limits/maxBatchMembers``, none of them handled.
    private func refuseBatch(members: Int) {
        send(errorResponse(id: nil, RPCError(
            code: RPCError.invalidRequestCode,
            message: "Invalid Request: a batch may hold at most \(limits.maxBatchMembers) members, this one holds \(members); none was handled",
            data: ["name": "batchMembers", "limit": .int(Int64(limits.maxBatchMembers))])))
    }

    /// Writes the array of a batch's answers, once every member is answered; then runs what waited
    /// for the batch's reply (``Call/afterReply(_:)``).
    private func finish(_ batch: BatchInProgress) {
        defer { batch.reply.answered() }
        let answered = batch.responses.compactMap { $0 }
        guard !answered.isEmpty else { return }
        var body: [UInt8] = [UInt8(ascii: "[")]
        for (index, response) in answered.enumerated() {
            if index > 0 { body.append(UInt8(ascii: ",")) }
            body.append(contentsOf: response)
        }
        body.append(UInt8(ascii: "]"))
        send(body)
    }

    /// Handles the next members of the batch in progress: all of them, or ``batchSlice`` of them
    /// when set (then ``hasPendingBatch`` tells whether more wait).
    public func continueBatch() {
        guard let batch = batchInProgress else { return }
        let end = batchSlice.map { min(batch.elements.count, batch.next + max($0, 1)) } ?? batch.elements.count
        while batch.next < end {
            let index = batch.next
            batch.next += 1
            let element = batch.elements[index]
            // The batch is kept by its members' answers still to come (a command's, later).
            let deliver: Delivery = { [unowned self] response in
                if let response {
                    batch.responses[index] = response
                    let (sum, overflow) = batch.replyBytes.addingReportingOverflow(response.count)
                    batch.replyBytes = overflow ? Int.max : sum
                }
                batch.remaining -= 1
                if batch.remaining == 0 { self.finish(batch) }
            }
            guard case .object(let object) = element else {
                deliver(errorResponse(id: nil, .invalidRequest("batch member \(index) is \(element.typeName), expected an object")))
                continue
            }
            // Past the bound of the batch's replies, a request is answered without being handled.
            if batch.replyBytes >= limits.maxBatchReplyBytes {
                deliver(replyBoundResponse(object))
                continue
            }
            handle(object, batch: batch.reply, deliver)
        }
        if batch.next == batch.elements.count, batchInProgress === batch { batchInProgress = nil }
    }

    /// The answer to a batch member left unhandled because the batch's replies reached
    /// ``Limits/maxBatchReplyBytes``: an error with its id, or nothing for what is never answered
    /// (a notification, a response object).
    private func replyBoundResponse(_ object: JSONObject) -> [UInt8]? {
        if object["id"] == nil, case .string? = object["method"] { return nil }
        if object["method"] == nil, object["result"] != nil || object["error"] != nil { return nil }
        let id = object["id"].flatMap { RequestID($0) }
        return errorResponse(id: id, RPCError(
            code: RPCError.invalidRequestCode,
            message: "Invalid Request: the replies of this batch reached the limit of \(limits.maxBatchReplyBytes) bytes; this request was not handled",
            data: ["name": "batchReplyBytes", "limit": .int(Int64(limits.maxBatchReplyBytes))]))
    }

    /// Validates and dispatches one request object; its response (nil for none) goes exactly once
    /// to `deliver`, or, without one, is written (``hand(_:_:)``).
    private func handle(_ object: JSONObject, batch: BatchReply? = nil, _ deliver: Delivery?) {
        // Responses from the client: the host sends no requests, so there is nothing to match.
        if object["method"] == nil, object["result"] != nil || object["error"] != nil {
            onProblem?("ignored a response object: the host sends no requests")
            hand(nil, deliver)
            return
        }
        var id: RequestID?
        if let rawID = object["id"] {
            guard let valid = RequestID(rawID) else {
                hand(errorResponse(id: nil, .invalidRequest("\"id\" must be a string, a number or null, got \(rawID.typeName)")), deliver)
                return
            }
            id = valid
        }
        guard object["jsonrpc"] == .string("2.0") else {
            hand(errorResponse(id: id, .invalidRequest("\"jsonrpc\" must be exactly \"2.0\"")), deliver)
            return
        }
        guard case .string(let method)? = object["method"] else {
            let got = object["method"].map { "got \($0.typeName)" } ?? "missing"
            hand(errorResponse(id: id, .invalidRequest("\"method\" must be a string (\(got))")), deliver)
            return
        }
        let params = object["params"]
        if let params {
            switch params {
            case .object, .array: break
            default:
                hand(errorResponse(id: id, .invalidRequest("\"params\" must be an object or an array, got \(params.typeName)")), deliver)
                return
            }
        }
        if isShutDown, method != "exit" {
            hand(id.map { errorResponse(id: $0, .shuttingDown) }, deliver)
            return
        }
        guard let entry = methods[method] else {
            if id == nil {
                onProblem?("ignored notification of unknown method \(method)")
                hand(nil, deliver)
            } else {
                hand(errorResponse(id: id, .methodNotFound(method)), deliver)
            }
            return
        }
        let call = Call(method: method, id: id, params: params, engine: self, deliver: deliver)
        call.batch = batch
        switch entry {
        case .own(let handler): handler(call)
        case .shared(let handler): handler(self, call)
        }
        // Still running: registered for `$/cancelRequest` (nothing else runs before this, so a
        // cancellation behind it in the input finds it). A reused id adds to the requests under it.
        if let id, !call.isFinished, method != "$/cancelRequest" { inFlight[id.cancellationKey, default: []].append(call) }
    }

    /// Answers `call` (``Call/respond(_:)``, once): its response goes to `deliver`, or is written.
    func answer(_ call: Call, _ result: Result<JSON, RPCError>, deliver: Delivery?) {
        guard let id = call.id else {
            if case .failure(let error) = result { onProblem?("notification \(call.method) failed: \(error.message)") }
            hand(nil, deliver)
            return
        }
        if !inFlight.isEmpty { forget(id) }
        switch result {
        case .success(let value): hand(resultResponse(id: id, value), deliver)
        case .failure(let error): hand(errorResponse(id: id, error), deliver)
        }
    }

    /// Answers `call` with its result written already as JSON text.
    func answer(_ call: Call, resultText: [UInt8], deliver: Delivery?) {
        guard let id = call.id else {
            hand(nil, deliver)
            return
        }
        if !inFlight.isEmpty { forget(id) }
        var text = JSONObjectText.jsonRPC(capacity: resultText.count + 48)
        text.append("id", id.json)
        text.append("result", text: resultText)
        hand(text.finish(), deliver)
    }

    /// Hands `response` to `deliver` (a member of a batch), or writes it.
    private func hand(_ response: [UInt8]?, _ deliver: Delivery?) {
        if let deliver {
            deliver(response)
        } else if let response {
            send(response)
        }
    }

    /// Drops the answered requests registered under `id`.
    private func forget(_ id: RequestID) {
        let key = id.cancellationKey
        guard var calls = inFlight[key] else { return }
        calls.removeAll { $0.isFinished }
        inFlight[key] = calls.isEmpty ? nil : calls
    }

    /// `{"jsonrpc":"2.0","id":…,"result":…}`; an internal error if the result cannot be written.
    private func resultResponse(id: RequestID, _ result: JSON) -> [UInt8] {
        var text = JSONObjectText.jsonRPC(capacity: 64)
        text.append("id", id.json)
        do throws(JSONSerializationError) {
            try text.appendOrThrow("result", result)
        } catch {
            return errorResponse(id: id, RPCError(code: RPCError.internalErrorCode, message: "Internal error: the result could not be written as JSON (\(error))"))
        }
        return text.finish()
    }

    /// `{"jsonrpc":"2.0","id":…,"error":…}`.
    private func errorResponse(id: RequestID?, _ error: RPCError) -> [UInt8] {
        var text = JSONObjectText.jsonRPC()
        text.append("id", id?.json ?? .null)
        text.append("error", error.json)
        return text.finish()
    }

    private func send(_ body: [UInt8]) {
        output(body)
    }
}

/// A batch being handled: its members, their answers so far, and the next member to handle.
@HostActor
private final class BatchInProgress {
    let elements: [JSON]
    /// Told when the batch's array is written.
    let reply = BatchReply()
    var next = 0
    var responses: [[UInt8]?]
    /// Members not answered yet; the array is written when it reaches 0.
    var remaining: Int
    /// The bytes of the answers so far.
    var replyBytes = 0

    init(elements: [JSON]) {
        self.elements = elements
        responses = [[UInt8]?](repeating: nil, count: elements.count)
        remaining = elements.count
    }
}
