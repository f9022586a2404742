@_spi(Transport) import VMHostEventLoop
@_spi(Transport) import VMHostJSONRPC
@_spi(Transport) import VMHostWire

/// One ``RPCEngine`` fed the events of one read of a fuzz input, with a small method table and no
/// view-models: `ping` (`{}`), `echo` (its params), `fail` (-32603), `later` (answered only after
/// the input ends: succeeded or cancelled in turn), and `shutdown` (then everything is -32005).
///
/// Invariants (protocol/SPEC.md §1, §2):
/// - every reply is a JSON-RPC 2.0 response, or a non-empty array of responses; nothing else;
/// - a frame that does not parse is answered by one -32700 with id null, whose message does not
///   quote the input; an oversized frame by one -32600 with id null and `data: {limit}`; a bad
///   header by one -32700 with id null;
/// - a single request is answered once, with its own id, with the outcome its method and the
///   envelope call for (a result, -32600, -32601, -32603, -32005), or not at once for `later`;
///   a notification is never answered; a `$/cancelRequest` may add the -32800 of the request it
///   cancels, before its own reply;
/// - a batch gets at most one reply (plus what its cancellations finish: a cancel finishes every
///   request in flight under its id, so a reused id may add several -32800s);
/// - each `later` request is answered once when the test answers it (never again when already
///   cancelled), and no request is left registered at the end.
@HostActor
final class EngineProbe {
    private final class Sink {
        var bodies: [[UInt8]] = []
    }

    private let sink: Sink
    private let engine: RPCEngine
    private let limit: Int
    private var pending: [(call: Call, inBatch: Bool)] = []
    private var inBatch = false

    init(limit: Int) {
        let sink = Sink()
        self.sink = sink
        self.limit = limit
        engine = RPCEngine { body in sink.bodies.append(body) }
        engine.registerSync("ping") { _ in [:] }
        engine.registerSync("echo") { call in call.params ?? .null }
        engine.registerSync("fail") { _ throws(RPCError) in throw RPCError.internalError("fuzz") }
        engine.register("later") { [unowned self] call in pending.append((call, inBatch)) }
        engine.register("shutdown") { [unowned self] call in
            engine.isShutDown = true
            call.succeed(.null)
        }
    }

    func run(_ events: [ReadEvent]) {
        for event in events {
            switch event {
            case .detected:
                continue
            case .oversized(let count, let limit):
                let replies = collect { engine.receiveOversized(byteCount: count, limit: limit) }
                precondition(replies.count == 1, "an oversized frame answered \(replies.count) times")
                expectError(replies[0], id: .null, code: RPCError.invalidRequestCode)
                precondition(replies[0]["error"]?["data"] == ["limit": .int(Int64(limit))], "no data.limit: \(replies[0])")
            case .badHeader(let problem):
                let replies = collect { engine.receiveBadHeader(problem) }
                precondition(replies.count == 1, "a bad header answered \(replies.count) times")
                expectError(replies[0], id: .null, code: RPCError.parseErrorCode)
            case .frame(let bytes):
                receive(bytes)
            }
        }
        answerPending()
        precondition(engine.pendingCount == 0, "\(engine.pendingCount) requests still registered after all were answered")
    }

    // MARK: Frames

    private func receive(_ bytes: [UInt8]) {
        let parsed = try? JSON.parse(bytes)
        let shutDown = engine.isShutDown
        inBatch = parsed?.arrayValue != nil
        let replies = collect { bytes.withUnsafeBytes { engine.receive(frame: $0) } }
        switch parsed {
        case nil:
            precondition(replies.count == 1, "an unparsable frame answered \(replies.count) times")
            expectError(replies[0], id: .null, code: RPCError.parseErrorCode)
            let message = replies[0]["error"]?["message"]?.stringValue ?? ""
            precondition(!message.contains(" near '"), "a parse error that quotes the input: \(message)")
        case .array(let members)?:
            if members.isEmpty || members.count > engine.limits.maxBatchMembers {
                // Refused whole: one error, and none of its members handled (SPEC §10).
                precondition(replies.count == 1, "an empty or oversized batch answered \(replies.count) times")
                expectError(replies[0], id: .null, code: RPCError.invalidRequestCode)
            } else if members.contains(where: { $0["method"] == "$/cancelRequest" }) && !shutDown {
                // One cancel finishes every request in flight under its id (a reused id may have
                // several), and a batch waiting on one of them: beside this batch's own reply,
                // only -32800 answers and the replies of earlier batches.
                for reply in replies {
                    precondition(reply.arrayValue != nil || reply["error"]?["code"] == .int(Int64(RPCError.requestCancelledCode)),
                                 "a batch's cancellation finished with \(reply)")
                }
            } else {
                precondition(replies.count <= 1, "a batch answered \(replies.count) times")
            }
        case .object(let object)?:
            let cancels = object["method"] == "$/cancelRequest" && !shutDown
            var extras = replies
            switch expectation(object, shutDown: shutDown) {
            case .reply(let id, let code):
                precondition(!replies.isEmpty, "a request left unanswered: \(object.keys)")
                let own = extras.removeLast()
                if let code {
                    expectError(own, id: id, code: code)
                } else {
                    precondition(own["id"] == id && own["result"] != nil, "expected a result for id \(id), got \(own)")
                }
            case .silent, .deferred:
                break
            }
            for extra in extras {
                precondition(cancels, "a reply no request asked for: \(extra)")
                precondition(extra.arrayValue != nil || extra["error"]?["code"] == .int(Int64(RPCError.requestCancelledCode)),
                             "a cancellation finished with \(extra)")
            }
        case _?:
            precondition(replies.count == 1, "a scalar message answered \(replies.count) times")
            expectError(replies[0], id: .null, code: RPCError.invalidRequestCode)
        }
    }

