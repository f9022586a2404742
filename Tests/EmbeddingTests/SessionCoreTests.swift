import Foundation
import Testing
@_spi(Transport) import VMHost
@_spi(Transport) import VMHostCore
@_spi(Transport) import VMHostJSONRPC
import VMHostTesting
import VMHostWire

/// The session core fed bytes by a fake transport: the end of input (SPEC §7) and how a session
/// ended are decided there, once, whatever carries the bytes.
@Suite @HostActor struct SessionCoreTests {
    /// What the core told its transport, in order.
    @HostActor final class FakeTransport: SessionTransport {
        var calls: [String] = []
        /// Messages the host queued, when the core asked for them to be written.
        var written: [JSON] = []
        weak var core: SessionCore?

        func outputResumed() { calls.append("outputResumed") }

        func writeQueued() {
            calls.append("writeQueued")
            write()
        }

        func sessionEnding(_ end: SessionEnd, status: Int32) { calls.append("ending: \(end), \(status)") }

        func sessionEnded(_ end: SessionEnd, status: Int32) {
            calls.append("ended: \(end), \(status)")
            write()
        }

        /// Writes what is queued, as a transport's writer does: seen by the trace and recording.
        private func write() {
            while let (body, _) = core?.host.outputQueue.takeFirst() {
                core?.observeOutgoing?(body)
                written.append(try! JSON.parse(body))
            }
        }
    }

    /// A core of `server` started with `arguments`, its transport a fake.
    func open(
        _ arguments: [String], server: Server = probeServer, files: SessionFiles = SessionFiles()
    ) throws -> (SessionCore, FakeTransport) {
        let parsed = try ParsedArguments(arguments, options: server.allOptions)
        let settings = try StandardSettings(parsed)
        let core = try SessionCore(
            server: server, settings: settings, arguments: parsed, logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() },
            files: files, servingOn: "in a test")
        let transport = FakeTransport()
        transport.core = core
        core.transport = transport
        return (core, transport)
    }

    func feed(_ core: SessionCore, _ lines: [String]) {
        let bytes = Array(lines.map { $0 + "\n" }.joined().utf8)
        bytes.withUnsafeBytes { core.connection.consume($0) }
    }

    /// A transport of many sessions on one host thread (WebSocket) parses each message where it
    /// reads it: the host thread dispatches the message parsed, parses nothing itself, and the
    /// replies are those of the same text read on the host thread.
    @Test func aMessageParsedByTheTransportsReaderIsDispatchedWithoutTheHostParsingIt() async throws {
        let numbers = "[" + Array(repeating: "1", count: 200_000).joined(separator: ",") + "]"
        let texts = [
            #"{"jsonrpc":"2.0","method":"flood","params":\#(numbers)}"#,
            #"{"jsonrpc":"2.0","id":1,"method":"ping","params":\#(numbers)}"#,
            request(2, "ping"),
            "[" + Array(repeating: request(3, "ping"), count: 1001).joined(separator: ",") + "]",
            #"{"jsonrpc":"2.0","id":4,"method":"ping""#,
        ]
        let (read, readTransport) = try open([])
        feed(read, texts)
        read.end(.peerClosed, status: 0)

        let (parsed, parsedTransport) = try open([])
        let parsing = parsed.connection.parsing
        // Parsed off the host thread, as a reader does.
        let frames = await Task.detached {
            texts.map { text in Array(text.utf8).withUnsafeBytes { ParsedFrame($0, rules: parsing) } }
        }.value
        for frame in frames { parsed.connection.receive(parsed: frame) }
        parsed.end(.peerClosed, status: 0)

        #expect(parsed.host.engine.framesParsed == 0)
        #expect(read.host.engine.framesParsed == texts.count)
        #expect(parsedTransport.written == readTransport.written)
        // The ping with params, the ping, the refused batch, the parse error.
        #expect(parsedTransport.written.map { $0["id"] } == [1, 2, .null, .null])
        #expect(parsedTransport.written[0]["error"]?["code"] == -32602)
        #expect(parsedTransport.written[1]["result"] == [:])
    }

    @Test func aManualClockEndsAtTheEndOfInputCancellingWhatWaits() throws {
        let (core, transport) = try open(["--clock", "manual"])
        feed(core, [
            request(1, "vm.create", ["kind": "Probe", "id": "p"]),
            request(2, "vm.send", ["vm": "p", "input": "work", "value": ["ms": 60_000]]),
        ])
        core.connection.finish()
        #expect(core.ending == nil)
        core.inputEnded()
        #expect(core.ending?.end == .endOfInput)
        #expect(core.ending?.status == 0)
        #expect(transport.calls == ["outputResumed", "ending: end of input, 0", "ended: end of input, 0"])
        // The command nothing could move on any more was cancelled: -32800.
        #expect(transport.written.last?["id"] == 2)
        #expect(transport.written.last?["error"]?["code"] == -32800)
    }

    @Test func aSystemClockWaitsForTheWorkInFlight() throws {
        let (core, transport) = try open([])
        feed(core, [
            request(1, "vm.create", ["kind": "Probe", "id": "p"]),
            request(2, "vm.send", ["vm": "p", "input": "work", "value": ["ms": 60_000]]),
        ])
        core.connection.finish()
        core.inputEnded()
        #expect(core.inputHandled)
        #expect(core.ending == nil)
        #expect(core.checkWorkDone() == false)
        #expect(transport.calls == ["outputResumed"])
        // Told to stop (a signal): the end is decided once, the later ones change nothing.
        core.end(.signal(15), status: 0)
        core.end(.exitNotification, status: 1)
        core.inputEnded()
        #expect(core.checkWorkDone())
        #expect(core.ending?.end == .signal(15))
        #expect(transport.calls == ["outputResumed", "ending: signal 15, 0", "ended: signal 15, 0"])
        core.finish(traceWait: 0)
    }

    @Test func withNothingInFlightTheEndOfInputEndsAtOnce() throws {
        let (core, transport) = try open([])
        feed(core, [request(1, "ping")])
        core.connection.finish()
        core.inputEnded()
        #expect(core.ending?.end == .endOfInput)
        #expect(transport.calls == ["outputResumed", "ending: end of input, 0", "ended: end of input, 0"])
        #expect(transport.written == [["jsonrpc": "2.0", "id": 1, "result": [:]]])
    }

    @Test func exitEndsWithTheStatusOfShutdown() throws {
        for (lines, status) in [([notification("exit")], Int32(1)), ([request(1, "shutdown"), notification("exit")], 0)] {
            let (core, transport) = try open(["--clock", "manual"])
            feed(core, lines)
            #expect(core.ending?.end == .exitNotification)
            #expect(core.ending?.status == status)
            #expect(transport.calls == ["ending: exit notification, \(status)", "ended: exit notification, \(status)"])
            core.finish(traceWait: 0)
        }
    }

    /// The recording is given to the app while its kinds are made (no global carries it), and its
    /// last step is written after what was queued, once.
    @Test func theRecordingReachesTheAppAndEndsAfterTheQueuedOutput() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("core-\(UUID().uuidString).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let server = Server(name: "probe", version: "1.0.0") { environment in
            environment.recorder?.addComment("made with the recording at hand")
            return ServedApp(kinds: [ProbeViewModel.factory()])
        }
        var settings = try StandardSettings(ParsedArguments(["--record", path], options: server.allOptions))
        settings.tracePath = nil
        let files = try SessionFiles.open(settings)
        let (core, transport) = try open(["--clock", "manual", "--record", path], server: server, files: files)
        #expect(core.recorder != nil)
        feed(core, [request(1, "ping")])
        core.end(.signal(15), status: 0)
        core.finish(traceWait: 0)
        #expect(transport.calls == ["ending: signal 15, 0", "writeQueued", "ended: signal 15, 0"])
        let lines = try RecordingSteps.values(of: Array(String(contentsOfFile: path, encoding: .utf8).utf8))
        #expect(lines.first?["args"] == ["--clock", "manual"])
        #expect(lines.contains { $0["comment"] == "made with the recording at hand" })
        let expect = try #require(lines.firstIndex { $0["expect"]?["id"] == 1 })
        let close = try #require(lines.firstIndex { $0["close"] == true })
        #expect(expect < close)
        #expect(lines[close - 1]["comment"] == "The host was ended here (signal 15); a replay ends the input instead.")
    }
}

