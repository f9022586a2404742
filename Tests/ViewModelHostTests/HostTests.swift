@_spi(Transport) import VMHostEventLoop
import VMHostRuntime
import VMHostTesting
import Testing
@_spi(Transport) import VMHostWire
@_spi(Transport) @testable import VMHostCore

/// A host serving the test-only `Probe` kind, with a subscribed view-model `p`.
private func probeHost(diff: Bool = false, outputs: [String]? = nil) async -> InProcessConnection {
    let client = await InProcessConnection(kinds: [ProbeViewModel.factory()])
    await client.request("vm.create", ["kind": "Probe", "id": "p"])
    var params: JSONObject = ["vm": "p", "diff": .bool(diff)]
    if let outputs { params["outputs"] = .array(outputs.map { .string($0) }) }
    await client.request("vm.subscribe", .object(params))
    return client
}

private func send(_ input: String, _ value: JSON? = nil) -> JSON {
    var params: JSONObject = ["vm": "p", "input": .string(input)]
    if let value { params["value"] = value }
    return .object(params)
}

private func changed(_ values: JSON, subscription: String = "s1") -> JSON {
    ["jsonrpc": "2.0", "method": "vm.changed", "params": ["subscription": .string(subscription), "vm": "p", "values": values]]
}

private func event(_ name: String, _ value: JSON, subscription: String = "s1") -> JSON {
    ["jsonrpc": "2.0", "method": "vm.event", "params": ["subscription": .string(subscription), "vm": "p", "name": .string(name), "value": value]]
}

private func result(_ id: Int64, _ value: JSON) -> JSON { ["jsonrpc": "2.0", "id": .int(id), "result": value] }

@Suite("Host methods")
struct HostMethodTests {
    @Test func initializeReportsTheProtocolAndKindsAndSetsTheLocale() async {
        let client = await InProcessConnection(kinds: [ProbeViewModel.factory()])
        let reply = await client.request("initialize", ["protocolVersion": "1", "clientInfo": ["name": "t"], "locale": "en-US"])
        #expect(reply.result?["protocolVersion"] == "1")
        #expect(reply.result?["serverInfo"]?["name"] == "vmhost")
        #expect(reply.result?["kinds"] == ["Probe"])
        #expect(reply.result?["locale"] == "en")
        #expect(await client.request("initialize", ["locale": "fr"]).errorCode == -32602)
        #expect(await client.request("initialize", ["protocolVersion": "2"]).errorCode == -32602)
        #expect(await client.request("ping").result == [:])
    }

    @Test func describeDerivesNamesKindsAndSchemasFromTheDeclaration() async {
        let client = await InProcessConnection(kinds: [ProbeViewModel.factory()])
        let catalog = await client.request("host.describe").result?["kinds"]?.arrayValue?.first
        #expect(catalog?["kind"] == "Probe")
        let inputs = catalog?["inputs"]?.arrayValue ?? []
        #expect(inputs.map { $0["name"] } == ["text", "increment", "bump", "emit", "append", "reset", "work", "once", "fail", "perKey", "parallel", "guarded"])
        #expect(inputs[0] == ["name": "text", "kind": "value", "value": ["type": "string"]])
        #expect(inputs[6]["kind"] == "command" && inputs[6]["policy"] == "latest")
        #expect(inputs[7]["policy"] == "ignore")
        let outputs = catalog?["outputs"]?.arrayValue ?? []
        #expect(outputs.map { $0["name"] } == ["count", "text", "items", "busy", "loading", "error", "pinged"])
        #expect(outputs[0] == ["name": "count", "kind": "property", "schema": ["type": "integer"]])
        #expect(outputs[2]["schema"] == ["type": "array", "items": ["type": "string"]])
        #expect(outputs[5]["kind"] == "event")
        #expect(catalog?["args"]?["properties"]?["start"] == ["type": "integer", "default": 0])
        #expect(await client.request("host.describe", ["kind": "Nope"]).errorCode == -32602)
    }

