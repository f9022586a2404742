import Testing
@_spi(Transport) import VMHostEventLoop
@_spi(Transport) import VMHostJSONRPC
import VMHostRuntime
import VMHostTesting
@_spi(Transport) import VMHostWire
@_spi(Transport) @testable import VMHostCore

/// A kind with one plain and one secret input, and commands that fail with a domain error.
@HostActor
private final class VaultViewModel: ViewModel {
    static let kind = "Vault"
    @Input var label = ""
    @Input(secret: true) var pin = ""

    static func factory() -> ViewModelFactory {
        ViewModelFactory { _ in VaultViewModel() }
    }
}

@Suite("What an app chooses about its host")
struct HostConfigurationTests {
    @HostActor
    private func host(errorKinds: [String]? = nil) -> Host {
        Host(configuration: .init(
            clock: ManualClock(), factories: [VaultViewModel.factory(), ProbeViewModel.factory()], serverName: "vault",
            serverVersion: "9.9.9", defaultLocale: .en, locales: [.en], errorKinds: errorKinds))
    }

    @Test @HostActor func secretInputsAreDescribedAndMasked() {
        let host = host()
        guard case .object(let vault)? = host.describe(kind: "Vault"), case .array(let inputs)? = vault["inputs"] else {
            Issue.record("no description")
            return
        }
        #expect(inputs.map { $0["secret"] } == [nil, true])
        let redaction = host.redaction(secretMembers: ["token"])
        let send: JSON = ["method": "vm.send", "params": ["vm": "v", "input": "pin", "value": 1234]]
        #expect(redaction.redact(send)["params"] == ["vm": "v", "input": "pin", "value": "***"])
        let plain: JSON = ["method": "vm.send", "params": ["vm": "v", "input": "label", "value": "home"]]
        #expect(redaction.redact(plain)["params"] == ["vm": "v", "input": "label", "value": "home"])
        #expect(redaction.redact(["pin": "1234", "token": "t", "label": "x"]) == ["pin": "***", "token": "***", "label": "x"])
    }

    @Test @HostActor func initializeNamesTheAppAndOffersItsLocalesOnly() {
        let host = host()
        func reply(_ text: String) -> JSON? {
            Array(text.utf8).withUnsafeBytes { host.engine.receive(frame: $0) }
            return host.outputQueue.takeAll().last.flatMap { try? JSON.parse($0) }
        }
        let english = reply(#"{"jsonrpc":"2.0","id":1,"method":"initialize"}"#)
        #expect(english?["result"]?["serverInfo"] == ["name": "vault", "version": "9.9.9"])
        #expect(english?["result"]?["locale"] == "en")
        let chinese = reply(#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"locale":"zh-Hans"}}"#)
        #expect(chinese?["error"]?["code"] == -32602)
        #expect(chinese?["error"]?["message"] == "Invalid params: params.locale: unsupported locale \"zh-Hans\" (supported: en)")
    }

    @Test @HostActor func theErrorEventListsTheAppsErrorKinds() {
        let open = host()
        guard case .object(let plain)? = open.describe(kind: "Vault"), case .array(let plainOutputs)? = plain["outputs"] else {
            Issue.record("no description")
            return
        }
        // An app that declares no kinds of error: any string.
        #expect(plainOutputs.first(where: { $0["name"] == "error" })?["schema"]?["properties"]?["kind"] == ["type": "string"])
        let narrowed = host(errorKinds: ["network", "business"])
        guard case .object(let vault)? = narrowed.describe(kind: "Vault"), case .array(let outputs)? = vault["outputs"],
            let error = outputs.first(where: { $0["name"] == "error" })
        else {
            Issue.record("no error event")
            return
        }
        #expect(error["schema"]?["properties"]?["kind"] == ["enum": ["network", "business"]])
    }
}
