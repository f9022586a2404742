#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization
@_spi(Transport) import VMHostCore
@_spi(Transport) import VMHostEventLoop
@_spi(Transport) import VMHostJSONRPC
@_spi(Transport) import VMHostWire

/// `--record`: one session written as a conformance transcript (protocol/conformance/README.md,
/// "Recordings"), so that what a client did becomes a test any replayer runs.
///
/// The transcript holds the `args` line (the options the host was started with, but those of the
/// recording itself), a `send` for every message the client wrote, an `expect` for every message
/// the host wrote, in the order they happened, then `close` (the end of input) or `exit`, and the
/// app's own lines (``record(_:_:)``: the reference app adds its backend's exchanges).
/// What a replay cannot repeat is turned into patterns:
///
/// - subscription handles (named by the host as it likes): `"$capture:s1"` in the `vm.subscribe`
///   result, `"$ref:s1"` in the notifications and in a later `vm.unsubscribe`;
/// - `serverInfo.version`, and the `inputs` / `outputs` of a `vm.create` result: `"$any"`;
/// - secrets: `"$secret:NAME:N"`, the first N characters of the secret NAME, which a replay takes
///   from `VMHOST_SECRET_NAME` or a secrets file; the secret itself is never written. Secret are
///   the values of inputs that no kind served declares plain (the trace's rule, SPEC §8: declared
///   secret, or unknown), string values of the app's secret members (a `token`) at any depth, and
///   any string equal to a secret seen before, wherever it appears. Values typed one character at
///   a time (`1`, `12`, `123`) are prefixes of one secret, not a secret each. A string of the host's
///   that holds a secret of four or more characters inside it is written `"$any"`.
/// - strings that would read as patterns (`"$any"`, `"$ref:…"`) are wrapped in `{"$literal": …}`.
///
/// Steps are written as they happen, each in one write, from the host thread (what the client
/// sent) and from whichever thread writes the output (what the host wrote, as written), under one
/// lock: a short step on one line, a long `send` or `expect` laid out a member or element per line,
/// as the replayers' `--update` writes it (``RecordingSteps/text(of:)``), so that an update of a
/// recording changes only the lines of the values that changed.
public final class SessionRecorder: Sendable {
    private let state: Mutex<State>

    /// A recorder writing to `fd` (from ``create(path:)``) the session of a host started with
    /// `arguments` (as ``recordedArguments(_:options:leavingOut:)`` makes them). `manualClock`:
    /// whether the host runs on a manual clock (a recording on the system clock says that its
    /// timing may not repeat).
    ///
    /// `maxBytes` (`--max-record-bytes`) bounds the file, and `budget` (`--max-record-total-bytes`)
    /// every recording of the server together: a line past either is not written; a comment
    /// saying why ends the recording instead, and the session goes on unrecorded.
    @_spi(Transport) public init(
        fd: Int32, arguments: [String], manualClock: Bool,
        maxBytes: Int = SessionRecorder.defaultMaxBytes, budget: RecordingBudget = .shared
    ) {
        var state = State(fd: fd, arguments: arguments, maxBytes: maxBytes, budget: budget)
        state.headerComments.append(
            "Recorded with --record: what the client sent and what the host wrote, in order. "
                + "Replay it with `python3 -m vmhost.replay FILE` (protocol/conformance/README.md, Recordings).")
        if !manualClock {
            state.headerComments.append(
                "Recorded on the system clock: timers, backend latency and timeouts ran in real time, so a replay "
                    + "may differ where time decided (a countdown tick, a timeout, what one notification carries). "
                    + "Record with --clock manual --test-controls for a replay that repeats exactly.")
        }
        self.state = Mutex(state)
    }

    // MARK: The header

    /// The options of the `args` line.
    public var arguments: [String] { state.withLock { $0.arguments } }

    /// Leaves option `--name` (and its value) out of the `args` line, saying why in a comment.
    public func leaveOut(option name: String, because reason: String) {
        state.withLock { state in
            let before = state.arguments
            state.arguments = Self.removing(option: name, from: before)
            if state.arguments != before { state.headerComments.append(reason) }
        }
    }

    /// The options that replay the session with no backend, from the recorded backend exchanges of
    /// the transcript itself (`offlineArgs` beside `args`; `$transcript` stands for its path).
    public func setOfflineArguments(_ arguments: [String]) {
        state.withLock { $0.offlineArguments = arguments }
    }

    /// A comment among the first lines.
    public func addComment(_ text: String) {
        state.withLock { $0.headerComments.append(text) }
    }

    // MARK: The session

    /// What is secret in this host's messages: the inputs its kinds declare plain (everything else
    /// sent to `vm.send` is secret) and the app's secret member names. Set before the first message.
    @_spi(Transport) public func configure(redaction: Redaction, secretMembers: Set<String>) {
        state.withLock { state in
            // The rules only: the secrets named so far (an app's line, say) keep their names.
            state.redaction.plainInputs = redaction.plainInputs
            state.redaction.secretMembers = redaction.secretMembers
            state.redaction.appSecretMembers = secretMembers
        }
    }

