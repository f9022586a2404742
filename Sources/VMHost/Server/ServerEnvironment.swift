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

/// What the server decided before the app's kinds are made: given to ``ServerConfiguration/kinds``.
public struct ServerEnvironment: Sendable {
    /// The host's clock, chosen by `--clock`: a ``SystemClock`` or a ``ManualClock`` (moved by
    /// `control.clock.advance`). Every timer, latency and deadline of the app goes through it.
    public let clock: any HostClock
    /// The command line, for the app's own options (``ServerConfiguration/options``).
    public let arguments: ParsedArguments
    /// The locale until a client chooses one (``ServerConfiguration/defaultLocale``).
    public let locale: AppLocale
    /// Whether `--test-controls` was given (the app's ``ServedApp/controls`` are served only then).
    public let testControls: Bool
    /// The server's logger (stderr, at `--log-level`).
    public let logger: Logger
    /// The recording of this session (`--record`), if any: the app may add its own lines to it
    /// (``SessionRecorder/record(_:_:)``) and adjust its `args` line. Nil for a transport of many
    /// sessions (WebSocket), whose app is shared: each connection's recording comes to
    /// ``ServedApp/connectionKinds``.
    public let recorder: SessionRecorder?
    /// How long after the server stopped a session it kept for its restart may still come back
    /// (`vmhost-web --session-dir`: the grace period, `--resume-grace-ms`); nil when the server
    /// keeps no session across a restart. What the app stores for such a session (a login) is
    /// the app's to delete once this has passed and the session did not come back.
    public let restartGrace: Duration?
}
