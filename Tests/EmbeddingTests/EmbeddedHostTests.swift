#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization
import Testing
import VMHost
import VMHostTesting

@Suite struct EmbeddedHostTests {
    @Test func answersThroughTheCallbackInOrder() async throws {
        let inbox = Inbox()
        let host = try openProbe(inbox)
        try host.send(message: request(1, "ping"))
        #expect(await inbox.exchange(id: 1) == [["jsonrpc": "2.0", "id": 1, "result": [:]]])
        try host.send(message: request(2, "vm.create", ["kind": "Probe", "id": "p"]))
        try host.send(message: request(3, "vm.subscribe", ["vm": "p", "outputs": ["count"]]))
        try host.send(message: request(4, "vm.send", ["vm": "p", "input": "increment"]))
        let messages = await inbox.exchange(id: 4)
        #expect(messages.count == 4)
        #expect(messages[0]["result"]?["vm"] == "p")
        #expect(messages[1]["result"]?["values"] == ["count": 0])
        #expect(messages[2]["method"] == "vm.changed")
        #expect(messages[2]["params"]?["values"] == ["count": 1])
        #expect(messages[3] == ["jsonrpc": "2.0", "id": 4, "result": [:]])
        #expect(await host.close() == 0)
        #expect(inbox.endCalls == 1)
    }

    @Test func readsAStreamSplitAnywhereInEitherFraming() async throws {
        for framing in ["ndjson", "lsp"] {
            let inbox = Inbox()
            let host = try openProbe(inbox, ["--framing", framing])
            var stream: [UInt8] = []
            for id in 1...3 {
                let body = Array(request(id, "ping").utf8)
                if framing == "lsp" {
                    stream += Array("Content-Length: \(body.count)\r\n\r\n".utf8) + body
                } else {
                    stream += body + [0x0A]
                }
            }
            for byte in stream { try host.send([byte]) }
            for id in 1...3 {
                #expect(await inbox.next("ping \(id) in \(framing)")?["id"] == .int(Int64(id)))
            }
            #expect(await host.close() == 0)
        }
    }

    @Test func theEndOfInputRunsWhatWasReadThenEnds() async throws {
        let inbox = Inbox()
        let host = try openProbe(inbox, ["--test-controls"])
        try host.send(message: request(1, "vm.create", ["kind": "Probe", "id": "p"]))
        try host.send(message: request(2, "vm.send", ["vm": "p", "input": "work", "value": ["ms": 20]]))
        // Closed while the command runs on the system clock: it is answered before the end.
        #expect(await host.close() == 0)
        let messages = inbox.all
        #expect(messages.last == ["jsonrpc": "2.0", "id": 2, "result": ["value": 1]])
        #expect(inbox.endCalls == 1)
        #expect(throws: EmbeddedHost.InputRefused(reason: .closed)) { try host.send(message: request(3, "ping")) }
    }

    @Test func aManualClockEndsAtOnceCancellingWhatWaitsForIt() async throws {
        let inbox = Inbox()
        let host = try openProbe(inbox)
        try host.send(message: request(1, "vm.create", ["kind": "Probe", "id": "p"]))
        try host.send(message: request(2, "vm.send", ["vm": "p", "input": "work"]))
        #expect(await host.close() == 0)
        #expect(inbox.all.last?["error"]?["code"] == -32800, "\(inbox.all.map { $0.description })")
    }

    @Test func exitEndsTheHostWithItsStatus() async throws {
        for (shutdown, expected) in [(true, Int32(0)), (false, 1)] {
            let inbox = Inbox()
            let host = try openProbe(inbox)
            if shutdown { try host.send(message: request(1, "shutdown")) }
            // What follows `exit` in the same input is not served.
            try host.send(Array((notification("exit") + "\n" + request(2, "ping") + "\n").utf8))
            #expect(await inbox.end() == expected)
            #expect(host.status == expected)
            #expect(inbox.all.allSatisfy { $0["id"] != 2 })
            #expect(throws: EmbeddedHost.InputRefused(reason: .closed)) { try host.send(message: request(3, "ping")) }
            #expect(await host.close() == expected)
            #expect(inbox.endCalls == 1)
        }
    }

