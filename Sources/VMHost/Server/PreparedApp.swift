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

/// The app made for a run of a ``Server`` (``Server/prepareApp(settings:arguments:logger:recorder:)``):
/// the configuration of its ``Host``, and what a transport needs besides (not what the app
/// returned, ``ServedApp``, nor the server's description, ``ServerConfiguration``).
@_spi(Transport)
@HostActor
public struct PreparedApp {
    /// The configuration of its ``Host``.
    public var host: Host.Configuration
    /// The framing its input is read in (`--framing`).
    package var framing: Framing = .auto
    /// The largest message it accepts (`--max-message-bytes`).
    package var maxMessageBytes = StandardSettings.defaultMaxMessageBytes
    /// The app's summary for the start-up log line.
    package var summary: String?
    /// ``ServedApp/connectionKinds``.
    package var connectionKinds: (@HostActor (SessionRecorder?) -> [ViewModelFactory])?
    /// `--http-replay`'s answers, shared by every connection.
    var httpReplay: HTTPReplay?
    /// The secrets of a recording of the app's HTTP exchanges.
    var httpSecrets = HTTPSecrets()

    /// The configuration of one connection's host, for a transport that serves many: the
    /// clock and the app's shared parts are the same for all, the kinds are the connection's
    /// own when the app makes them per connection (their HTTP clients then answer from
    /// `--http-replay`, and are recorded in the connection's `recorder`, if any).
    public func connectionHost(recorder: SessionRecorder? = nil) -> Host.Configuration {
        guard let connectionKinds else { return host }
        var configuration = host
        let previous = HTTPSessionTransport.current
        HTTPSessionTransport.current = Server.httpSessionTransport(
            replay: httpReplay, recorder: recorder, secrets: httpSecrets)
        defer { HTTPSessionTransport.current = previous }
        configuration.factories = connectionKinds(recorder)
        return configuration
    }
}

extension Server {
    /// The app `arguments` (a command line without the program's name) make, as ``run(arguments:)``
    /// would serve it, without serving it: for a test of the app's whole wiring in process. Logs
    /// go nowhere.
    @HostActor
    package func prepareApp(arguments: [String]) throws(UsageError) -> PreparedApp {
        let parsed = try ParsedArguments(arguments, options: allOptions)
        let settings = try StandardSettings(parsed)
        var app = try prepareApp(settings: settings, arguments: parsed, logger: Logger(label: configuration.name) { _ in SwiftLogNoOpLogHandler() })
        app.framing = settings.framing
        app.maxMessageBytes = settings.maxMessageBytes
        return app
    }

    /// The app made for a run: the configuration of its ``Host`` (a transport that serves many
    /// connections makes one host per connection with ``PreparedApp/connectionHost(recorder:)``,
    /// sharing the clock and the app's backend), and the app's summary for the start-up log line.
    /// `recorder`: the recording of the run's one session (stdio, in process), given to the app
    /// (``ServerEnvironment/recorder``). `restartGrace`: how long a session kept for a restart
    /// may come back (``ServerEnvironment/restartGrace``). Throws the app's usage errors.
    @_spi(Transport)
    @HostActor
    public func prepareApp(
        settings: StandardSettings, arguments: ParsedArguments, logger: Logger, recorder: SessionRecorder? = nil,
        restartGrace: Duration? = nil
    ) throws(UsageError) -> PreparedApp {
        let clock: any HostClock = settings.manualClock ? ManualClock() : SystemClock()
        let environment = ServerEnvironment(
            clock: clock, arguments: arguments, locale: configuration.defaultLocale,
            testControls: settings.testControls, logger: logger, recorder: recorder, restartGrace: restartGrace)
        let httpReplay = try Self.httpReplay(settings: settings)
        let httpSecrets = HTTPSecrets(headers: configuration.secretHeaders, members: configuration.secretMembers)
        let httpTransport = Self.httpSessionTransport(replay: httpReplay, recorder: recorder, secrets: httpSecrets)
        let previous = HTTPSessionTransport.current
        if let httpTransport { HTTPSessionTransport.current = httpTransport }
        defer { HTTPSessionTransport.current = previous }
        let app = try configuration.kinds(environment)
        let host = Host.Configuration(
            clock: clock, factories: app.kinds, testControls: settings.testControls,
            controlMethods: app.controls.map { ($0.name, $0.handler) },
            serverName: configuration.name, serverVersion: configuration.version,
            defaultLocale: configuration.defaultLocale, locales: configuration.locales,
            errorKinds: configuration.errorKinds)
        return PreparedApp(
            host: host, summary: app.summary, connectionKinds: app.connectionKinds,
            httpReplay: httpReplay, httpSecrets: httpSecrets)
    }

    /// The answers of `--http-replay FILE`, read at start; a FILE that cannot be used is a usage error.
    @HostActor
    static func httpReplay(settings: StandardSettings) throws(UsageError) -> HTTPReplay? {
        guard let path = settings.httpReplayPath else { return nil }
        do throws(HTTPReplayError) {
            return try HTTPReplay(path: path, ignoring: settings.httpReplayIgnoring)
        } catch {
            throw UsageError("--http-replay \(path): \(error.message)")
        }
    }

    /// What carries the app's HTTP calls in a session: `replay` (`--http-replay`) instead of the
    /// server, and `recorder` (the session's recording) keeping each exchange as a `{"http": …}`
    /// line (protocol/backend.md, "Recorded HTTP"), `secrets` masked. Nil: each client's own. A
    /// recording's `offlineArgs` are its `args` with `--http-replay $transcript`, unless the app
    /// names others while its kinds are made.
    @HostActor
    static func httpSessionTransport(
        replay: HTTPReplay?, recorder: SessionRecorder?, secrets: HTTPSecrets
    ) -> (@HostActor (any HTTPTransport) -> any HTTPTransport)? {
        var recording: HTTPExchangeRecording?
        if let recorder {
            // Set before the kinds are made: an app that replays its backend its own way names its
            // own options then.
            recorder.setOfflineArguments(
                SessionRecorder.removing(option: "http-replay", from: recorder.arguments) + ["--http-replay", "$transcript"])
            let made = HTTPExchangeRecording(
                secrets: secrets,
                placeholder: { value, name in recorder.secretPlaceholder(for: value, name: name) },
                write: { line in recorder.record("http", line) })
            recorder.onEnd { made.recordUnfinished() }
            recording = made
        }
        guard replay != nil || recording != nil else { return nil }
        return { @HostActor base in
            var carrier = base
            if let replay { carrier = replay }
            if let recording { carrier = recording.transport(around: carrier) }
            return carrier
        }
    }
}