    @Test func createListGetDispose() async {
        let client = await InProcessConnection(kinds: [ProbeViewModel.factory()])
        let created = await client.request("vm.create", ["kind": "Probe", "args": ["start": 5]])
        #expect(created.result?["vm"] == "vm1")
        #expect(created.result?["kind"] == "Probe")
        #expect(created.result?["inputs"]?.arrayValue?.count == 12)
        await client.request("vm.create", ["kind": "Probe", "id": "mine"])
        #expect(await client.request("vm.list").result == [["vm": "vm1", "kind": "Probe"], ["vm": "mine", "kind": "Probe"]])
        #expect(await client.request("vm.get", ["vm": "vm1", "outputs": ["count"]]).result == ["values": ["count": 5]])
        let all = await client.request("vm.get", ["vm": "vm1"]).result?["values"]
        #expect(all?.objectValue?.keys == ["count", "text", "items", "busy", "loading"])
        #expect(await client.request("vm.dispose", ["vm": "vm1"]).result == [:])
        #expect(await client.request("vm.list").result == [["vm": "mine", "kind": "Probe"]])
    }

    @Test func errorsNameWhatWasWrong() async {
        let client = await InProcessConnection(kinds: [ProbeViewModel.factory()])
        await client.request("vm.create", ["kind": "Probe", "id": "p"])
        let cases: [(String, JSON, Int64, String)] = [
            ("vm.create", ["kind": 5], -32602, "params.kind: expected a string, got a number"),
            ("vm.create", ["kind": "Nope"], -32602, "params.kind: unknown kind \"Nope\" (kinds: Probe)"),
            ("vm.create", ["kind": "Probe", "id": "p"], -32602, "params.id: a view-model with handle \"p\" already exists"),
            ("vm.create", ["kind": "Probe", "args": ["start": "x"]], -32602, "params.args.start: expected an integer, got a string"),
            ("vm.create", ["kind": "Probe", "args": ["stat": 1]], -32602, "params.args.stat: is not a known member"),
            ("vm.get", ["vm": "nope"], -32001, "Unknown view-model \"nope\""),
            ("vm.get", ["vm": "p", "outputs": ["nope"]], -32002, "Unknown output \"nope\" of Probe"),
            ("vm.get", ["vm": "p", "outputs": ["pinged"]], -32002, "is an event"),
            ("vm.send", ["vm": "p", "input": "nope"], -32002, "Unknown input \"nope\" of Probe (inputs: text, increment"),
            ("vm.send", ["vm": "p", "input": "text", "value": 3], -32602, "params.value: expected a string, got a number"),
            ("vm.send", ["vm": "p", "input": "increment", "value": 3], -32602, "params.value: this input takes no value"),
            ("vm.send", ["vm": "p"], -32602, "params.input: is required"),
            ("vm.subscribe", ["vm": "p", "outputs": ["nope"]], -32002, "Unknown output"),
            ("vm.unsubscribe", ["subscription": "s9"], -32602, "params.subscription: no subscription \"s9\""),
            ("vm.dispose", ["vm": "ghost"], -32001, "Unknown view-model"),
            ("control.backend.script", [:], -32601, "Method not found"),
        ]
        for (method, params, code, message) in cases {
            let reply = await client.request(method, params)
            #expect(reply.errorCode == code, "\(method) \(params)")
            #expect(reply.error?["message"]?.stringValue?.contains(message) == true, "\(method): \(reply.error?["message"] ?? nil)")
        }
    }

    @Test func testControlsNeedTheFlag() async {
        let client = await InProcessConnection(kinds: [], testControls: false)
        #expect(await client.request("control.clock.advance", ["ms": 1]).errorCode == -32601)
        let enabled = await InProcessConnection(kinds: [])
        #expect(await enabled.request("control.clock.advance", ["ms": 1500]).result == ["now": 1500])
        #expect(await enabled.request("control.clock.advance", ["ms": -1]).errorCode == -32602)
    }

    @Test func shutdownRefusesLaterRequests() async {
        let client = await InProcessConnection(kinds: [ProbeViewModel.factory()])
        #expect(await client.request("shutdown").response == ["jsonrpc": "2.0", "id": 1, "result": nil])
        #expect(await client.request("ping").errorCode == -32005)
        #expect(await MainActorCheck.hasShutDown(client))
    }
}

enum MainActorCheck {
    @HostActor static func hasShutDown(_ client: InProcessConnection) -> Bool { client.host.hasShutDown }
}

