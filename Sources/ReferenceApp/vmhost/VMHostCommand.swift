#if canImport(Glibc)
import Glibc
#endif
import AppComposition
import VMHost

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
    ] + ServerOptions.commandLine + [
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
            let framing = Framing(rawValue: parsed.value("framing") ?? "auto")!
            StdioServer.run(try ServerOptions(parsed: parsed), framing: framing)
        } catch {
            fail(error.message)
        }
    }

    /// Writes a usage error to stderr and exits 64 (EX_USAGE).
    static func fail(_ message: String) -> Never {
        let usage = HelpText(command: "vmhost", overview: overview, discussion: discussion, options: options).usage
        FileHandleStderr.write("Error: \(message)\nUsage: \(usage)\n  See 'vmhost --help' for more information.\n")
        exit(64)
    }
}
