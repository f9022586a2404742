#if canImport(Glibc)
import Glibc
#endif
import AppComposition
import Logging
import VMHost
import VMHostWebSocket

/// The command line: `vmhost-web [options]`: the reference app's kinds served to browsers over
/// WebSocket at `/rpc`, and the web demo at `/`.
@main
enum VMHostWebCommand {
    static let overview = "Serves the app's view-models to browsers: JSON-RPC 2.0 over WebSocket at /rpc, the web demo at /."
    static let discussion = """
        Each WebSocket connection is its own session (its own view-models, subscriptions and
        locale) speaking the protocol of protocol/SPEC.md, one message per text frame. Logs go to
        stderr. The transport is specified in protocol/SPEC.md, "WebSocket transport".

        Example:
          vmhost-web --listen 127.0.0.1:8787   # then open http://127.0.0.1:8787/
        """

    static let options: [OptionSpec] = [
        OptionSpec(
            "listen", value: "HOST:PORT", defaultValue: "127.0.0.1:8787",
            abstract: "The address to listen on. Port 0 picks a free port; the URL is printed on stderr.",
            discussion: "Listening beyond loopback exposes every session to the network: use --token then."),
        OptionSpec(
            "allow-origin", value: "ORIGIN",
            abstract: "An origin besides the server's own whose pages may connect, e.g. http://localhost:3000 (repeat the option or separate with commas)."),
        OptionSpec(
            "token", value: "TOKEN",
            abstract: "Require 'Authorization: Bearer TOKEN' or '?token=TOKEN' on the WebSocket handshake."),
        OptionSpec(
            "static", value: "DIR",
            abstract: "The folder served at / (default: the checkout's clients folder, found from the working directory or from the executable's path; / then opens the web demo, /web/demo/)."),
        OptionSpec(
            "record", value: "DIR",
            abstract: "Record every session to a file of its own in DIR (session-1.jsonl, ...), a transcript that vmhost replays.",
            discussion: "DIR is made when missing. Replay a session with python3 -m vmhost.replay DIR/session-1.jsonl (protocol/conformance/README.md, Recordings)."),
    ] + Server.standardOptions.filter { $0.name != "framing" && $0.name != "record" } + ReferenceApp.configuration.options
        + Server.closingOptions

    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        let parsed: ParsedArguments
        let settings: ServerSettings
        var transport = WebSocketTransport.Options()
        do throws(UsageError) {
            parsed = try ParsedArguments(arguments, options: options)
            if parsed.flag("help") {
                print(HelpText(command: "vmhost-web", overview: overview, discussion: discussion, options: options).text, terminator: "")
                exit(0)
            }
            if parsed.flag("version") {
                print(vmhostVersion)
                exit(0)
            }
            settings = try ServerSettings(parsed)
            (transport.host, transport.port) = try listenAddress(parsed.value("listen") ?? "127.0.0.1:8787")
            transport.allowedOrigins = allowedOrigins(arguments)
            transport.token = parsed.value("token")
            if transport.token?.isEmpty == true { throw UsageError("--token must not be empty") }
            transport.maxMessageBytes = settings.maxMessageBytes
            if let folder = parsed.value("static") {
                transport.staticDirectory = folder
            } else if let folder = clientsDirectory() {
                transport.staticDirectory = folder
                transport.indexRedirect = "/web/demo/"
            }
        } catch {
            fail(error.message)
        }

        let level = settings.logLevel
        LoggingSystem.bootstrap { label in StderrLogHandler(logLevel: level, label: label) }
        var logger = Logger(label: "vmhost-web")
        logger.logLevel = level

        var traceFD: Int32?
        if let path = settings.tracePath {
            do throws(TraceRecorder.TraceError) {
                traceFD = try TraceRecorder.open(path: path)
            } catch {
                writeStderr("vmhost-web: \(error)\n")
                exit(2)
            }
        }