@Suite("Delivery rules")
struct DeliveryTests {
    @Test func subscribeReturnsCurrentValuesThenChangesArriveBeforeTheReply() async {
        let client = await InProcessConnection(kinds: [ProbeViewModel.factory()])
        await client.request("vm.create", ["kind": "Probe", "id": "p", "args": ["start": 3]])
        let subscribed = await client.request("vm.subscribe", ["vm": "p"])
        #expect(subscribed.result == ["subscription": "s1", "values": ["count": 3, "text": "", "items": [], "busy": false, "loading": false]])
        let reply = await client.request("vm.send", send("increment"))
        #expect(reply.messages == [changed(["count": 4]), result(3, [:])])
    }

    @Test func oneChangedPerSubscriptionPerTurnWithLastValuesOnly() async {
        let client = await probeHost()
        await client.feed([
            ["jsonrpc": "2.0", "method": "vm.send", "params": send("increment")],
            ["jsonrpc": "2.0", "method": "vm.send", "params": send("increment")],
            ["jsonrpc": "2.0", "method": "vm.send", "params": send("text", "a")],
            ["jsonrpc": "2.0", "id": 10, "method": "vm.send", "params": send("increment")],
        ])
        #expect(client.takeMessages() == [changed(["count": 3, "text": "a"]), [result(10, [:])]])
    }

    @Test func unchangedValuesAreNeverResent() async {
        let client = await probeHost()
        #expect(await client.request("vm.send", send("text", "a")).changes.count == 1)
        #expect(await client.request("vm.send", send("text", "a")).changes.isEmpty)
        // Changed and changed back within one turn: nothing to send.
        await client.feed([
            ["jsonrpc": "2.0", "method": "vm.send", "params": send("text", "b")],
            ["jsonrpc": "2.0", "id": 9, "method": "vm.send", "params": send("text", "a")],
        ])
        #expect(client.takeMessages() == [[result(9, [:])]])
    }

    @Test func eventsAreNeverCoalescedAndKeepTheirOrderWithChanges() async {
        let client = await probeHost()
        let reply = await client.request("vm.send", send("emit"))
        #expect(reply.messages == [changed(["count": 1]), event("pinged", 1), changed(["count": 2]), result(3, [:])])
        await client.feed([
            ["jsonrpc": "2.0", "method": "vm.send", "params": send("emit")],
            ["jsonrpc": "2.0", "id": 20, "method": "vm.send", "params": send("emit")],
        ])
        #expect(client.takeMessages() == [
            changed(["count": 3]), event("pinged", 3), changed(["count": 5]), event("pinged", 5), changed(["count": 6]), [result(20, [:])],
        ])
    }

    @Test func subscriptionsSeeOnlyTheOutputsTheyAskedFor() async {
        let client = await probeHost(outputs: ["text"])
        let second = await client.request("vm.subscribe", ["vm": "p", "outputs": ["count", "pinged"]])
        #expect(second.result == ["subscription": "s2", "values": ["count": 0]])
        let reply = await client.request("vm.send", send("emit"))
        #expect(reply.messages == [
            changed(["count": 1], subscription: "s2"), event("pinged", 1, subscription: "s2"),
            changed(["count": 2], subscription: "s2"), result(4, [:]),
        ])
        #expect(await client.request("vm.unsubscribe", ["subscription": "s2"]).result == [:])
        #expect(await client.request("vm.send", send("emit")).notifications.isEmpty)
    }

    @Test func diffSubscriptionsReceiveSplices() async {
        let client = await probeHost(diff: true, outputs: ["items", "count"])
        let first = await client.request("vm.send", send("append", ["a", "b"]))
        #expect(first.changes == [["subscription": "s1", "vm": "p", "values": [:], "splices": ["items": [["index": 0, "remove": 0, "insert": ["a", "b"]]]]]])
        let more = await client.request("vm.send", send("append", ["c"]))
        #expect(more.changes.first?["splices"] == ["items": [["index": 2, "remove": 0, "insert": ["c"]]]])
        let reset = await client.request("vm.send", send("reset"))
        #expect(reset.changes.first?["splices"] == ["items": [["index": 0, "remove": 3, "insert": []]]])
        #expect(reset.changes.first?["values"] == [:])
    }

    @Test func aStalledReaderCostsBoundedMemoryAndLosesOnlySupersededValues() async {
        let client = await probeHost()
        client.pauseReading()
        let increments = JSON.array(Array(repeating: ["jsonrpc": "2.0", "method": "vm.send", "params": send("increment")], count: 1000))
        for round in 0..<100 {
            await client.feed(increments)
            if round == 50 { await client.feed(["jsonrpc": "2.0", "method": "vm.send", "params": send("emit")]) }
            #expect(client.pendingOutputCount <= 3)
        }
        client.resumeReading()
        let messages = client.takeMessages()
        #expect(messages.count == 3)
        #expect(messages[1] == event("pinged", 51_001))
        #expect(messages.last == changed(["count": 100_002]))
    }

    @Test func commandsAnswerWhenTheyEndAfterTheirNotifications() async {
        let client = await probeHost(outputs: ["count", "busy", "loading", "error"])
        let started = await client.start("vm.send", send("work", ["ms": 100]), id: 50)
        // The command starts in this message's turn; its task starts (and counts activity) in the next.
        #expect(started == [changed(["busy": true]), changed(["loading": true])])
        let advanced = await client.advance(ms: 100)
        #expect(advanced.messages == [
            changed(["count": 1, "loading": false, "busy": false]), result(50, ["value": 1]), result(3, ["now": 100]),
        ])
    }

    @Test func aFailedCommandEmitsOneErrorEventAndAnswersMinus32004() async {
        let client = await probeHost(outputs: ["error"])
        let reply = await client.request("vm.send", send("fail", ["kind": "business"]))
        // The user reads the message, the developer the detail.
        let object: JSON = [
            "kind": "business", "code": "E42", "message": "probe failed (business)", "detail": "probe failure", "input": "fail",
        ]
        #expect(reply.messages.count == 2)
        #expect(reply.messages[0] == event("error", object))
        #expect(reply.errorCode == -32004)
        #expect(reply.error?["data"] == object)
    }

    @Test func disabledInputsAnswerMinus32003ToTheCallerOnly() async {
        let client = await probeHost()
        _ = await client.start("vm.send", send("once"), id: 60)
        let refused = await client.request("vm.send", send("once"))
        #expect(refused.messages.count == 1)
        #expect(refused.errorCode == -32003)
        #expect(refused.error?["data"] == ["input": "once", "reason": "already running"])
    }

    @Test func latestPolicyCancelsTheRunningCaller() async {
        let client = await probeHost(outputs: ["count"])
        _ = await client.start("vm.send", send("work", ["ms": 100]), id: 70)
        let second = await client.start("vm.send", send("work", ["ms": 100]), id: 71)
        #expect(second == [["jsonrpc": "2.0", "id": 70, "error": ["code": -32800, "message": "Request cancelled"]]])
        let advanced = await client.advance(ms: 100)
        #expect(advanced.messages == [changed(["count": 1]), result(71, ["value": 1]), result(3, ["now": 100])])
    }
}

