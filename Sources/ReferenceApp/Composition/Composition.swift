import Backend
import VMHostEventLoop
import VMHostJSONRPC
import Login
import MenuGroups
import ProductList
import VMHostRuntime
import VMHostCore
import VMHostWire

/// The composition root: picks the clock and the backend from the options, lists the kinds, and
/// adds the backend's test controls.
///
/// One composition serves every connection of a process: the WebSocket server makes a ``Host`` of
/// the same configuration per connection, so its sessions share the clock and the backend.
@HostActor
public struct Composition {
    public let configuration: Host.Configuration

    public init(options: ServerOptions) {
        let clock: any HostClock = options.manualClock ? ManualClock() : SystemClock()
        // The command line validated the value already (`ServerOptions.init(parsed:)`).
        let backend = try! BackendOption(parsing: options.backend)
        let api = backend.makeClient(
            clock: clock, timeout: .milliseconds(options.timeoutMs), demoProductCount: options.demoProducts)
        var controls: [(name: String, handler: RPCEngine.Handler)] = []
        if let embedded = api as? EmbeddedBackend {
            controls.append(("control.backend.script", Self.control { (params) throws(ScriptError) in try embedded.script(params: params) }))
            controls.append(("control.backend.latency", Self.control { (params) throws(ScriptError) in try embedded.setLatency(params: params) }))
            controls.append(("control.backend.reset", Self.control { _ in embedded.reset() }))
        }
        configuration = Host.Configuration(
            clock: clock, factories: Self.kinds(api: api), testControls: options.testControls, controlMethods: controls)
    }

    /// Every view-model kind the host serves, in `host.describe` order. One line per kind.
    public static func kinds(api: any APIClient) -> [ViewModelFactory] {
        [
            ProductListViewModel.factory(api: api),
            LoginViewModel.factory(api: api),
            MenuSubGroupViewModel.factory(api: api),
            MenuEditGroupViewModel.factory(api: api),
        ]
    }

    /// A control method answered `{}` once `body` accepted its params, or -32602 naming the param.
    static func control(_ body: @escaping @HostActor (JSON) throws(ScriptError) -> Void) -> RPCEngine.Handler {
        { call in
            do throws(ScriptError) {
                try body(call.params ?? [:])
                call.succeed([:])
            } catch {
                call.fail(.invalidParams("params.\(error.message)"))
            }
        }
    }
}