        // One app (clock, backend) for every session, made on the host thread; each session gets
        // its own kinds from it (its own login state).
        let server = Server(ReferenceApp.configuration)
        let made = await onHostThread { () -> Result<Server.App, UsageError> in
            do throws(UsageError) {
                return .success(try server.makeApp(settings: settings, arguments: parsed, logger: logger))
            } catch {
                return .failure(error)
            }
        }
        let app: HostThreadValue<Server.App>
        switch made.value {
        case .success(let made): app = HostThreadValue(value: made)
        case .failure(let error): fail(error.message)
        }
        if let traceFD {
            // One trace for every session; the redaction is the same for each (one configuration).
            let trace = await onHostThread {
                TraceRecorder(
                    fd: traceFD,
                    redaction: Host(configuration: app.value.host).redaction(
                        secretMembers: ReferenceApp.configuration.secretMembers))
            }.value
            transport.traceIncoming = { message in trace.record("in", message) }
            transport.traceOutgoing = { body in trace.recordOutgoing(body) }
        }
        if let directory = settings.recordPath {
            do throws(SessionRecorder.RecordingError) {
                try SessionRecorder.prepare(directory: directory)
            } catch {
                writeStderr("vmhost-web: \(error)\n")
                exit(2)
            }
        }
        let recorded = SessionRecorder.recordedArguments(parsed, options: options, leavingOut: WebRecording.serverOptions)
        let recording = await onHostThread { () -> WebRecording? in
            settings.recordPath.map {
                WebRecording(
                    directory: $0, arguments: recorded, manualClock: settings.manualClock,
                    secretMembers: ReferenceApp.configuration.secretMembers)
            }
        }
        transport.tapSession = { host in recording.value?.tap(host) }
        let listenHost = transport.host
        let token = transport.token
        do {
            try await WebSocketTransport.run(
                options: transport, logger: logger,
                // Each connection its own login (and so its own token) over the shared backend client.
                makeHost: {
                    let make = { Host(configuration: app.value.connectionHost()) }
                    return recording.value?.host(make) ?? make()
                },
                onListening: { port in
                    let query = token == nil ? "" : "?token=…"
                    writeStderr("vmhost-web: serving http://\(listenHost):\(port)/\(query) (WebSocket at /rpc)\n")
                })
        } catch {
            writeStderr("vmhost-web: \(error)\n")
            StderrLogHandler.flush()
            exit(1)
        }
        StderrLogHandler.flush()
    }

    /// `HOST:PORT`, `[::1]:PORT`.
    static func listenAddress(_ text: String) throws(UsageError) -> (String, Int) {
        guard let colon = text.lastIndex(of: ":") else {
            throw UsageError("--listen must be HOST:PORT, e.g. 127.0.0.1:8787, got '\(text)'")
        }
        var host = String(text[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty, let port = Int(text[text.index(after: colon)...]), (0...65535).contains(port) else {
            throw UsageError("--listen must be HOST:PORT with a port from 0 to 65535, got '\(text)'")
        }
        return (host, port)
    }

    /// Every `--allow-origin` given (the parser keeps the last value of an option).
    static func allowedOrigins(_ arguments: [String]) -> [String] {
        var origins: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--allow-origin", index + 1 < arguments.count {
                origins.append(arguments[index + 1])
                index += 1
            } else if argument.hasPrefix("--allow-origin=") {
                origins.append(String(argument.dropFirst("--allow-origin=".count)))
            }
            index += 1
        }
        return origins.flatMap { $0.split(separator: ",").map(String.init) }.filter { !$0.isEmpty }
    }

    /// The checkout's `clients` folder (the web demo, the browser client and the protocol module it
    /// shares with the Node client), from the working directory or from the checkout the executable
    /// was built in (`<checkout>/.build/<configuration>/vmhost-web`).
    static func clientsDirectory() -> String? {
        var candidates = ["clients"]
        if let executable = CommandLine.arguments.first, let slash = executable.lastIndex(of: "/") {
            candidates.append(String(executable[..<slash]) + "/../../clients")
        }
        return candidates.first { access($0 + "/web/demo/index.html", R_OK) == 0 }
    }

    static func writeStderr(_ text: String) {
        var bytes = Array(text.utf8)
        _ = write(2, &bytes, bytes.count)
    }

    static func fail(_ message: String) -> Never {
        let usage = HelpText(command: "vmhost-web", overview: overview, discussion: discussion, options: options).usage
        writeStderr("Error: \(message)\nUsage: \(usage)\n  See 'vmhost-web --help' for more information.\n")
        exit(64)
    }
}

/// A value handed from the host thread to another, for values that are used only on the host
/// thread (a configuration holding host-actor closures).
struct HostThreadValue<T>: @unchecked Sendable { let value: T }

func onHostThread<T>(_ body: @escaping @HostActor () -> T) async -> HostThreadValue<T> {
    await withCheckedContinuation { continuation in
        EventLoop.shared.execute { continuation.resume(returning: HostThreadValue(value: HostActor.assumeIsolated { body() })) }
    }
}