@Suite("Cancellation races")
struct CancellationTests {
    @Test func aCancelRightBehindItsRequestAlwaysFindsIt() async {
        let client = await probeHost(outputs: ["busy", "count"])
        let request: JSON = ["jsonrpc": "2.0", "id": 80, "method": "vm.send", "params": send("work", ["ms": 100])]
        let cancel: JSON = ["jsonrpc": "2.0", "method": "$/cancelRequest", "params": ["id": 80]]
        let bytes = request.serialized() + [10] + cancel.serialized() + [10]
        await client.feed(bytes)
        #expect(client.takeMessages() == [
            changed(["busy": true]), changed(["busy": false]),
            ["jsonrpc": "2.0", "id": 80, "error": ["code": -32800, "message": "Request cancelled"]],
        ])
        let advanced = await client.advance(ms: 500)
        #expect(advanced.messages == [result(3, ["now": 500])])
    }

    @Test func cancellingUnknownOrFinishedRequestsIsANoOp() async {
        let client = await probeHost()
        #expect(await client.notify("$/cancelRequest", ["id": 12345]).isEmpty)
        await client.request("vm.send", send("fail"), id: 90)
        #expect(await client.notify("$/cancelRequest", ["id": 90]).isEmpty)
        #expect(await client.request("ping").messages.count == 1)
    }

    @Test func disposeCancelsWorkInFlightAndEndsSubscriptions() async {
        let client = await probeHost(outputs: ["count", "busy"])
        _ = await client.start("vm.send", send("work", ["ms": 100]), id: 95)
        _ = await client.start("vm.send", send("parallel", ["ms": 100]), id: 96)
        let disposed = await client.request("vm.dispose", ["vm": "p"])
        #expect(disposed.messages.filter { $0["error"]?["code"] == -32800 }.map { $0["id"] } == [95, 96])
        #expect(disposed.result == [:])
        #expect(await client.advance(ms: 1000).notifications.isEmpty)
        #expect(await client.request("vm.get", ["vm": "p"]).errorCode == -32001)
    }

    @Test func cancelEverythingAnswersEveryPendingRequest() async {
        let client = await probeHost()
        _ = await client.start("vm.send", send("work", ["ms": 100]), id: 100)
        _ = await client.start("vm.send", send("once"), id: 101)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            EventLoop.shared.execute {
                HostActor.assumeIsolated { client.host.cancelEverything() }
                done.resume()
            }
        }
        let messages = client.takeMessages().filter { $0["id"] != nil }
        #expect(Set(messages.compactMap { $0["id"]?.intValue }) == [100, 101])
        #expect(messages.allSatisfy { $0["error"]?["code"] == -32800 })
    }

    @Test func aNotificationSendIsFireAndForget() async {
        let client = await probeHost(outputs: ["count"])
        let written = await client.notify("vm.send", send("work", ["ms": 10]))
        #expect(written.isEmpty)
        let advanced = await client.advance(ms: 10)
        #expect(advanced.messages == [changed(["count": 1]), result(3, ["now": 10])])
    }
}

