import ArgumentParser
import Backend
import ViewModelHost
import Wire

/// The command line: `vmhost [options]`. Everything else is spoken over stdin/stdout.
@main
struct VMHostCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "vmhost",
        abstract: "Holds an app's view-models and serves them over JSON-RPC 2.0 on stdin/stdout.",
        discussion: """
            Requests are read from stdin, responses and notifications are written to stdout, logs go
            to stderr. Start it, send {"jsonrpc":"2.0","id":1,"method":"host.describe"} and read the
            catalog of view-model kinds. The protocol is specified in protocol/SPEC.md.

            Example:
              printf '%s\\n' '{"jsonrpc":"2.0","id":1,"method":"ping"}' | vmhost
            """,
        version: vmhostVersion
    )

    @Option(help: ArgumentHelp(
        "Message framing: auto, ndjson or lsp.",
        discussion: "ndjson is one JSON text per line. lsp is 'Content-Length: N' headers. auto decides from the first byte ('{' or '[' means ndjson) and answers in the same framing."))
    var framing: Framing = .auto

    @Option(help: ArgumentHelp(
        "The backend: 'embedded' (deterministic demo data, in-process) or the base URL of an HTTP server.",
        discussion: "For example --backend http://127.0.0.1:8080. The HTTP contract is in protocol/backend.md.",
        valueName: "embedded|URL"))
    var backend: String = "embedded"

    @Option(name: .customLong("demo-products"), help: ArgumentHelp(
        "The number of products the embedded backend serves (default: 57, from 0 to 1000000).",
        discussion: "57 is the documented demo catalogue (p001 ... p057). A larger catalogue continues it by the same rule (p058, p059, ...), e.g. --demo-products 5000 for a long list. Only with the embedded backend.",
        valueName: "N"))
    var demoProducts: Int?

    @Option(name: .customLong("timeout-ms"), help: "Deadline of every backend call, in milliseconds, on the host's clock.")
    var timeoutMs: Int = 15000

    @Option(help: ArgumentHelp(
        "The host's clock: 'system' (real time) or 'manual'.",
        discussion: "A manual clock moves only with control.clock.advance (needs --test-controls): timers, countdowns, backend latency and timeouts become deterministic."))
    var clock: ClockChoice = .system

    @Flag(name: .customLong("test-controls"), help: "Serve the control.* methods (clock, backend latency and fault scripting). Without it they answer -32601.")
    var testControls = false

    @Option(help: ArgumentHelp(
        "Append every message in and out to FILE as NDJSON {t, dir, msg}.",
        discussion: "Passwords, SMS codes and tokens are written as \"***\".", valueName: "FILE"))
    var trace: String?

    @Option(name: .customLong("log-level"), help: "Least severe log level written to stderr: trace, debug, info, notice, warning, error or critical.")
    var logLevel: LogLevelChoice = .warning

    @Option(name: .customLong("max-message-bytes"), help: "Largest message accepted, in bytes. A larger one is skipped and answered with an error; the host keeps serving.")
    var maxMessageBytes: Int = 4 * 1024 * 1024

    func validate() throws {
        guard timeoutMs > 0 else { throw ValidationError("--timeout-ms must be a positive number of milliseconds, got \(timeoutMs)") }
        guard maxMessageBytes >= 64 else { throw ValidationError("--max-message-bytes must be at least 64, got \(maxMessageBytes)") }
        let parsedBackend: BackendOption
        do throws(BackendOptionError) {
            parsedBackend = try BackendOption(parsing: backend)
        } catch {
            throw ValidationError(error.message)
        }
        if let demoProducts {
            let range = DemoCatalog.productCountRange
            guard range.contains(demoProducts) else {
                throw ValidationError(
                    "--demo-products must be a number of products from \(range.lowerBound) to \(range.upperBound), got \(demoProducts)")
            }
            guard parsedBackend == .embedded else {
                throw ValidationError("--demo-products applies to the embedded backend only, not to --backend \(backend)")
            }
        }
    }

    func run() throws {
        let options = ServerOptions(
            framing: framing, backend: backend, timeoutMs: timeoutMs, manualClock: clock == .manual,
            testControls: testControls, tracePath: trace, logLevel: logLevel.level, maxMessageBytes: maxMessageBytes,
            demoProducts: demoProducts ?? DemoCatalog.productCount)
        StdioServer.run(options)
    }
}

enum ClockChoice: String, ExpressibleByArgument, CaseIterable {
    case system, manual
}

extension Framing: ExpressibleByArgument {}
