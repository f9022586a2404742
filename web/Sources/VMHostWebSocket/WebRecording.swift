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
    /// The recordings of the sessions open, by number: what ``cutShort()`` ends.
    private nonisolated let recordings = Mutex<[Int: SessionRecorder]>([:])
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

    /// The recording of a session that opens, in a file of its own; nil (the session is served
    /// unrecorded) when no file can be made.
    func open() -> SessionRecording? {
        let file: (fd: Int32, path: String, number: Int)
        do throws(SessionRecorder.RecordingError) {
            file = try SessionRecorder.createSessionFile(in: directory, first: next)
        } catch {
            WebSocketServer.writeStderr("\(command): \(error); the session is not recorded\n")
            return nil
        }
        next = file.number + 1
        let recorder = SessionRecorder(
            fd: file.fd, arguments: arguments, manualClock: manualClock, maxBytes: maxBytes, budget: budget)
        for comment in comments { recorder.addComment(comment) }
        opened += 1
        let number = opened
        recordings.withLock { $0[number] = recorder }
        let command = command, path = file.path
        WebSocketServer.writeStderr("\(command): recording a session to \(path)\n")
        return SessionRecording(recorder: recorder, secretMembers: secretMembers) { [weak self] in
            self?.recordings.withLock { $0[number] = nil }
            WebSocketServer.writeStderr("\(command): recorded a session to \(path)\n")
        }
    }

    /// Ends the recordings of the sessions still open, from any thread: the process exits before
    /// they ended (a page that did not answer the close within the time a signal leaves).
    nonisolated func cutShort() {
        for recorder in recordings.withLock({ $0.values }) {
            recorder.cutShort(comment: "The server exited here before the session ended; what came after is not recorded.")
        }
    }
}
#endif