@Suite("Trace redaction")
struct RedactionTests {
    let redaction = Redaction(plainInputs: ["username"], secretInputs: ["password", "code"], secretMembers: ["token"])

    @Test func secretsAreMaskedAndCodesThatAreNumbersKept() {
        let message: JSON = [
            "jsonrpc": "2.0", "id": 1, "method": "vm.send",
            "params": ["vm": "l", "input": "password", "value": "hunter22"],
        ]
        #expect(redaction.redact(message)["params"]?["value"] == "***")
        let nested: JSON = ["a": ["token": "abc", "code": "123456", "list": [["password": "x"]]], "error": ["code": -32004]]
        #expect(redaction.redact(nested) == ["a": ["token": "***", "code": "***", "list": [["password": "***"]]], "error": ["code": -32004]])
        let numeric: JSON = ["method": "vm.send", "params": ["input": "code", "value": 123456]]
        #expect(redaction.redact(numeric)["params"]?["value"] == "***")
    }

    @Test func aSendShowsOnlyThePlainInputsValue() {
        let plain: JSON = ["method": "vm.send", "params": ["vm": "l", "input": "username", "value": "u1", "extra": "x"]]
        #expect(redaction.redact(plain)["params"] == ["vm": "l", "input": "username", "value": "u1", "extra": "***"])
        let unknown: JSON = ["method": "vm.send", "params": ["vm": "l", "input": "passwd", "value": "pw"]]
        #expect(redaction.redact(unknown)["params"] == ["vm": "l", "input": "passwd", "value": "***"])
        let positional: JSON = ["method": "vm.send", "params": ["l", "password", "pw"]]
        #expect(redaction.redact(positional)["params"] == ["***", "***", "***"])
        let noInput: JSON = ["method": "vm.send", "params": ["vm": ["password": "pw"], "value": "pw"]]
        #expect(redaction.redact(noInput)["params"] == ["vm": "***", "value": "***"])
        let noStructure: JSON = ["method": "vm.send", "params": "hunter22"]
        #expect(redaction.redact(noStructure)["params"] == "***")
    }

    @Test func aSecretQuotedBackIsMaskedWhereverItComesLater() {
        let trace = TraceRedaction(redaction)
        for typed in ["h", "hu", "hun", "hunter22"] {
            _ = trace.redact(["method": "vm.send", "params": ["vm": "l", "input": "password", "value": .string(typed)]])
        }
        // A server's message quoting the password, the password alone, and a typed prefix of it.
        let answer: JSON = [
            "id": 1, "error": ["code": -32004, "message": "failed", "data": ["message": "wrong password hunter22 for 138"]],
        ]
        #expect(trace.redact(answer)["error"]?["data"]?["message"] == "***")
        #expect(trace.redact(["result": ["echo": "hunter22", "short": "hun", "other": "h", "name": "稳健增利1号"]])
            == ["result": ["echo": "***", "short": "***", "other": "h", "name": "稳健增利1号"]])
        // Also what the client itself sends again elsewhere, and a secret member's value.
        _ = trace.redact(["params": ["token": "tok-8f3a-long"]])
        #expect(trace.redact(["method": "log", "params": ["text": "tok-8f3a-long expired"]])["params"]?["text"] == "***")
        // Rules without memory show what was never masked.
        #expect(redaction.redact(answer)["error"]?["data"]?["message"] == "wrong password hunter22 for 138")
    }

    @Test func aTraceStopsAtItsBoundWithALastLineSayingWhy() {
        var written = 0
        let line = [UInt8](repeating: UInt8(ascii: "x"), count: 100)
        var lines: [[UInt8]] = []
        for _ in 0..<100 {
            if let admitted = TraceRecorder.admit(line, written: &written, maxBytes: 2048, origin: 0) { lines += admitted }
        }
        #expect(lines.reduce(0) { $0 + $1.count + 1 } <= 2048)
        let last = String(decoding: lines.last ?? [], as: UTF8.self)
        #expect(last.contains(#""dir":"end""#) && last.contains("--max-trace-bytes"), "\(last)")
        #expect(lines.dropLast().allSatisfy { $0 == line })
    }
}

