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

/// An app's view-models served over JSON-RPC 2.0 on stdin/stdout: the whole of an app's `main`.
///
/// ```swift
/// import VMHost
///
/// Server(name: "todo", version: "1.0.0") { environment in
///     let store = TodoStore(clock: environment.clock)
///     return ServedApp(kinds: [TodoListViewModel.factory(store: store)])
/// }.run()
/// ```
///
/// The server owns the process: it reads the command line (the ``standardOptions`` and the app's
/// own, `--help`, `--version`), sets up stdio (framing, a protocol stream of its own so that a stray
/// `print` lands in the logs), the trace, the logs on stderr, signals, EOF and a closed stdout.
/// What is the app's to choose is in ``ServerConfiguration``. The behaviour of the process is
/// specified in protocol/SPEC.md §7 (lifecycle) and §8 (trace and logs).
public struct Server: Sendable {
    /// What this server serves and how it is named.
    public let configuration: ServerConfiguration

    /// A server of `configuration`.
    public init(_ configuration: ServerConfiguration) {
        self.configuration = configuration
    }

    /// A server named `name` (`serverInfo.name`, and the command in `--help`) at `version`, serving
    /// the kinds `kinds` makes; the other settings keep their defaults (see ``ServerConfiguration``).
    public init(
        name: String, version: String, options: [OptionSpec] = [],
        kinds: @escaping @HostActor @Sendable (ServerEnvironment) throws(UsageError) -> ServedApp
    ) {
        self.init(ServerConfiguration(name: name, version: version, options: options, kinds: kinds))
    }

    /// Reads the process's command line and serves until the end of input (once the commands read
    /// are done), a signal, `exit` or a closed stdout; never returns. A usage error is written to
    /// stderr with the usage and exits 64.
    public func run() -> Never {
        run(arguments: Array(CommandLine.arguments.dropFirst()))
    }

    /// Like ``run()``, with the command line `arguments` (without the program's name).
    package func run(arguments: [String]) -> Never {
        let options = allOptions
        let parsed: ParsedArguments
        do throws(UsageError) {
            parsed = try ParsedArguments(arguments, options: options)
        } catch {
            fail(error.message)
        }
        if parsed.flag("help") {
            print(help.text, terminator: "")
            exit(0)
        }
        if parsed.flag("version") {
            print("\(configuration.name) \(configuration.version)")
            exit(0)
        }
        let settings: StandardSettings
        do throws(UsageError) {
            settings = try StandardSettings(parsed)
        } catch {
            fail(error.message)
        }
        StdioServer.run(self, settings: settings, arguments: parsed)
    }

    /// The standard options, the app's, `--version` and `--help`.
    package var allOptions: [OptionSpec] { Self.standardOptions + configuration.options + Self.closingOptions }

    var help: HelpText {
        HelpText(
            command: configuration.name, overview: configuration.overview, discussion: configuration.discussion,
            options: allOptions)
    }

    /// Writes a usage error to stderr and exits 64 (EX_USAGE).
    func fail(_ message: String) -> Never {
        ProcessOutput.stderr(
            "Error: \(message)\nUsage: \(help.usage)\n  See '\(configuration.name) --help' for more information.\n")
        exit(64)
    }
}
