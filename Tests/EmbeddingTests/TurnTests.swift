import Testing
import VMHost
@_spi(Transport) import VMHostEventLoop

/// A kind whose input lets other work of the host thread run in the middle of its turn, as another
/// host's work runs inside a clock advance or a borrowed turn.
@HostActor
final class TurnProbe: ViewModel {
    static let kind = "TurnProbe"

    struct Args: ViewModelArgs {
        init() {}
        init(reader: ObjectReader) throws(JSONDecodingError) {}
    }

    @Output var count = 0

    let go = Trigger { vm in
        vm.count = 1
        // Someone else's job, run by a drain nested in this turn: the loop then runs what was
        // asked for after work, this host's flush included.
        EventLoop.startTask {}
        EventLoop.shared.drain()
        vm.count = 2
    }

    init(args: Args) {}
}

/// SPEC §4: one turn, one `vm.changed` per subscription, whatever other work the host thread runs
/// while the turn lasts (another host's frames, its commands' completions).
@Suite struct TurnTests {
    static let server = Server(name: "turns", version: "1.0.0") { _ in
        ServedApp(kinds: [ViewModelFactory { args in TurnProbe(args: args) }])
    }

    @Test func aTurnIsWrittenWholeWhateverRunsInsideIt() async throws {
        let inbox = Inbox()
        let host = try EmbeddedHost(Self.server, onMessage: { inbox.receive($0) }, onEnd: { inbox.ended($0) })
        try host.send(message: request(1, "vm.create", ["kind": "TurnProbe", "id": "t"]))
        _ = await inbox.exchange(id: 1)
        try host.send(message: request(2, "vm.subscribe", ["vm": "t", "outputs": ["count"]]))
        _ = await inbox.exchange(id: 2)
        try host.send(message: request(3, "vm.send", ["vm": "t", "input": "go"]))
        let turn = await inbox.exchange(id: 3)
        let changes = turn.filter { $0["method"] == "vm.changed" }.map { $0["params"]?["values"] }
        #expect(changes == [["count": 2]], "the turn's changes came in \(changes.count) notifications")
        #expect(await host.close() == 0)
    }
}