/// How a session ended decides its recording's last step, one rule for every transport.
@Suite struct SessionEndRecordingTests {
    @Test(arguments: [
        (SessionEnd.endOfInput, nil as String?, true),
        (.outputClosed, "The host's output was closed here; a replay ends the input instead.", true),
        (.signal(15), "The host was ended here (signal 15); a replay ends the input instead.", true),
        (.serverStopping, "The session was ended here (server stopping); a replay ends the input instead.", true),
        (.inputRefused("binary frames are not accepted"), "The session was ended here (binary frames are not accepted); a replay ends the input instead.", true),
        (.peerClosed, "The page closed its session here.", true),
        (.exitNotification, nil, false),
    ])
    func theLastStep(end: SessionEnd, comment: String?, closes: Bool) throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("end-\(UUID().uuidString).jsonl").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let recorder = SessionRecorder(fd: try SessionRecorder.create(path: path), arguments: [], manualClock: true)
        recorder.incoming(["jsonrpc": "2.0", "id": 7, "method": "ping"])
        recorder.sessionEnded(end, status: 1)
        recorder.sessionEnded(.endOfInput, status: 0)  // a second end writes nothing
        recorder.cutShort(comment: "the end")
        let lines = try RecordingSteps.values(of: Array(String(contentsOfFile: path, encoding: .utf8).utf8))
        let steps = lines.filter { $0["close"] != nil || $0["exit"] != nil }
        #expect(steps == [closes ? ["close": true] : ["exit": 1]])
        if let comment { #expect(lines.contains { $0["comment"] == .string(comment) }) }
        // A session cut short cancels the request still pending in a replay, but for `exit` and
        // the end of input, which let it run.
        let cancels = lines.contains { $0["send"]?["method"] == "$/cancelRequest" }
        #expect(cancels == (comment != nil))
    }
}