@Suite("Params rule and output pause")
struct ParamsRuleTests {
    @Test func everyMethodRefusesPositionalParamsAndUnknownMembersAlike() async {
        let client = await probeHost()
        let methods: [(String, JSONObject)] = [
            ("initialize", [:]), ("ping", [:]), ("host.describe", [:]), ("vm.create", ["kind": "Probe"]),
            ("vm.list", [:]), ("vm.get", ["vm": "p"]), ("vm.send", ["vm": "p", "input": "increment"]),
            ("vm.subscribe", ["vm": "p"]), ("vm.unsubscribe", ["subscription": "s1"]), ("vm.dispose", ["vm": "p"]),
            ("control.clock.advance", ["ms": 0]), ("control.output.pause", [:]), ("control.output.resume", [:]),
            ("shutdown", [:]),
        ]
        for (method, valid) in methods {
            var extra = valid
            extra["bogus"] = 1
            let unknown = await client.request(method, .object(extra))
            #expect(unknown.errorCode == -32602, "\(method)")
            #expect(unknown.error?["message"]?.stringValue?.contains("params.bogus: is not a known member") == true, "\(method)")
            let positional = await client.request(method, [])
            #expect(positional.errorCode == -32602, "\(method)")
            #expect(positional.error?["message"] == "Invalid params: params: expected an object, got an array", "\(method)")
        }
        // Nothing happened: p is still there and the host still serves.
        #expect(await client.request("vm.list").result == [["vm": "p", "kind": "Probe"]])
    }

    @Test func unsubscribingASubscriptionEndedByDisposeIsDone() async {
        let client = await probeHost()
        #expect(await client.request("vm.dispose", ["vm": "p"]).result == [:])
        #expect(await client.request("vm.unsubscribe", ["subscription": "s1"]).result == [:])
        #expect(await client.request("vm.unsubscribe", ["subscription": "s1"]).result == [:])
        #expect(await client.request("vm.unsubscribe", ["subscription": "s2"]).errorCode == -32602)
        #expect(await client.request("vm.unsubscribe", ["subscription": "s01"]).errorCode == -32602)
    }

    @Test func pausedOutputMergesChangesWhereTheFirstStoodAndResumeWritesItAll() async {
        let client = await probeHost(diff: true, outputs: ["count", "items"])
        let pause = await client.request("control.output.pause")
        #expect(pause.messages == [result(pause.id.intValue!, [:])])
        #expect(await client.request("vm.send", send("increment")).messages.isEmpty)
        #expect(await client.request("vm.send", send("append", ["a"])).messages.isEmpty)
        #expect(await client.request("vm.send", send("append", ["b"])).messages.isEmpty)
        let resume = await client.request("control.output.resume")
        let merged: JSON = [
            "jsonrpc": "2.0", "method": "vm.changed",
            "params": ["subscription": "s1", "vm": "p", "values": ["count": 1, "items": ["a", "b"]]],
        ]
        #expect(resume.messages.first == merged)
        #expect(resume.messages.count == 5)  // the change, three replies, the resume's reply
        #expect(resume.messages.last == result(resume.id.intValue!, [:]))
        // Afterwards, a list edit is a splice again.
        let after = await client.request("vm.send", send("append", ["c"]))
        #expect(after.changes.first?["splices"] == ["items": [["index": 2, "remove": 0, "insert": ["c"]]]])
    }
}
