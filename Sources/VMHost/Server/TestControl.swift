#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Logging
@_spi(Transport) import VMHostCore
@_spi(Transport) import VMHostEventLoop
@_spi(Transport) import VMHostJSONRPC
@_spi(Transport) import VMHostHTTP
import VMHostRuntime
@_spi(Transport) import VMHostWire

/// A test-control method (`control.backend.latency`): served only with `--test-controls`, named
/// `control.*` by convention, and listed in the app's protocol documents.
@HostActor
public struct TestControl {
    /// The method's name.
    package let name: String
    /// Answers one call (synchronously or later).
    package let handler: RPCEngine.Handler

    /// A control answering calls with `handler`.
    package init(_ name: String, handler: @escaping RPCEngine.Handler) {
        self.name = name
        self.handler = handler
    }

    /// A control answered at once: `{}` once `body` accepted the params (`{}` when absent), or the
    /// error `body` throws (-32602 naming the param, for instance). Its params follow the rule of
    /// every method (SPEC §2): an object with no member outside `members`, else -32602.
    public init(_ name: String, params members: Set<String>, _ body: @escaping @HostActor (JSON) throws(RPCError) -> Void) {
        self.init(name) { call in
            do throws(RPCError) {
                _ = try call.params(allowing: members)
                try body(call.params ?? [:])
                call.succeed([:])
            } catch {
                call.fail(error)
            }
        }
    }
}
