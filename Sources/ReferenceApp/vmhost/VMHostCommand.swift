#if canImport(Glibc)
import Glibc
#endif
import Backend
import HTTPBackend
import Logging
import VMHostCore
import VMHostWire

/// The command line: `vmhost [options]`. Everything else is spoken over stdin/stdout.
@main
enum VMHostCommand {
    static let overview = "Holds an app's view-models and serves them over JSON-RPC 2.0 on stdin/stdout."
    static let discussion = """
        Requests are read from stdin, responses and notifications are written to stdout, logs go
        to stderr. Start it, send {"jsonrpc":"2.0","id":1,"method":"host.describe"} and read the
        catalog of view-model kinds. The protocol is specified in protocol/SPEC.md.

        Example:
          printf '%s\\n' '{"jsonrpc":"2.0","id":1,"method":"ping"}' | vmhost
        """

    /// Every option, in the order `--help` lists them.
    static let options: [OptionSpec] = [
        OptionSpec(
            "framing", value: "framing", choices: Framing.allCases.map(\.rawValue), defaultValue: "auto",
            abstract: "Message framing: auto, ndjson or lsp.",
            discussion: "ndjson is one JSON text per line. lsp is 'Content-Length: N' headers. auto decides from the first byte ('{' or '[' means ndjson) and answers in the same framing."),
        OptionSpec(
            "backend", value: "embedded|URL", defaultValue: "embedded",
            abstract: "The backend: 'embedded' (deterministic demo data, in-process) or the base URL of an HTTP server.",
            discussion: "For example --backend http://127.0.0.1:8080. The HTTP contract is in protocol/backend.md."),
        OptionSpec(
            "demo-products", value: "N",
            abstract: "The number of products the embedded backend serves (default: 57, from 0 to 1000000).",
            discussion: "57 is the documented demo catalogue (p001 ... p057). A larger catalogue continues it by the same rule (p058, p059, ...), e.g. --demo-products 5000 for a long list. Only with the embedded backend."),
        OptionSpec(
            "timeout-ms", value: "timeout-ms", defaultValue: "15000",
            abstract: "Deadline of every backend call, in milliseconds, on the host's clock."),
        OptionSpec(
            "max-response-bytes", value: "N", defaultValue: String(HTTPAPIClient.defaultMaxResponseBytes),
            abstract: "Largest backend response body read, in bytes (HTTP backend). A larger one fails the call as a decode error without being read further."),
        OptionSpec(
            "clock", value: "clock", choices: ["system", "manual"], defaultValue: "system",
            abstract: "The host's clock: 'system' (real time) or 'manual'.",
            discussion: "A manual clock moves only with control.clock.advance (needs --test-controls): timers, countdowns, backend latency and timeouts become deterministic."),
        OptionSpec(
            "test-controls",
            abstract: "Serve the control.* methods (clock, backend latency and fault scripting). Without it they answer -32601."),
        OptionSpec(
            "trace", value: "FILE",
            abstract: "Append every message in and out to FILE as NDJSON {t, dir, msg}.",
            discussion: "Passwords, SMS codes and tokens are written as \"***\"."),
        OptionSpec(
            "log-level", value: "log-level", choices: Logger.Level.allCases.map(\.rawValue), defaultValue: "warning",
            abstract: "Least severe log level written to stderr: trace, debug, info, notice, warning, error or critical."),
        OptionSpec(
            "max-message-bytes", value: "max-message-bytes", defaultValue: String(4 * 1024 * 1024),
            abstract: "Largest message accepted, in bytes. A larger one is skipped and answered with an error; the host keeps serving."),
        OptionSpec("version", abstract: "Show the version."),
        OptionSpec("help", short: "h", abstract: "Show help information."),
    ]

    static func main() {
        let parsed: ParsedArguments
        do throws(UsageError) {
            parsed = try ParsedArguments(Array(CommandLine.arguments.dropFirst()), options: options)
        } catch {
            fail(error.message)
        }
        if parsed.flag("help") {
            print(HelpText(command: "vmhost", overview: overview, discussion: discussion, options: options).text, terminator: "")
            exit(0)
        }
        if parsed.flag("version") {
            print(vmhostVersion)
            exit(0)
        }
        do throws(UsageError) {
            StdioServer.run(try serverOptions(parsed))
        } catch {
            fail(error.message)
        }
    }

    /// The options of a run, validated.
    static func serverOptions(_ parsed: ParsedArguments) throws(UsageError) -> ServerOptions {
        let framing = Framing(rawValue: parsed.value("framing") ?? "auto")!
        let backend = parsed.value("backend") ?? "embedded"
        let timeoutMs = try parsed.integer("timeout-ms") ?? 15000
        let maxMessageBytes = try parsed.integer("max-message-bytes") ?? 4 * 1024 * 1024
        let demoProducts = try parsed.integer("demo-products")
        let maxResponseBytes = try parsed.integer("max-response-bytes") ?? HTTPAPIClient.defaultMaxResponseBytes
        guard maxResponseBytes > 0 else { throw UsageError("--max-response-bytes must be a positive number of bytes, got \(maxResponseBytes)") }
        guard timeoutMs > 0 else { throw UsageError("--timeout-ms must be a positive number of milliseconds, got \(timeoutMs)") }
        guard maxMessageBytes >= 64 else { throw UsageError("--max-message-bytes must be at least 64, got \(maxMessageBytes)") }
        let parsedBackend: BackendOption
        do throws(BackendOptionError) {
            parsedBackend = try BackendOption(parsing: backend)
        } catch {
            throw UsageError(error.message)
        }
        if let demoProducts {
            let range = DemoCatalog.productCountRange
            guard range.contains(demoProducts) else {
                throw UsageError(
                    "--demo-products must be a number of products from \(range.lowerBound) to \(range.upperBound), got \(demoProducts)")
            }
            guard parsedBackend == .embedded else {
                throw UsageError("--demo-products applies to the embedded backend only, not to --backend \(backend)")
            }
        }
        return ServerOptions(
            framing: framing, backend: backend, timeoutMs: timeoutMs, manualClock: parsed.value("clock") == "manual",
            testControls: parsed.flag("test-controls"), tracePath: parsed.value("trace"),
            logLevel: Logger.Level(rawValue: parsed.value("log-level") ?? "warning")!,
            maxMessageBytes: maxMessageBytes, demoProducts: demoProducts ?? DemoCatalog.productCount,
            maxResponseBytes: maxResponseBytes)
    }

    /// Writes a usage error to stderr and exits 64 (EX_USAGE).
    static func fail(_ message: String) -> Never {
        let usage = HelpText(command: "vmhost", overview: overview, discussion: discussion, options: options).usage
        FileHandleStderr.write("Error: \(message)\nUsage: \(usage)\n  See 'vmhost --help' for more information.\n")
        exit(64)
    }
}