    private enum Expected {
        case reply(id: JSON, code: Int?)  // code nil: a result
        case silent
        case deferred
    }

    /// What SPEC §2 makes of one message object, given this method table.
    private func expectation(_ object: JSONObject, shutDown: Bool) -> Expected {
        let method = object["method"]
        if method == nil, object["result"] != nil || object["error"] != nil { return .silent }  // a response: ignored
        let rawID = object["id"]
        if let rawID, RequestID(rawID) == nil { return .reply(id: .null, code: RPCError.invalidRequestCode) }
        let echo = rawID ?? .null
        guard object["jsonrpc"] == "2.0", case .string(let name)? = method else {
            return .reply(id: echo, code: RPCError.invalidRequestCode)
        }
        if let params = object["params"], params.arrayValue == nil, params.objectValue == nil {
            return .reply(id: echo, code: RPCError.invalidRequestCode)
        }
        guard let id = rawID else { return .silent }
        if shutDown { return .reply(id: id, code: RPCError.shuttingDownCode) }
        switch name {
        case "ping", "echo", "shutdown", "$/cancelRequest": return .reply(id: id, code: nil)
        case "fail": return .reply(id: id, code: RPCError.internalErrorCode)
        case "later": return .deferred
        default: return .reply(id: id, code: RPCError.methodNotFoundCode)
        }
    }

    // MARK: Answers after the input

    private func answerPending() {
        for (index, entry) in pending.enumerated() {
            let call = entry.call
            let wasFinished = call.isFinished
            let replies = collect {
                if index % 2 == 0 { call.succeed(["n": .int(Int64(index))]) } else { call.cancel() }
            }
            if wasFinished {
                precondition(replies.isEmpty, "a request answered twice")
            } else if entry.inBatch {
                precondition(replies.count <= 1 && replies.allSatisfy { $0.arrayValue != nil },
                             "a batch member's answer gave \(replies)")
            } else if let id = call.id {
                precondition(replies.count == 1 && replies[0]["id"] == id.json, "a late answer gave \(replies)")
                if index % 2 == 1 { expectError(replies[0], id: id.json, code: RPCError.requestCancelledCode) }
            } else {
                precondition(replies.isEmpty, "a notification answered: \(replies)")
            }
        }
        pending.removeAll()
    }

    // MARK: Replies

    /// Runs `body` and returns the replies it wrote, each checked to be a response or a batch reply.
    private func collect(_ body: () -> Void) -> [JSON] {
        let before = sink.bodies.count
        body()
        let replies = sink.bodies[before...].map(Self.checkReply)
        sink.bodies.removeAll(keepingCapacity: true)
        return replies
    }

    private static func checkReply(_ body: [UInt8]) -> JSON {
        let reply: JSON
        do { reply = try JSON.parse(body) } catch { preconditionFailure("a reply that is not JSON (\(error)): \(body.count) bytes") }
        switch reply {
        case .object(let object):
            checkResponse(object)
        case .array(let members):
            precondition(!members.isEmpty, "an empty batch reply")
            for member in members {
                guard case .object(let object) = member else { preconditionFailure("a batch reply member that is not an object") }
                checkResponse(object)
            }
        default:
            preconditionFailure("a reply that is neither an object nor an array: \(reply)")
        }
        return reply
    }

    private static func checkResponse(_ object: JSONObject) {
        precondition(Set(object.keys).isSubset(of: ["jsonrpc", "id", "result", "error"]), "response keys \(object.keys)")
        precondition(object["jsonrpc"] == "2.0", "a response without jsonrpc 2.0")
        guard let id = object["id"] else { preconditionFailure("a response without an id") }
        precondition(RequestID(id) != nil, "a response id of a wrong type: \(id)")
        precondition((object["result"] == nil) != (object["error"] == nil), "not exactly one of result and error")
        if let error = object["error"] {
            guard case .object(let fields) = error else { preconditionFailure("an error that is not an object") }
            precondition(Set(fields.keys).isSubset(of: ["code", "message", "data"]), "error keys \(fields.keys)")
            guard case .int? = fields["code"], case .string? = fields["message"] else {
                preconditionFailure("an error without an integer code and a string message: \(error)")
            }
        }
    }

    private func expectError(_ reply: JSON, id: JSON, code: Int) {
        precondition(reply["id"] == id && reply["error"]?["code"] == .int(Int64(code)),
                     "expected error \(code) for id \(id), got \(reply)")
    }
}
