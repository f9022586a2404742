import Testing
import VMHostRuntime
import VMHostTesting
@_spi(Transport) @testable import VMHostCore

/// A name that must be new: the app's own failure, in the client's language.
private struct Taken: DomainFailure {
    let name: String
    func domainError(in locale: AppLocale) -> DomainError {
        DomainError(
            kind: "taken", message: locale == "de" ? "„\(name)“ ist schon vergeben" : "\"\(name)\" is taken", detail: "name in use")
    }
}

@HostActor
private final class Names: ViewModel {
    static let kind = "Names"
    @Output private(set) var names = ["ada"]
    let add = Command(.ignore, of: String.self, check: { vm, name in
        if name.isEmpty { throw .refused("", "a name is needed") }
        if vm.names.contains(name) { throw Taken(name: name) }
    }) { vm, name in vm.names.append(name) }
}

/// SPEC §2: a value an input's check refuses is -32602 with `data: {input, path, reason}`, the
/// reason as the app wrote it, in the client's locale, as -32003 carries its own.
@Suite("Refusals")
struct RefusalTests {
    @HostActor
    private func host() -> InProcessConnection {
        InProcessConnection(configuration: .init(
            clock: ManualClock(), factories: [ViewModelFactory { _ in Names() }], testControls: true,
            defaultLocale: "en", locales: ["en", "de"]))
    }

    @Test func aRefusedValueCarriesItsReasonApart() async {
        let client = await host()
        await client.request("vm.create", ["kind": "Names", "id": "n"])
        let reply = await client.request("vm.send", ["vm": "n", "input": "add", "value": ""])
        #expect(reply.errorCode == -32602)
        #expect(reply.error?["message"] == "Invalid params: params.value: a name is needed")
        #expect(reply.error?["data"] == ["input": "add", "path": "params.value", "reason": "a name is needed"])
        await client.finish()
    }

    @Test func aDomainFailureOfACheckRefusesInTheClientsLocale() async {
        let client = await host()
        await client.request("initialize", ["locale": "de"])
        await client.request("vm.create", ["kind": "Names", "id": "n"])
        let reply = await client.request("vm.send", ["vm": "n", "input": "add", "value": "ada"])
        #expect(reply.errorCode == -32602)
        #expect(reply.error?["data"] == ["input": "add", "path": "params.value", "reason": "„ada“ ist schon vergeben"])
        await client.finish()
    }
}
