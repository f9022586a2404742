import VMHost

/// The default backend: the contract served in-process from ``DemoServer``'s deterministic data.
///
/// It behaves like ``HTTPAPIClient`` talking to a real server, without sockets: requests go to the
/// demo server as ``DemoRequest``s, and the answers come back through the same ``ErrorMapping``.
/// Time is the host clock's: ``latency`` delays every call, and the test controls
/// (``script(endpoint:outcomes:)``, `control.backend.script` on the wire) make a call fail in any
/// way a real server can, or hang, or answer late.
///
/// A call's scripted outcome is taken from its endpoint's queue when the call starts, so queued
/// outcomes apply to calls in the order they were made, one each.
///
/// Cancellation: a call cancelled while it waits (latency, `delay:`, `timeout`) throws
/// `CancellationError` and never reaches the demo server, so no state changes.
///
/// - Important: Isolated to the host actor, like everything that holds host state.
@HostActor
public final class EmbeddedBackend: APIClient {
    public let clock: any HostClock
    /// How long a call may take on ``clock`` before it fails with `timeout`.
    public let timeout: Duration
    /// How long every call waits on ``clock`` before it is served; zero (the default) does not
    /// suspend at all.
    public var latency: Duration = .zero
    /// The token of the last successful login (the demo server does not ask for it).
    ///
    /// - Important: A secret: never log it.
    public var token: String?

    /// The number of demo products served (`--demo-products`; 57 by default).
    public let productCount: Int
    /// The demo server's current state (groups created, renamed and deleted so far). Made at the
    /// first call (or look): a host that is started and answers before any call never builds the
    /// demo data (its menus' dictionary instantiated the metadata of three generic types, 46,000
    /// instructions of a start-up's 760,000).
    public internal(set) lazy var server = DemoServer(productCount: productCount)
    var scripts: [BackendEndpoint: [ScriptedOutcome]] = [:]

    /// - Parameter productCount: the size of the demo catalogue, in ``DemoCatalog/productCountRange``.
    public init(clock: any HostClock, timeout: Duration = .milliseconds(15000), productCount: Int = DemoCatalog.productCount) {
        self.clock = clock
        self.timeout = timeout
        precondition(
            DemoCatalog.productCountRange.contains(productCount),
            "productCount \(productCount) is outside \(DemoCatalog.productCountRange)")
        self.productCount = productCount
    }

    /// The endpoint names that ``script(endpoint:outcomes:)`` accepts.
    public nonisolated static let endpointNames: [String] = BackendEndpoint.names
}

extension EmbeddedBackend: EnvelopeExchanging {}