    /// Records what `host` reads and takes its redaction (the inputs its kinds declare plain)
    /// and the app's secret members: the engine's tracer is extended with the recording.
    @HostActor
    @_spi(Transport) public func attach(to host: Host, secretMembers: Set<String>) {
        configure(for: host, secretMembers: secretMembers)
        let previous = host.engine.tracer
        host.engine.tracer = { message in
            previous?(message)
            self.incoming(message)
        }
    }

    /// Takes `host`'s redaction and the app's secret members, for a transport that feeds
    /// ``incoming(_:)`` itself.
    @HostActor
    @_spi(Transport) public func configure(for host: Host, secretMembers: Set<String>) {
        configure(redaction: host.redaction(secretMembers: secretMembers), secretMembers: secretMembers)
    }

    /// Records a message the client sent (as the engine parsed it).
    @_spi(Transport) public func incoming(_ message: JSON) {
        state.withLock { state in
            guard state.accepting, state.exitStatus == nil else { return }
            if case .object(let object) = message, object.count == 1, case .int(let size)? = object["unparsable"] {
                // The engine traces a frame that is not JSON by its size only: its text may hold a
                // password and cannot be redacted. A stand-in that is no JSON either replaces it.
                state.write(["comment": .string(
                    "The client sent a frame of \(size) bytes that is not JSON. Its text is not recorded (it may hold a secret): a stand-in that is not JSON either replaces it.")])
                state.write(["sendRaw": "{\n"])
                return
            }
            let form = state.sendForm(message)
            var line = JSONObject()
            if let input = Self.userInput(of: form) { line.append("user", .string(input)) }
            line.append("send", form)
            state.write(.object(line))
            state.noteRequests(in: message)
        }
    }

    /// The input a recorded `send` acts on when it is a user's action (a `vm.send`: a keystroke, a
    /// press), for the line's `user` marker; taken from the recorded form, so a marker never holds
    /// more than the `send` beside it. Nil for everything else (creating, subscribing, a test
    /// control, a batch).
    static func userInput(of form: JSON) -> String? {
        guard case .object(let object) = form, object["method"]?.stringValue == "vm.send",
              case .object(let params)? = object["params"], case .string(let input)? = params["input"]
        else { return nil }
        return input
    }

    /// Records a message the host wrote (one body, as written).
    @_spi(Transport) public func outgoing(_ body: [UInt8]) {
        guard let message = try? JSON.parse(body) else { return }
        state.withLock { state in
            guard state.accepting else { return }
            state.noteResponses(in: message)
            state.write(["expect": state.expectForm(message)])
        }
    }

    /// The input has ended (EOF, a closed connection, or as the host ends for a signal or a closed
    /// output, said in `comment`): a `close` step, unless the host exited on `exit`. What the host
    /// writes afterwards is still recorded.
    ///
    /// `cancellingPending`: the host cancels the requests it has not answered yet, where on stdio
    /// the end of input lets them run (a closed connection, a signal, a closed output). A
    /// `$/cancelRequest` for each then stands before the `close`, so that a replay cancels them
    /// too. (A command sent as a notification cannot be cancelled that way: it runs in a replay.)
    @_spi(Transport) public func inputEnded(comment: String? = nil, cancellingPending: Bool = false) {
        state.withLock { state in
            guard state.accepting, !state.closed, state.exitStatus == nil else { return }
            if let comment { state.write(["comment": .string(comment)]) }
            if cancellingPending, !state.pending.isEmpty {
                state.write(["comment": .string(
                    "The host cancelled \(state.pending.count) request(s) not answered yet here; a replay cancels them with $/cancelRequest, since the end of its input would let them run (protocol/SPEC.md §7).")])
                for id in state.pending {
                    let cancel: JSON = ["jsonrpc": "2.0", "method": "$/cancelRequest", "params": ["id": id]]
                    state.write(["send": state.sendForm(cancel)])
                }
            }
            state.write(["close": true])
            state.closed = true
        }
    }

    /// The host exits on `exit` with `status`: the recording ends with an `exit` step instead of
    /// `close`.
    @_spi(Transport) public func exited(status: Int32) {
        state.withLock { state in
            guard state.accepting, !state.closed, state.exitStatus == nil else { return }
            state.exitStatus = Int(status)
        }
    }

    /// Runs `body` when the session ends (``finish()``), before the last lines are written: an app
    /// writes what is still in flight then (a backend call that never ended).
    public func onEnd(_ body: @escaping @HostActor @Sendable () -> Void) {
        state.withLock { $0.endHooks.append(body) }
    }

