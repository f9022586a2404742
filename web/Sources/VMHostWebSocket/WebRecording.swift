#if WebSocket
#if canImport(Glibc)
import Glibc
#endif
import Synchronization
@_spi(Transport) import VMHost
@_spi(Transport) import VMHostCore

/// `--record DIR` of a ``WebSocketServer`` (`vmhost-web --record DIR`): every session recorded to a file of its own, `DIR/session-N.jsonl`
/// (the first N no file has), as `vmhost --record FILE` records its one session: a transcript that
/// `vmhost` replays on stdio (protocol/conformance/README.md, "Recordings"). The `args` line holds
/// the options that serve the same session on stdio: those given that the app's stdio server takes.
@HostActor
final class WebRecording {
    let directory: String
    /// The command, the prefix of what is said on stderr.
    let command: String
    let arguments: [String]
    /// Said among the first lines of every recording.
    let comments: [String]
    let manualClock: Bool
    let secretMembers: Set<String>
    /// `--max-record-bytes`: the bound of each session's file.
    let maxBytes: Int
    /// `--max-record-total-bytes`: the bound of every session's file together.
    let budget: RecordingBudget
    private var next = 1
    /// The recorder of the session whose configuration was made last and whose host is not
    /// tapped yet: the transport makes the host from it and asks for its tap in one turn.
    private var pending: (recorder: SessionRecorder, path: String)?
    /// The recordings of the sessions open, by number: what ``cutShort()`` ends.
    private nonisolated let open = Mutex<[Int: SessionRecorder]>([:])
    private var opened = 0

    /// The caps of a session that the stdio server does not have: left out of the `args` line.
    nonisolated static let sessionLimitOptions = ["max-view-models", "max-subscriptions", "max-commands-in-flight"]

    /// The `args` line of the sessions of a server of `configuration` started with `parsed`: the
    /// options given that its stdio server takes (the standard ones but those that make a recording
    /// or a trace, and the app's), and comments on the ones left out that a replay could miss, after
    /// the app's own `comments`.
    nonisolated static func recordedArguments(
        _ parsed: ParsedArguments, configuration: ServerConfiguration, comments appComments: [String]
    ) -> (arguments: [String], comments: [String]) {
        let sessionOptions = Server.standardOptions.filter { !["record", "trace", "framing"].contains($0.name) } + configuration.options
        let arguments = SessionRecorder.recordedArguments(parsed, options: sessionOptions, leavingOut: [])
        var comments = appComments
        let limits = sessionLimitOptions.filter { parsed.value($0) != nil }.map { "--" + $0 }
        if !limits.isEmpty {
            comments.append(
                "Recorded with \(limits.joined(separator: ", ")), caps of a WebSocket session that the stdio server does not have: "
                    + "a reply that a cap decided (-32006) does not repeat on replay.")
        }
        return (arguments, comments)
    }

    init(
        command: String, directory: String, arguments: [String], comments: [String], manualClock: Bool, secretMembers: Set<String>,
        maxBytes: Int = SessionRecorder.defaultMaxBytes, budget: RecordingBudget = .shared
    ) {
        self.maxBytes = maxBytes
        self.budget = budget
        self.directory = directory
        self.command = command
        self.arguments = arguments
        self.comments = comments
        self.manualClock = manualClock
        self.secretMembers = secretMembers
    }

    /// A session's configuration made by `make`, with its recorder current while its kinds are
    /// made (so the app records the session's backend calls). Without a file the session is
    /// served unrecorded.
    func configuration(_ make: () -> Host.Configuration) -> Host.Configuration {
        let file: (fd: Int32, path: String, number: Int)
        do throws(SessionRecorder.RecordingError) {
            file = try SessionRecorder.createSessionFile(in: directory, first: next)
        } catch {
            WebSocketServer.writeStderr("\(command): \(error); the session is not recorded\n")
            pending = nil
            return make()
        }
        next = file.number + 1
        let recorder = SessionRecorder(
            fd: file.fd, arguments: arguments, manualClock: manualClock, maxBytes: maxBytes, budget: budget)
        for comment in comments { recorder.addComment(comment) }
        SessionRecorder.current = recorder
        let configuration = make()
        SessionRecorder.current = nil
        pending = (recorder, file.path)
        return configuration
    }

    /// Ends the recordings of the sessions still open, from any thread: the process exits before
    /// they ended (a page that did not answer the close within the time a signal leaves).
    nonisolated func cutShort() {
        for recorder in open.withLock({ $0.values }) {
            recorder.cutShort(comment: "The server exited here before the session ended; what came after is not recorded.")
        }
    }

    /// What records the traffic of `host`'s session.
    func tap(_ host: Host) -> SessionTap? {
        guard let (recorder, path) = pending else { return nil }
        pending = nil
        recorder.configure(for: host, secretMembers: secretMembers)
        opened += 1
        let number = opened
        open.withLock { $0[number] = recorder }
        WebSocketServer.writeStderr("\(command): recording a session to \(path)\n")
        return SessionTap(
            incoming: { message in recorder.incoming(message) },
            outgoing: { body in recorder.outgoing(body) },
            ending: { [weak host] reason in
                if reason == "exit" {
                    // The session ends on `exit` as a stdio host exits: 0 after `shutdown`, else 1.
                    recorder.exited(status: host?.hasShutDown == true ? 0 : 1)
                } else {
                    recorder.inputEnded(
                        comment: "The session was ended here (\(reason)); a replay ends the input instead.",
                        cancellingPending: true)
                }
            },
            closing: { unwritten in
                for body in unwritten { recorder.outgoing(body) }
                recorder.inputEnded(comment: "The page closed its session here.", cancellingPending: true)
            },
            closed: { [weak self, command] cancelled in
                for body in cancelled { recorder.outgoing(body) }
                recorder.finish()
                self?.open.withLock { $0[number] = nil }
                WebSocketServer.writeStderr("\(command): recorded a session to \(path)\n")
            })
    }
}
#endif
