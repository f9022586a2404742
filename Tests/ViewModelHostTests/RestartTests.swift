import Testing
@_spi(Transport) import VMHostEventLoop
@_spi(Transport) import VMHostJSONRPC
import VMHostRuntime
@_spi(Transport) import VMHostWire
@_spi(Transport) @testable import VMHostCore

/// A form with a plain input, a secret one, one its kind leaves out, a counter that only a
/// trigger moves (kept through ``Restorable``, never sent again), and a derived output.
@HostActor
private final class FormViewModel: ViewModel, Restorable {
    static let kind = "Form"
    static let unkeptInputs: Set<String> = ["draft"]
    @Input var name = ""
    @Input var mode = "sms"
    @Input(secret: true) var password = ""
    @Input var draft = ""
    @Input var extra: JSON = [:]
    @Output var loaded = 0
    @Output var summary = ""
    let load = Trigger { vm in vm.loaded += 1 }
    var restored: JSON?

    init() {
        observe($name, $mode) { vm in vm.summary = "\(vm.mode):\(vm.name)" }
    }

    var restoration: JSON? { loaded > 0 ? ["loaded": .int(Int64(loaded))] : nil }

    func restore(from restoration: JSON) {
        restored = restoration
        loaded = Int(restoration["loaded"]?.intValue ?? 0)
    }

    static func factory() -> ViewModelFactory { ViewModelFactory { _ in FormViewModel() } }
}

@Suite("A session's screens kept for a restart and made again")
@HostActor
struct RestartTests {
    private func host() -> Host {
        let host = Host(configuration: .init(
            clock: ManualClock(), factories: [FormViewModel.factory()], locales: [.en, AppLocale("zh-CN")]))
        host.keepsScreens = true
        host.keptSecretMembers = ["token"]
        return host
    }

    @discardableResult
    private func call(_ host: Host, _ text: String) -> [JSON] {
        Array(text.utf8).withUnsafeBytes { host.engine.receive(frame: $0) }
        host.flush()
        return host.outputQueue.takeAll().compactMap { try? JSON.parse($0) }
    }

