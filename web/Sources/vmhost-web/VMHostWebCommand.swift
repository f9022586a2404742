#if canImport(Glibc)
import Glibc
#endif
import AppComposition
import VMHost
@_spi(Transport) import VMHostWebSocket

/// The command line: `vmhost-web [options]`: the reference app's kinds served to browsers over
/// WebSocket at `/rpc`, and the web demo at `/`, through ``WebSocketServer`` as any app's are.
/// What the reference app adds: the memory its workers share (SMS countdowns, the device id), one
/// worker by default on the embedded backend, and its recordings' comment on that backend.
@main
enum VMHostWebCommand {
    static func main() async {
        var server = WebSocketServer(
            Server(ReferenceApp.configuration), command: "vmhost-web",
            overview: "Serves the app's view-models to browsers: JSON-RPC 2.0 over WebSocket at /rpc, the web demo at /.",
            discussion: """
                Each WebSocket connection is its own session (its own view-models, subscriptions and
                locale) speaking the protocol of protocol/SPEC.md, one message per text frame. Logs go to
                stderr. The transport is specified in protocol/SPEC.md, "WebSocket transport".

                The sessions are spread over worker processes (--workers), each with its own host thread;
                the process started holds the port and hands each connection to the least busy worker.
                With --workers 0 the process started serves every session itself and starts no other
                (to profile the server: valgrind, perf). The embedded backend's demo data (groups made,
                renamed, deleted) is each worker's own.

                Example:
                  vmhost-web --listen 127.0.0.1:8787   # then open http://127.0.0.1:8787/
                """)
        // Without --static: the checkout's clients folder, whose / opens the web demo.
        server.staticDirectory = clientsDirectory()
        server.indexRedirect = "/web/demo/"
        server.additions.sharedRegionBytes = WorkerSharedState.regionBytes
        server.additions.attachSharedRegion = { region in ReferenceApp.serverWide = WorkerSharedState(region: region) }
        server.additions.defaultWorkers = { parsed in
            (parsed.value("backend") ?? "embedded") == "embedded" ? 1 : nil
        }
        server.additions.defaultWorkersHelp = "the number of cores with an HTTP backend, 1 with the embedded one"
        server.additions.recordingComments = { parsed in
            guard (parsed.value("backend") ?? "embedded") == "embedded" else { return [] }
            return [
                "Recorded by vmhost-web on the embedded backend, whose demo data every session of a worker shares: this "
                    + "session started from what the sessions before it left (a group renamed, deleted or created), where a "
                    + "replay starts from fresh demo data. Replay it --offline (its backend lines hold what it saw), or record "
                    + "one session per server."
            ]
        }
        await server.run()
    }

    /// The checkout's `clients` folder (the web demo, the browser client and the protocol module it
    /// shares with the Node client), from the working directory or from the checkout the executable
    /// was built in (`<checkout>/web/.build/<configuration>/vmhost-web`, or a build folder of the
    /// checkout's own, `<checkout>/.build-release/release/vmhost-web`).
    static func clientsDirectory() -> String? {
        var candidates = ["clients", "../clients"]
        if let executable = CommandLine.arguments.first, let slash = executable.lastIndex(of: "/") {
            let folder = String(executable[..<slash])
            candidates += [folder + "/../../../clients", folder + "/../../clients"]
        }
        return candidates.first { access($0 + "/web/demo/index.html", R_OK) == 0 }
    }
}
