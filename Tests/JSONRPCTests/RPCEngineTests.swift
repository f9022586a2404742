@_spi(Transport) import VMHostEventLoop
import Testing
@_spi(Transport) import VMHostWire
@_spi(Transport) @testable import VMHostJSONRPC

/// An engine with a few methods whose output is collected as parsed JSON.
@HostActor
private final class Harness {
    var written: [JSON] = []
    lazy var engine: RPCEngine = RPCEngine { [unowned self] body in self.written.append(try! JSON.parse(body)) }
    var pending: [Call] = []
    var cancelled: [String] = []

    init() {
        engine.registerSync("echo") { call in call.params ?? .null }
        engine.registerSync("nan") { _ in ["value": .double(.nan)] }
        engine.registerSync("fail") { _ throws(RPCError) in throw RPCError.invalidParams("params.x: expected a string, got a number") }
        engine.register("later") { [unowned self] call in
            self.pending.append(call)
            call.onCancel { self.cancelled.append(call.id?.description ?? "?") }
        }
    }

    func send(_ text: String) -> [JSON] {
        var bytes = Array(text.utf8)
        bytes.withUnsafeMutableBytes { engine.receive(frame: UnsafeRawBufferPointer($0)) }
        defer { written.removeAll() }
        return written
    }
}

/// The messages a tracer was given.
@HostActor
private final class Traced {
    var messages: [JSON] = []
}

private func error(_ code: Int, id: JSON = .null) -> (JSON) -> Bool {
    { $0["id"] == id && $0["error"]?["code"] == .int(Int64(code)) && $0["jsonrpc"] == "2.0" }
}

@Suite("JSON-RPC engine")
@HostActor
struct RPCEngineTests {
    @Test func requestsAreAnsweredWithTheirIdOfAnyType() {
        let h = Harness()
        #expect(h.send(#"{"jsonrpc":"2.0","id":1,"method":"echo","params":[1]}"#) == [["jsonrpc": "2.0", "id": 1, "result": [1]]])
        #expect(h.send(#"{"jsonrpc":"2.0","id":"a","method":"echo"}"#) == [["jsonrpc": "2.0", "id": "a", "result": nil]])
        #expect(h.send(#"{"jsonrpc":"2.0","id":null,"method":"echo","params":{}}"#) == [["jsonrpc": "2.0", "id": nil, "result": [:]]])
        #expect(h.send(#"{"jsonrpc":"2.0","id":2.5,"method":"echo","params":{}}"#).first?["id"] == .double(2.5))
    }

