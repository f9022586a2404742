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

/// What an app serves: its kinds, and the test controls that drive its fakes.
@HostActor
public struct ServedApp {
    /// Every kind `vm.create` can make, in `host.describe` order.
    public var kinds: [ViewModelFactory]
    /// Methods served only with `--test-controls` (beside `control.clock.advance`).
    public var controls: [TestControl]
    /// A few words for the start-up log line (`backend embedded`), if any.
    public var summary: String?
    /// For a transport that serves many connections in one process (WebSocket): makes the kinds of
    /// one connection, so that each has its own state (a login) over what the app shares (its
    /// backend client), given the connection's recording (`--record`), if any. Nil: every
    /// connection is served ``kinds``. The stdio server never calls it.
    public var connectionKinds: (@HostActor (_ recorder: SessionRecorder?) -> [ViewModelFactory])?

    /// An app of `kinds`, with `controls` for tests.
    public init(
        kinds: [ViewModelFactory], controls: [TestControl] = [], summary: String? = nil,
        connectionKinds: (@HostActor (_ recorder: SessionRecorder?) -> [ViewModelFactory])? = nil
    ) {
        self.kinds = kinds
        self.controls = controls
        self.summary = summary
        self.connectionKinds = connectionKinds
    }
}
