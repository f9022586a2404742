import Backend
@_spi(Transport) import VMHostCore
@_spi(Transport) import VMHostEventLoop
import ProductList
import Testing
import VMHostRuntime
import VMHostTesting
@_spi(Transport) import VMHostWire

/// A host serving ProductList over the embedded backend, both on ONE manual clock, with view-model
/// `pl` created and subscribed (subscription `s1`).
@HostActor
final class WireHarness {
    let clock = ManualClock()
    let backend: EmbeddedBackend
    let client: InProcessConnection

    init(latencyMs: Int = 0) {
        backend = EmbeddedBackend(clock: clock)
        backend.latency = .milliseconds(latencyMs)
        // Configured as the reference app serves its kinds: Simplified Chinese unless a client asks
        // for English, and the backend's error kinds.
        client = InProcessConnection(
            configuration: .init(
                clock: clock, factories: [ProductListViewModel.factory(api: backend)], testControls: true,
                defaultLocale: .zhHans, locales: AppLocale.referenceApp, errorKinds: BackendError.kindNames))
    }

    /// Creates `pl` (with `args`, in the locale set by `initialize` if any) and subscribes to it.
    func open(args: JSON? = nil, locale: String? = nil) async {
        if let locale { await client.request("initialize", ["locale": .string(locale)]) }
        var params: JSONObject = ["kind": "ProductList", "id": "pl"]
        if let args { params["args"] = args }
        await client.request("vm.create", .object(params))
        await client.request("vm.subscribe", ["vm": "pl"])
    }

    /// Moves the clock by `ms` over the wire; returns what that caused, without the control's own reply.
    func advance(ms: Int) async -> [JSON] {
        let exchange = await client.advance(ms: ms)
        return exchange.messages.filter { $0 != exchange.response }
    }

    /// `vm.send` params for `input` of `pl`.
    static func send(_ input: String) -> JSON { ["vm": "pl", "input": .string(input)] }
}

/// Whole wire messages, to compare exchanges exactly.
enum Message {
    static func changed(_ values: JSON) -> JSON {
        ["jsonrpc": "2.0", "method": "vm.changed", "params": ["subscription": "s1", "vm": "pl", "values": values]]
    }

    static func event(_ name: String, _ value: JSON) -> JSON {
        ["jsonrpc": "2.0", "method": "vm.event", "params": ["subscription": "s1", "vm": "pl", "name": .string(name), "value": value]]
    }

    static func result(_ id: JSON, _ value: JSON) -> JSON { ["jsonrpc": "2.0", "id": id, "result": value] }

    static func cancelled(_ id: JSON) -> JSON {
        ["jsonrpc": "2.0", "id": id, "error": ["code": -32800, "message": "Request cancelled"]]
    }

    static func failed(_ id: JSON, _ error: JSON) -> JSON {
        let kind = error["kind"]?.stringValue ?? "?"
        let message = "Command failed: \(kind): \(error["message"]?.stringValue ?? "?")"
        return ["jsonrpc": "2.0", "id": id, "error": ["code": -32004, "message": .string(message), "data": error]]
    }
}