    /// Ends the recording: what ``onEnd(_:)`` adds, the `exit` step if the host exited on `exit`, a
    /// comment naming the secrets a replay needs, and the file is closed. Later calls record nothing.
    @HostActor
    @_spi(Transport) public func finish() {
        let hooks = state.withLock { state in
            defer { state.endHooks = [] }
            return state.finished ? [] : state.endHooks
        }
        for hook in hooks { hook() }
        state.withLock { state in state.end() }
    }

    /// Ends the recording from any thread when the process exits before the session ended (a
    /// server whose time to close its sessions ran out): `comment`, the secrets a replay needs,
    /// and the file is closed. What ``onEnd(_:)`` would add is not written.
    @_spi(Transport) public func cutShort(comment: String) {
        state.withLock { state in
            guard !state.finished else { return }
            state.write(["comment": .string(comment)], closing: true)
            state.end()
        }
    }

    /// Whether a write failed (the recording is then incomplete and stops).
    @_spi(Transport) public var failed: Bool { state.withLock { $0.writeFailed } }

    // MARK: The app's lines

    /// The placeholder of `value`, a secret of the app's (a password in a request body, a token in
    /// a response), named `name` when it is new: `"$secret:NAME:N"`. Never the value itself.
    public func secretPlaceholder(for value: String, name: String) -> String {
        state.withLock { $0.redaction.placeholder(for: value, source: name) }
    }

    /// Adds the line `{key: value}` (an app's own, such as `{"backend": …}`) where the session has
    /// reached. Every string equal to a secret seen so far is written as its placeholder; strings
    /// that are placeholders already are kept.
    public func record(_ key: String, _ value: JSON) {
        state.withLock { state in
            guard state.accepting else { return }
            state.write(.object([key: state.appLineForm(value)]))
        }
    }

    // MARK: Files and arguments

    /// Why a recording cannot be made.
    public struct RecordingError: Error, CustomStringConvertible {
        public var description: String
    }

    /// Creates (or truncates) the file at `path` for a recording; returns its descriptor. Only a
    /// regular file is accepted.
    @_spi(Transport) public static func create(path: String) throws(RecordingError) -> Int32 {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NONBLOCK, 0o600)
        guard fd >= 0 else {
            throw RecordingError(description: "cannot open recording file \(path): \(String(cString: strerror(errno)))")
        }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            throw RecordingError(description: "cannot record to \(path): not a regular file")
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK)
        _ = fchmod(fd, 0o600)  // a file that existed is emptied and holds a session now: the owner's only
        return fd
    }

    /// Makes `directory` (mode 0700) unless it exists, for one recording per session.
    @_spi(Transport) public static func prepare(directory: String) throws(RecordingError) {
        var info = stat()
        if stat(directory, &info) == 0 {
            guard (info.st_mode & S_IFMT) == S_IFDIR else {
                throw RecordingError(description: "cannot record to \(directory): not a directory")
            }
            return
        }
        guard mkdir(directory, 0o700) == 0 || errno == EEXIST else {
            throw RecordingError(description: "cannot make recording directory \(directory): \(String(cString: strerror(errno)))")
        }
    }

    /// Creates a new file `session-N.jsonl` in `directory`, with the first N from `first` on that no
    /// file has; returns its descriptor and path.
    @_spi(Transport) public static func createSessionFile(in directory: String, first: Int) throws(RecordingError) -> (fd: Int32, path: String, number: Int) {
        var number = max(1, first)
        for _ in 0..<100_000 {
            let path = directory + "/session-\(number).jsonl"
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            if fd >= 0 { return (fd, path, number) }
            guard errno == EEXIST, number < Int.max else { break }
            number += 1
        }
        throw RecordingError(description: "cannot make a recording file in \(directory): \(String(cString: strerror(errno)))")
    }

    /// The options given (`parsed`, read against `options`) as a command line in the order of
    /// `options`, without those named in `leavingOut`, the bounds of the recording and the trace
    /// themselves (``boundOptions``), `--help` and `--version`.
    @_spi(Transport) public static func recordedArguments(
        _ parsed: ParsedArguments, options: [OptionSpec], leavingOut: Set<String>
    ) -> [String] {
        var arguments: [String] = []
        for option in options
        where !leavingOut.contains(option.name) && !boundOptions.contains(option.name) && option.name != "help" && option.name != "version" {
            if option.value == nil {
                if parsed.flag(option.name) { arguments.append("--" + option.name) }
            } else if let value = parsed.value(option.name) {
                arguments += ["--" + option.name, value]
            }
        }
        return arguments
    }

    /// `arguments` without `--name VALUE`, `--name=VALUE` or the flag `--name`.
    public static func removing(option name: String, from arguments: [String]) -> [String] {
        var kept: [String] = []
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--" + name {
                // Its value, if it takes one (what follows is no option).
                if index < arguments.count, !arguments[index].hasPrefix("--") { index += 1 }
            } else if !argument.hasPrefix("--" + name + "=") {
                kept.append(argument)
            }
        }
        return kept
    }
}