    @Test func writesFromInsideTheCallbackAreHandledAfterIt() async throws {
        let inbox = Inbox()
        let host = try openProbe(inbox)
        let sent = Atomic<Int>(0)
        inbox.reply.withLock {
            $0 = { message in
                // Each reply to a ping sends the next, up to 5.
                guard let id = message["id"]?.intValue, id < 5 else { return }
                sent.add(1, ordering: .relaxed)
                try? host.send(message: request(Int(id) + 1, "ping"))
            }
        }
        try host.send(message: request(1, "ping"))
        for id in 1...5 { #expect(await inbox.next("the reply to ping \(id)")?["id"] == .int(Int64(id))) }
        #expect(sent.load(ordering: .relaxed) == 4)
        inbox.reply.withLock { $0 = nil }
        #expect(await host.close() == 0)
    }

    @Test func hostsOfOneProcessAreIndependent() async throws {
        let inboxes = (0..<3).map { _ in Inbox() }
        let hosts = try inboxes.map { try openProbe($0) }
        for (index, host) in hosts.enumerated() {
            try host.send(message: request(1, "vm.create", ["kind": "Probe", "args": ["start": .int(Int64(index))]]))
        }
        for (index, inbox) in inboxes.enumerated() {
            // Each host has its own handles and state.
            #expect(await inbox.next("vm.create")?["result"]?["vm"] == "vm1")
            try hosts[index].send(message: request(2, "vm.get", ["vm": "vm1", "outputs": ["count"]]))
            #expect(await inbox.next("vm.get")?["result"]?["values"]?["count"] == .int(Int64(index)))
        }
        #expect(await hosts[1].close() == 0)
        try hosts[0].send(message: request(3, "ping"))
        #expect(await inboxes[0].next("ping after another host ended")?["result"] == [:])
        for host in hosts { #expect(await host.close() == 0) }
    }

    @Test func refusesWhatTheCommandLineRefuses() {
        let cases: [([String], EmbeddedHost.OpenError.Kind)] = [
            (["--no-such-option"], .usage), (["--clock", "sundial"], .usage), (["--max-message-bytes", "1"], .usage),
            (["--help"], .usage), (["--version"], .usage), (["--trace", "/nonexistent/dir/trace"], .trace),
        ]
        for (arguments, kind) in cases {
            do throws(EmbeddedHost.OpenError) {
                _ = try EmbeddedHost(probeServer, arguments: arguments, onMessage: { _ in })
                Issue.record("\(arguments) opened a host")
            } catch {
                #expect(error.kind == kind, "\(arguments)")
                #expect(!error.message.isEmpty)
            }
        }
    }

    @Test func messagesAreAnAsyncSequenceThatEndsWithTheHost() async throws {
        let host = try EmbeddedHost(probeServer, arguments: ["--clock", "manual", "--test-controls"])
        try host.send(message: request(1, "ping"))
        try host.send(message: request(2, "vm.create", ["kind": "Probe"]))
        var iterator = host.messages.makeAsyncIterator()
        let first = try await iterator.next().map { try JSON.parse($0) }
        #expect(first?["id"] == 1)
        let second = try await iterator.next().map { try JSON.parse($0) }
        #expect(second?["result"]?["vm"] == "vm1")
        #expect(await host.close() == 0)
        #expect(await iterator.next() == nil)
        #expect(await host.close() == 0)
    }

    @Test func aReaderThatFallsBehindGetsMergedChanges() async throws {
        let host = try EmbeddedHost(probeServer, arguments: ["--clock", "manual", "--test-controls"])
        try host.send(message: request(1, "vm.create", ["kind": "Probe", "id": "p"]))
        try host.send(message: request(2, "vm.subscribe", ["vm": "p", "outputs": ["count"]]))
        // Nothing is read while 500 changes happen: they merge; every reply is kept.
        for id in 3..<503 { try host.send(message: request(id, "vm.send", ["vm": "p", "input": "increment"])) }
        _ = await host.close()
        var changes: [JSON] = []
        var replies = 0
        for await body in host.messages {
            let message = try JSON.parse(body)
            if message["method"] == "vm.changed" { changes.append(message) } else { replies += 1 }
        }
        #expect(replies == 502)
        #expect(changes.count < 500)
        #expect(changes.last?["params"]?["values"]?["count"] == 500)
    }

    @Test func traceIsWrittenAndClosed() async throws {
        let path = "/tmp/vmhost-embedded-trace-\(getpid())-\(UInt64.random(in: 0...UInt64.max)).ndjson"
        defer { unlink(path) }
        let inbox = Inbox()
        let host = try openProbe(inbox, ["--clock", "manual", "--trace", path])
        try host.send(message: request(1, "ping"))
        _ = await inbox.next("ping")
        #expect(await host.close() == 0)
        let text = readFile(path) ?? ""
        let lines = text.split(separator: "\n").map { try! JSON.parse(Array($0.utf8)) }
        #expect(lines.map { $0["dir"] } == ["in", "out"])
        #expect(lines.last?["msg"]?["id"] == 1)
    }
}

func readFile(_ path: String) -> String? {
    guard let file = fopen(path, "r") else { return nil }
    defer { fclose(file) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = fread(&buffer, 1, buffer.count, file)
        if count <= 0 { break }
        bytes += buffer[..<count]
    }
    return String(decoding: bytes, as: UTF8.self)
}