    @Test func aSharedMethodTableAnswersForEachEnginesOwnerAndEachEngineMayAddItsOwn() {
        final class Owner { let name: String; init(_ name: String) { self.name = name } }
        var table = RPCEngine.MethodTable()
        table.registerSync("whoami") { engine, _ in .string((engine.owner as! Owner).name) }
        var written: [String: [JSON]] = [:]
        func engine(_ owner: Owner) -> RPCEngine {
            let engine = RPCEngine(methods: table) { written[owner.name, default: []].append(try! JSON.parse($0)) }
            engine.owner = owner
            return engine
        }
        let a = Owner("a"), b = Owner("b")
        let engineA = engine(a), engineB = engine(b)
        engineB.registerSync("extra") { _ in "b's" }
        for (engine, frame) in [
            (engineA, #"{"jsonrpc":"2.0","id":1,"method":"whoami"}"#), (engineB, #"{"jsonrpc":"2.0","id":1,"method":"whoami"}"#),
            (engineA, #"{"jsonrpc":"2.0","id":2,"method":"extra"}"#), (engineB, #"{"jsonrpc":"2.0","id":2,"method":"extra"}"#),
            (engineA, #"{"jsonrpc":"2.0","id":3,"method":"$/cancelRequest","params":{"id":9}}"#),
        ] {
            var bytes = Array(frame.utf8)
            bytes.withUnsafeMutableBytes { engine.receive(frame: UnsafeRawBufferPointer($0)) }
        }
        #expect(written["a"]?[0] == ["jsonrpc": "2.0", "id": 1, "result": "a"])
        #expect(written["b"]?[0] == ["jsonrpc": "2.0", "id": 1, "result": "b"])
        #expect(written["a"].map { error(-32601, id: 2)($0[1]) } == true)
        #expect(written["b"]?[1] == ["jsonrpc": "2.0", "id": 2, "result": "b's"])
        #expect(written["a"]?[2] == ["jsonrpc": "2.0", "id": 3, "result": nil])
        #expect(engineA.methodNames == ["$/cancelRequest", "whoami"])
        #expect(engineB.methodNames == ["$/cancelRequest", "extra", "whoami"])
    }

    @Test func aResultThatCannotBeWrittenIsAnInternalErrorNotALostReply() {
        let h = Harness()
        let replies = h.send(#"{"jsonrpc":"2.0","id":7,"method":"nan"}"#)
        #expect(replies.count == 1)
        #expect(replies.first.map(error(-32603, id: 7)) == true)
    }

    @Test func notificationsAreNeverAnswered() {
        let h = Harness()
        #expect(h.send(#"{"jsonrpc":"2.0","method":"echo"}"#).isEmpty)
        #expect(h.send(#"{"jsonrpc":"2.0","method":"fail"}"#).isEmpty)
        #expect(h.send(#"{"jsonrpc":"2.0","method":"missing"}"#).isEmpty)
    }

    @Test func parseErrorsHaveANullId() {
        let h = Harness()
        let replies = h.send(#"{"jsonrpc":"2.0","id":1,"method":"echo""#)
        #expect(replies.count == 1 && error(-32700)(replies[0]))
    }

    @Test(arguments: [
        (#"1"#, "expected an object or an array"),
        (#"{"id":1,"method":"echo"}"#, "jsonrpc"),
        (#"{"jsonrpc":"1.0","id":1,"method":"echo"}"#, "jsonrpc"),
        (#"{"jsonrpc":"2.0","id":1}"#, "method"),
        (#"{"jsonrpc":"2.0","id":1,"method":5}"#, "method"),
        (#"{"jsonrpc":"2.0","id":{},"method":"echo"}"#, "id"),
        (#"{"jsonrpc":"2.0","id":true,"method":"echo"}"#, "id"),
        (#"{"jsonrpc":"2.0","id":1,"method":"echo","params":"x"}"#, "params"),
    ])
    func invalidRequestsAreNamed(_ text: String, _ mention: String) {
        let replies = Harness().send(text)
        #expect(replies.count == 1)
        #expect(replies.first?["error"]?["code"] == -32600)
        #expect(replies.first?["error"]?["message"]?.stringValue?.contains(mention) == true)
    }

    @Test func unknownMethodsAndInvalidParams() {
        let h = Harness()
        #expect(error(-32601, id: 7)(h.send(#"{"jsonrpc":"2.0","id":7,"method":"nope"}"#)[0]))
        let failed = h.send(#"{"jsonrpc":"2.0","id":8,"method":"fail"}"#)[0]
        #expect(error(-32602, id: 8)(failed))
        #expect(failed["error"]?["message"] == "Invalid params: params.x: expected a string, got a number")
    }

    @Test func batchesFollowEverySpecEdgeCase() {
        let h = Harness()
        let empty = h.send("[]")
        #expect(empty.count == 1 && error(-32600)(empty[0]))
        let one = h.send("[1]")
        #expect(one.count == 1 && one[0].arrayValue?.count == 1 && error(-32600)(one[0].arrayValue![0]))
        let three = h.send("[1,2,3]")
        #expect(three.first?.arrayValue?.count == 3)
        #expect(h.send(#"[{"jsonrpc":"2.0","method":"echo"},{"jsonrpc":"2.0","method":"echo"}]"#).isEmpty)
        let mixed = h.send(#"[{"jsonrpc":"2.0","id":1,"method":"echo","params":[1]},{"jsonrpc":"2.0","method":"echo"},{"jsonrpc":"2.0","id":2,"method":"nope"},{"foo":"boo"}]"#)
        #expect(mixed.count == 1)
        let array = mixed[0].arrayValue ?? []
        #expect(array.count == 3)
        #expect(array[0] == ["jsonrpc": "2.0", "id": 1, "result": [1]])
        #expect(error(-32601, id: 2)(array[1]))
        #expect(error(-32600)(array[2]))
        let invalid = h.send(#"[{"jsonrpc":"2.0","method":"echo","params":[1,2,4]},{"jsonrpc":"2.0","method""#)
        #expect(invalid.count == 1 && error(-32700)(invalid[0]))
    }

    /// A result written already (`vm.create`'s description, written once per kind) is answered as
    /// the same value would be: on its own, in a batch, and never for a notification.
    @Test func aResultWrittenAsTextIsAnsweredAsItsValueWouldBe() {
        let h = Harness()
        h.engine.register("text") { call in call.succeed(text: Array(#"{"a":[1,"b"]}"#.utf8)) }
        #expect(h.send(#"{"jsonrpc":"2.0","id":3,"method":"text"}"#) == [["jsonrpc": "2.0", "id": 3, "result": ["a": [1, "b"]]]])
        #expect(h.send(#"{"jsonrpc":"2.0","method":"text"}"#).isEmpty)
        #expect(h.send(#"[{"jsonrpc":"2.0","id":"t","method":"text"},{"jsonrpc":"2.0","method":"text"},{"jsonrpc":"2.0","id":2,"method":"echo","params":[2]}]"#)
            == [[["jsonrpc": "2.0", "id": "t", "result": ["a": [1, "b"]]], ["jsonrpc": "2.0", "id": 2, "result": [2]]]])
        // Only the first answer counts.
        #expect(h.send(#"[{"jsonrpc":"2.0","id":1,"method":"later"}]"#).isEmpty)
        h.pending[0].succeed(text: Array("1".utf8))
        h.pending[0].succeed(text: Array("2".utf8))
        #expect(h.written == [[["jsonrpc": "2.0", "id": 1, "result": 1]]])
    }

    @Test func aBatchIsAnsweredOnceEveryMemberIs() {
        let h = Harness()
        #expect(h.send(#"[{"jsonrpc":"2.0","id":1,"method":"later"},{"jsonrpc":"2.0","id":2,"method":"echo","params":[2]}]"#).isEmpty)
        h.pending[0].succeed("done")
        #expect(h.written == [[["jsonrpc": "2.0", "id": 1, "result": "done"], ["jsonrpc": "2.0", "id": 2, "result": [2]]]])
    }

    @Test func cancellingAPendingRequestAnswersItOnceWithMinus32800() {
        let h = Harness()
        #expect(h.send(#"{"jsonrpc":"2.0","id":5,"method":"later"}"#).isEmpty)
        #expect(h.engine.pendingCount == 1)
        let replies = h.send(#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":5}}"#)
        #expect(replies.count == 1 && error(-32800, id: 5)(replies[0]))
        #expect(h.cancelled == ["5"])
        h.pending[0].succeed("too late")
        #expect(h.written.isEmpty)
        #expect(h.engine.pendingCount == 0)
    }

    @Test func cancellingUnknownOrFinishedIdsIsANoOp() {
        let h = Harness()
        #expect(h.send(#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":99}}"#).isEmpty)
        _ = h.send(#"{"jsonrpc":"2.0","id":6,"method":"later"}"#)
        h.pending[0].succeed(1)
        h.written.removeAll()
        #expect(h.send(#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":6}}"#).isEmpty)
        #expect(h.cancelled.isEmpty)
    }

    /// SPEC §6: numbers match by value, strings by text, a string never a number.
    @Test func aCancelMatchesNumbersByValueAndStringsByText() {
        let h = Harness()
        _ = h.send(#"{"jsonrpc":"2.0","id":1000,"method":"later"}"#)
        _ = h.send(#"{"jsonrpc":"2.0","id":"2000","method":"later"}"#)
        #expect(h.send(#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"1000"}}"#).isEmpty)
        #expect(h.send(#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":2000}}"#).isEmpty)
        #expect(h.send(#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1000.5}}"#).isEmpty)
        #expect(h.cancelled.isEmpty)
        let byReal = h.send(#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1000.0}}"#)
        #expect(byReal.count == 1 && error(-32800, id: 1000)(byReal[0]))
        let byText = h.send(#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"2000"}}"#)
        #expect(byText.count == 1 && error(-32800, id: "2000")(byText[0]))
        #expect(h.cancelled == ["1000", "\"2000\""])
        #expect(h.engine.pendingCount == 0)
    }

    @Test func aRealIdIsCancelledByTheIntegerOfTheSameValueAndAnsweredWithItsOwnId() {
        let h = Harness()
        _ = h.send(#"{"jsonrpc":"2.0","id":7.0,"method":"later"}"#)
        let replies = h.send(#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":7}}"#)
        #expect(replies.count == 1 && error(-32800, id: .double(7))(replies[0]))
    }

    /// SPEC §6: every request in flight under a reused id is cancelled, each answered once.
    @Test func aCancelOfAReusedIdCancelsEveryRequestInFlightUnderIt() {
        let h = Harness()
        _ = h.send(#"{"jsonrpc":"2.0","id":3,"method":"later"}"#)
        _ = h.send(#"{"jsonrpc":"2.0","id":3,"method":"later"}"#)
        _ = h.send(#"{"jsonrpc":"2.0","id":3,"method":"later"}"#)
        #expect(h.engine.pendingCount == 3)
        h.pending[1].succeed("second")
        #expect(h.written.count == 1)
        h.written.removeAll()
        #expect(h.engine.pendingCount == 2)
        let replies = h.send(#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":3}}"#)
        #expect(replies.count == 2 && replies.allSatisfy(error(-32800, id: 3)))
        #expect(h.cancelled == ["3", "3"])
        #expect(h.engine.pendingCount == 0)
    }

    @Test func afterShutdownRequestsAreRefusedWithMinus32005() {
        let h = Harness()
        h.engine.isShutDown = true
        #expect(error(-32005, id: 1)(h.send(#"{"jsonrpc":"2.0","id":1,"method":"echo"}"#)[0]))
        #expect(h.send(#"{"jsonrpc":"2.0","method":"echo"}"#).isEmpty)
    }

    @Test func oversizedAndBadHeaderFramesAreAnsweredWithNullIds() {
        let h = Harness()
        h.engine.receiveOversized(byteCount: 10, limit: 5)
        h.engine.receiveBadHeader("missing Content-Length header")
        #expect(error(-32600)(h.written[0]))
        #expect(h.written[0]["error"]?["message"]?.stringValue?.contains("limit of 5 bytes") == true)
        #expect(error(-32700)(h.written[1]))
    }

    @Test func responsesFromTheClientAreIgnored() {
        #expect(Harness().send(#"{"jsonrpc":"2.0","id":1,"result":{}}"#).isEmpty)
    }

    // MARK: What one batch may cost (SPEC §10)

    /// `count` requests of `method` (ids 0…), as one batch.
    private func batch(_ count: Int, method: String = "echo", params: String = "[1]") -> String {
        "[" + (0..<count).map { #"{"jsonrpc":"2.0","id":\#($0),"method":"\#(method)","params":\#(params)}"# }.joined(separator: ",") + "]"
    }

    @Test func aBatchOverTheMemberLimitIsRefusedWholeAndNothingInItRuns() {
        let h = Harness()
        h.engine.limits.maxBatchMembers = 5
        #expect(h.send(batch(5)).first?.arrayValue?.count == 5)
        let refused = h.send(batch(6, method: "later", params: "{}"))
        #expect(refused.count == 1 && error(-32600)(refused[0]))
        #expect(refused[0]["error"]?["data"] == ["name": "batchMembers", "limit": 5])
        #expect(refused[0]["error"]?["message"]?.stringValue?.contains("at most 5 members") == true)
        #expect(h.pending.isEmpty)
    }

    /// A batch over the bound is refused from its text without its members being built: the
    /// reply is the one a built batch gets (a tracer sees it built), and a text that is no JSON
    /// past the bound is a parse error as before.
    @Test func aBatchOverTheMemberLimitIsRefusedTheSameWhetherItsMembersAreBuiltOrNot() {
        let h = Harness()
        h.engine.limits.maxBatchMembers = 5
        let text = "[" + (0..<20).map { ["1", "-0.5e3", #""x""#, "[[]]", #"{"a":null}"#][$0 % 5] }.joined(separator: ",") + "]"
        let counted = h.send(text)
        let traced = Traced()
        h.engine.tracer = { traced.messages.append($0) }
        let built = h.send(text)
        #expect(counted.count == 1 && error(-32600)(counted[0]))
        #expect(counted[0]["error"]?["message"]?.stringValue?.contains("this one holds 20;") == true)
        #expect(counted == built)
        #expect(traced.messages.first?.arrayValue?.count == 20)
        h.engine.tracer = nil
        for broken in ["[1,1,1,1,1,1,x]", "[1,1,1,1,1,1,1e400]", "[1,1,1,1,1,1,\"\u{1}\"]", "[1,1,1,1,1,1,1"] {
            let expected = Array(broken.utf8).withUnsafeBytes { bytes in
                Result { () throws(JSONParseError) in try JSON.parseByJansson(bytes) }
            }
            guard case .failure(let parseError) = expected else {
                Issue.record("jansson reads \(broken)")
                continue
            }
            let replies = h.send(broken)
            #expect(replies.count == 1 && error(-32700)(replies[0]), "\(broken)")
            #expect(replies.first?["error"]?["message"]?.stringValue == "Parse error: \(parseError)", "\(broken)")
        }
    }

    /// A frame parsed elsewhere (a transport's reader thread) with the engine's ``RPCEngine/parsing``
    /// is answered and traced as its text is, and the engine parses nothing itself.
    @Test(arguments: [false, true])
    func aFrameParsedElsewhereIsAnsweredAndTracedAsItsText(traced: Bool) {
        let texts = [
            #"{"jsonrpc":"2.0","id":1,"method":"echo","params":[1,2.5,"x",{"a":null}]}"#,
            #"{"jsonrpc":"2.0","method":"echo","params":[1]}"#,
            #"{"jsonrpc":"2.0","id":2,"method":"unknown"}"#,
            batch(5), batch(6), "[1,1,1,1,1,1,1]", "[1,1,1,1,1,1,x]", "[]", "[1]", "42", "", "{", "\"x\"",
            #"{"jsonrpc":"2.0","id":3,"method":"echo","params":"no"}"#,
        ]
        let fromText = Harness(), fromParsed = Harness()
        let textTraced = Traced(), parsedTraced = Traced()
        for (harness, trace) in [(fromText, textTraced), (fromParsed, parsedTraced)] {
            harness.engine.limits.maxBatchMembers = 5
            if traced { harness.engine.tracer = { trace.messages.append($0) } }
        }
        let parsing = fromParsed.engine.parsing
        for text in texts {
            let expected = fromText.send(text)
            let frame = Array(text.utf8).withUnsafeBytes { ParsedFrame($0, rules: parsing) }
            fromParsed.engine.receive(parsed: frame)
            #expect(fromParsed.written == expected, "\(text)")
            fromParsed.written.removeAll()
        }
        #expect(parsedTraced.messages == textTraced.messages)
        #expect(textTraced.messages.count == (traced ? texts.count : 0))
        #expect(fromText.engine.framesParsed == texts.count)
        #expect(fromParsed.engine.framesParsed == 0)
    }

    /// With a tracer, a batch over the bound is built (the tracer sees it whole); without one it
    /// is counted: the parsing a transport takes from the engine says which.
    @Test func theParsingTakenFromTheEngineBuildsABatchOverTheBoundOnlyForATracer() {
        let h = Harness()
        h.engine.limits.maxBatchMembers = 5
        let text = Array("[1,1,1,1,1,1]".utf8)
        let counted = text.withUnsafeBytes { ParsedFrame($0, rules: h.engine.parsing) }
        #expect(counted.estimatedBytes == text.count)
        h.engine.tracer = { _ in }
        let built = text.withUnsafeBytes { ParsedFrame($0, rules: h.engine.parsing) }
        #expect(built.estimatedBytes > 6 * MemoryLayout<JSON>.stride)
    }

    @Test func pastTheBoundOfItsRepliesABatchsRequestsAreAnsweredWithoutBeingHandled() {
        let h = Harness()
        // Each echo reply of a 100-character string is about 140 bytes: the third reaches 300.
        h.engine.limits.maxBatchReplyBytes = 300
        let text = String(repeating: "x", count: 100)
        let members = (0..<5).map { #"{"jsonrpc":"2.0","id":\#($0),"method":"echo","params":["\#(text)"]}"# }
            + [#"{"jsonrpc":"2.0","method":"later"}"#, #"{"jsonrpc":"2.0","id":9,"method":"later"}"#]
        let replies = h.send("[" + members.joined(separator: ",") + "]")
        let array = replies.first?.arrayValue ?? []
        #expect(array.count == 6)  // five echoes and the request "later"; the notification gets nothing
        #expect(array[0..<3].allSatisfy { $0["result"] == [.string(text)] })
        for refused in array[3...] {
            #expect(refused["error"]?["code"] == -32600)
            #expect(refused["error"]?["data"] == ["name": "batchReplyBytes", "limit": 300])
        }
        #expect(array.map(\.["id"]) == [0, 1, 2, 3, 4, 9])
        #expect(h.pending.isEmpty)  // neither "later" was handled
    }

    @Test func withASliceABatchIsHandledASliceAtATimeAndAnsweredOnce() {
        let h = Harness()
        h.engine.batchSlice = 16
        #expect(h.send(batch(40)).isEmpty)
        #expect(h.engine.hasPendingBatch)
        h.engine.continueBatch()
        #expect(h.written.isEmpty && h.engine.hasPendingBatch)
        h.engine.continueBatch()
        #expect(!h.engine.hasPendingBatch)
        #expect(h.written.count == 1 && h.written[0].arrayValue?.map(\.["id"]) == (0..<40).map { .int(Int64($0)) })
        h.written.removeAll()
        // A batch within one slice is done at once.
        #expect(h.send(batch(16)).first?.arrayValue?.count == 16)
        #expect(!h.engine.hasPendingBatch)
    }
}
