@_spi(Transport) import VMHostEventLoop
import VMHostRuntime
import VMHostTesting
import Testing
@_spi(Transport) import VMHostWire
@_spi(Transport) @testable import VMHostCore

/// A test-only kind with one list edited in place: `edit [{at, remove, insert}]` applies each edit
/// in order with `replaceSubrange` in one turn; `assign [Int]` sets the list whole.
@HostActor
final class LinesViewModel: ViewModel {
    static let kind = "Lines"
    @Output var lines: [Int] = []
    let edit = Trigger(of: JSON.self) { vm, edits in
        for edit in edits.arrayValue ?? [] {
            let at = Int(edit["at"]?.intValue ?? 0)
            let remove = Int(edit["remove"]?.intValue ?? 0)
            let insert = (edit["insert"]?.arrayValue ?? []).map { Int($0.intValue ?? 0) }
            vm.$lines.replaceSubrange(at..<(at + remove), with: insert)
        }
    }
    let assign = Trigger(of: [Int].self) { vm, lines in vm.lines = lines }

    static func factory() -> ViewModelFactory {
        ViewModelFactory { _ in LinesViewModel() }
    }
}

/// A client's copy of `lines` kept from the notifications of one subscription.
private struct Mirror {
    let subscription: String
    var lines: [JSON]

    mutating func apply(_ messages: [JSON]) {
        for message in messages where message["method"] == "vm.changed" && message["params"]?["subscription"] == .string(subscription) {
            if let value = message["params"]?["values"]?["lines"]?.arrayValue { lines = value }
            for splice in message["params"]?["splices"]?["lines"]?.arrayValue ?? [] {
                let index = Int(splice["index"]!.intValue!)
                let remove = Int(splice["remove"]!.intValue!)
                lines.replaceSubrange(index..<(index + remove), with: splice["insert"]!.arrayValue!)
            }
        }
    }
}

private func linesHost() async -> InProcessConnection {
    let client = await InProcessConnection(kinds: [LinesViewModel.factory()])
    await client.request("vm.create", ["kind": "Lines", "id": "l"])
    await client.request("vm.subscribe", ["vm": "l", "diff": true])
    await client.request("vm.subscribe", ["vm": "l"])
    return client
}

/// 1 to 4 random edits of `list` (applied to it, as the host will), or now and then a whole value.
private func randomInput(_ list: inout [Int], using random: inout SeededGenerator) -> JSON {
    if Int.random(in: 0..<10, using: &random) == 0 {
        list = (0..<Int.random(in: 0..<12, using: &random)).map { _ in Int.random(in: 0..<3, using: &random) }
        return ["vm": "l", "input": "assign", "value": .array(list.map(\.json))]
    }
    var edits: [JSON] = []
    for _ in 0..<Int.random(in: 1...4, using: &random) {
        let at = Int.random(in: 0...list.count, using: &random)
        let remove = Int.random(in: 0...min(2, list.count - at), using: &random)
        let insert = (0..<Int.random(in: 0..<3, using: &random)).map { _ in Int.random(in: 0..<3, using: &random) }
        list.replaceSubrange(at..<(at + remove), with: insert)
        edits.append(["at": .int(Int64(at)), "remove": .int(Int64(remove)), "insert": .array(insert.map(\.json))])
    }
    return ["vm": "l", "input": "edit", "value": .array(edits)]
}

@Suite("List edits on the wire")
struct ListEditHostTests {
    /// Random turns of edits: a diff subscriber's splices and a full subscriber's values both give
    /// the list, and a turn that ends with the list it began with sends nothing to either.
    @Test(arguments: [11, 12] as [UInt64])
    func splicesAndFullValuesFollowRandomEdits(seed: UInt64) async {
        var random = SeededGenerator(seed: seed)
        let client = await linesHost()
        var diff = Mirror(subscription: "s1", lines: [])
        var full = Mirror(subscription: "s2", lines: [])
        var list: [Int] = []
        var unchangedTurns = 0
        for _ in 0..<300 {
            let before = list
            let reply = await client.request("vm.send", randomInput(&list, using: &random))
            #expect(reply.result == [:])
            if list == before {
                #expect(reply.changes.isEmpty)
                unchangedTurns += 1
            } else {
                #expect(reply.changes.count == 2)
                #expect(reply.changes.first?["values"] == [:])
            }
            diff.apply(reply.messages)
            full.apply(reply.messages)
            #expect(diff.lines == list.map(\.json))
            #expect(full.lines == list.map(\.json))
        }
        #expect(unchangedTurns > 0)
    }

    /// While the reader is stalled, the pending changes merge: two splice runs fall back to the full
    /// list, made only then, and the client's copy still ends equal to the list.
    @Test func mergedSpliceRunsFallBackToTheFullList() async {
        var random = SeededGenerator(seed: 21)
        let client = await linesHost()
        var diff = Mirror(subscription: "s1", lines: [])
        var list: [Int] = []
        client.pauseReading()
        for _ in 0..<200 {
            await client.feed(["jsonrpc": "2.0", "method": "vm.send", "params": randomInput(&list, using: &random)])
            #expect(client.pendingOutputCount <= 2)
        }
        client.resumeReading()
        let messages = client.takeMessages()
        #expect(messages.count == 2)
        diff.apply(messages)
        #expect(diff.lines == list.map(\.json))
        // Once the reader keeps up, appends are splices again.
        let reply = await client.request("vm.send", ["vm": "l", "input": "edit", "value": [["at": .int(Int64(list.count)), "remove": 0, "insert": [7]]]])
        #expect(reply.changes.first?["splices"] == ["lines": [["index": .int(Int64(list.count)), "remove": 0, "insert": [7]]]])
    }

    /// A subscription made after edits starts from the value then; the edits before it are not
    /// sent to it again, and the first subscriber's edits keep their splices.
    @Test func aLaterSubscriptionStartsFromTheCurrentList() async {
        let client = await InProcessConnection(kinds: [LinesViewModel.factory()])
        await client.request("vm.create", ["kind": "Lines", "id": "l"])
        await client.request("vm.send", ["vm": "l", "input": "edit", "value": [["at": 0, "remove": 0, "insert": [1, 2]]]])
        let first = await client.request("vm.subscribe", ["vm": "l", "diff": true])
        #expect(first.result?["values"] == ["lines": [1, 2]])
        let append = await client.request("vm.send", ["vm": "l", "input": "edit", "value": [["at": 2, "remove": 0, "insert": [3]]]])
        #expect(append.changes.first?["splices"] == ["lines": [["index": 2, "remove": 0, "insert": [3]]]])
        await client.request("vm.unsubscribe", ["subscription": "s1"])
        await client.request("vm.send", ["vm": "l", "input": "edit", "value": [["at": 0, "remove": 1, "insert": []]]])
        let second = await client.request("vm.subscribe", ["vm": "l", "diff": true])
        #expect(second.result?["values"] == ["lines": [2, 3]])
        let remove = await client.request("vm.send", ["vm": "l", "input": "edit", "value": [["at": 1, "remove": 1, "insert": []]]])
        #expect(remove.changes == [["subscription": "s2", "vm": "l", "values": [:], "splices": ["lines": [["index": 1, "remove": 1, "insert": []]]]]])
    }
}