    private func send(_ host: Host, _ vm: String, _ input: String, _ value: JSON) {
        call(host, #"{"jsonrpc":"2.0","id":9,"method":"vm.send","params":{"vm":"\#(vm)","input":"\#(input)","value":\#(String(decoding: value.serialized(), as: UTF8.self))}}"#)
    }

    @Test func theScreensComeBackWithTheirHandlesValuesAndSubscriptions() throws {
        let first = host()
        call(first, #"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"locale":"zh-CN"}}"#)
        call(first, #"{"jsonrpc":"2.0","id":2,"method":"vm.create","params":{"kind":"Form"}}"#)
        call(first, #"{"jsonrpc":"2.0","id":3,"method":"vm.create","params":{"kind":"Form","id":"login"}}"#)
        call(first, #"{"jsonrpc":"2.0","id":4,"method":"vm.create","params":{"kind":"Form"}}"#)
        call(first, #"{"jsonrpc":"2.0","id":5,"method":"vm.dispose","params":{"vm":"vm1"}}"#)
        send(first, "login", "name", "138")
        send(first, "login", "mode", "password")
        send(first, "login", "name", "13800138000")
        send(first, "login", "password", "hunter22")
        send(first, "login", "draft", "not kept")
        send(first, "login", "extra", ["note": "kept"])
        send(first, "login", "extra", ["nested": [["token": "abc-secret"]]])
        call(first, #"{"jsonrpc":"2.0","id":6,"method":"vm.send","params":{"vm":"login","input":"load"}}"#)
        call(first, #"{"jsonrpc":"2.0","id":7,"method":"vm.subscribe","params":{"vm":"login","outputs":["summary"]}}"#)
        call(first, #"{"jsonrpc":"2.0","id":8,"method":"vm.subscribe","params":{"vm":"vm2"}}"#)
        call(first, #"{"jsonrpc":"2.0","id":8,"method":"vm.unsubscribe","params":{"subscription":"s2"}}"#)
        let screens = first.screens()
        let text = String(decoding: screens.serialized(), as: UTF8.self)
        // Never a secret input; never an input its kind leaves out.
        #expect(!text.contains("hunter22"))
        #expect(!text.contains("not kept"))
        // Nor a value holding an app's secret member, nor the value it replaced.
        #expect(!text.contains("abc-secret") && !text.contains("note"))
        // The last value of each input, in the order last sent: `name` after `mode`.
        let login = try #require(screens["viewModels"]?.arrayValue?.first { $0["vm"] == "login" })
        #expect(login["inputs"] == [["mode", "password"], ["name", "13800138000"]])
        #expect(login["restoration"] == ["loaded": 1])

        // Made again from what a file would hold.
        let second = host()
        let problems = second.restoreScreens(try JSON.parse(screens.serialized()))
        #expect(problems.isEmpty)
        #expect(second.locale.tag == "zh-CN")
        #expect(second.list() == [["vm": "login", "kind": "Form"], ["vm": "vm2", "kind": "Form"]])
        let restored = try #require(second.liveViewModel("login")?.instance as? FormViewModel)
        #expect(restored.name == "13800138000" && restored.mode == "password" && restored.password == "" && restored.draft == "")
        #expect(restored.summary == "password:13800138000")
        #expect(restored.restored == ["loaded": 1] && restored.loaded == 1)
        // Nothing of the restore reaches the page; the resync sends what the subscriptions show.
        #expect(second.outputQueue.takeAll().isEmpty)
        _ = second.resync()
        let changed = second.outputQueue.takeAll().compactMap { try? JSON.parse($0) }
        #expect(changed.map { $0["params"]?["subscription"] } == ["s1"])
        #expect(changed.first?["params"]?["values"] == ["summary": "password:13800138000"])
        // The handles the page holds name the same things, and new ones do not collide.
        let next = call(second, #"{"jsonrpc":"2.0","id":10,"method":"vm.create","params":{"kind":"Form"}}"#)
        #expect(next.last?["result"]?["vm"] == "vm3")
        let subscribed = call(second, #"{"jsonrpc":"2.0","id":11,"method":"vm.subscribe","params":{"vm":"vm2"}}"#)
        #expect(subscribed.last?["result"]?["subscription"] == "s3")
        call(second, #"{"jsonrpc":"2.0","id":12,"method":"vm.unsubscribe","params":{"subscription":"s1"}}"#)
        #expect(second.screens()["subscriptions"]?.arrayValue?.map { $0["subscription"] } == [3])
    }

    @Test func whatCannotBeMadeAgainIsSaidAndLeftOut() throws {
        let host = host()
        let screens: JSON = [
            "locale": "xx", "nextHandle": .int(Int64.max), "nextSubscription": .int(Int64.max),
            "viewModels": [
                ["vm": "a", "kind": "Gone"],
                ["vm": "b", "kind": "Form", "inputs": [["password", "secret"], ["name", 12], ["nope", "x"], ["name", "ok"]]],
                ["kind": "Form"],
                "not an object",
            ],
            "subscriptions": [
                ["subscription": 1, "vm": "a"], ["subscription": -3, "vm": "b"], ["subscription": .int(Int64.max), "vm": "b"],
                ["subscription": 1, "vm": "b", "outputs": ["summary", 7]],
            ],
        ]
        let problems = host.restoreScreens(screens)
        #expect(problems.count == 6, "\(problems)")
        let form = try #require(host.liveViewModel("b")?.instance as? FormViewModel)
        #expect(form.password == "" && form.name == "ok")
        #expect(host.subscriptions.keys.sorted() == [1])
        // Counters past any a host could reach are left: the next names follow what was made.
        #expect(host.nextHandle == 0 && host.nextSubscription == 1)
        #expect(host.restoreScreens("nothing").count == 1)
    }

    @Test func aHostThatDoesNotKeepScreensKeepsNoValues() {
        let host = Host(configuration: .init(clock: ManualClock(), factories: [FormViewModel.factory()]))
        call(host, #"{"jsonrpc":"2.0","id":1,"method":"vm.create","params":{"kind":"Form","id":"f","args":{}}}"#)
        send(host, "f", "name", "typed")
        #expect(host.viewModels["f"]?.kept.isEmpty == true && host.viewModels["f"]?.args == nil)
    }

    @Test func disposingForARestartTellsEachViewModel() {
        let host = host()
        call(host, #"{"jsonrpc":"2.0","id":1,"method":"vm.create","params":{"kind":"Form","id":"f"}}"#)
        let context = host.liveViewModel("f")?.context
        host.keepForRestart()
        host.cancelEverything()
        #expect(context?.isKeptForRestart == true && context?.isDisposed == true)
    }
}
