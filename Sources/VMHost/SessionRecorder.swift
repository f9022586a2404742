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
/// Lines are written as they happen, from the host thread (what the client sent) and from
/// whichever thread writes the output (what the host wrote, as written), under one lock.
public final class SessionRecorder: Sendable {
    private let state: Mutex<State>

    /// The recorder of the session whose kinds are being made: set by the server while an app's
    /// kinds are made (on stdio for the whole run, over WebSocket while a connection's are made),
    /// so that the app can add lines of its own (``record(_:_:)``) and adjust the `args` line.
    @HostActor public static var current: SessionRecorder?

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
            state.redaction = redaction
            state.appSecretMembers = secretMembers
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
        state.withLock { $0.secrets.placeholder(for: value, source: name) }
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

// MARK: - Bounds

extension SessionRecorder {
    /// The options bounding a recording or a trace, which a recording's `args` line leaves out
    /// with the recording's and the trace's own.
    public static let boundOptions: Set<String> = ["max-record-bytes", "max-record-total-bytes", "max-trace-bytes"]

    /// The default of `--max-record-bytes`: 64 MiB for one session's recording.
    public static let defaultMaxBytes = 64 * 1024 * 1024
}

/// The bytes every recording of a server may write together (`--max-record-total-bytes`), shared
/// by its ``SessionRecorder``s from any thread.
public final class RecordingBudget: Sendable {
    /// The default of `--max-record-total-bytes`: 1 GiB.
    public static let defaultLimit = 1024 * 1024 * 1024
    /// The budget of this process's recordings when none is given (the default limit).
    public static let shared = RecordingBudget(limit: defaultLimit)

    /// The bytes all recordings may write together.
    public let limit: Int
    private let used = Atomic<Int>(0)

    /// A budget of `limit` bytes.
    public init(limit: Int) { self.limit = limit }

    /// Takes `count` bytes, or nothing and false when fewer are left.
    func take(_ count: Int) -> Bool {
        var current = used.load(ordering: .relaxed)
        while true {
            guard current <= limit - count else { return false }
            let (exchanged, original) = used.compareExchange(
                expected: current, desired: current + count, ordering: .relaxed)
            if exchanged { return true }
            current = original
        }
    }

    /// Counts `count` bytes written past the limit's check (the closing lines of a recording).
    func add(_ count: Int) { used.add(count, ordering: .relaxed) }
}

// MARK: - The state and the forms of lines

extension SessionRecorder {
    struct State {
        var fd: Int32
        var arguments: [String]
        var offlineArguments: [String]?
        var headerComments: [String] = []
        var headerWritten = false
        /// A `close` step was written.
        var closed = false
        /// The host exits on `exit`, with this status.
        var exitStatus: Int?
        /// The ids of the requests read and not answered yet, in the order they were read (at most
        /// ``maxPending``: a batch refused whole is answered with no id, and its ids stay).
        var pending: [JSON] = []
        static let maxPending = 10_000
        var finished = false
        var writeFailed = false
        var redaction = Redaction(plainInputs: [], secretInputs: [])
        var appSecretMembers: Set<String> = []
        /// Subscription handles captured, by handle: the capture's name.
        var captures: [String: String] = [:]
        var secrets = SecretBook()
        var endHooks: [@HostActor @Sendable () -> Void] = []

        /// The bound of this file, and the server's of every recording.
        let maxBytes: Int
        let budget: RecordingBudget
        /// The bytes written to this file.
        var written = 0

        init(fd: Int32, arguments: [String], maxBytes: Int, budget: RecordingBudget) {
            self.fd = fd
            self.arguments = arguments
            self.maxBytes = maxBytes
            self.budget = budget
        }

        var accepting: Bool { !finished && !writeFailed }

        /// The last lines: the `exit` step if the host exited on `exit`, the secrets a replay
        /// needs; then the file is closed.
        mutating func end() {
            guard !finished else { return }
            if let status = exitStatus { write(["exit": .int(Int64(status))], closing: true) }
            let needed = secrets.summary(needed: true, limit: Self.closingRoom / 2)
            if !needed.isEmpty {
                write(["comment": .string(
                    "Secrets a replay needs (never written here): " + needed
                        + ". Give each as VMHOST_SECRET_<NAME> in the environment, or in a JSON file {\"NAME\": \"value\"} passed with --secrets.")],
                    closing: true)
            }
            let masked = secrets.summary(needed: false, limit: Self.closingRoom / 4)
            if !masked.isEmpty {
                write(["comment": .string("Secrets masked in the app's lines only, which a replay does not need: " + masked + ".")], closing: true)
            }
            if !headerWritten { writeHeader() }
            finished = true
            close(fd)
        }

        /// The room kept past the bounds for the closing lines (the comment saying why the
        /// recording stopped, the secrets a replay needs).
        static let closingRoom = 16 * 1024

        mutating func writeHeader() {
            headerWritten = true
            var first: JSONObject = ["args": .array(arguments.map { .string($0) })]
            if let offlineArguments { first.append("offlineArgs", .array(offlineArguments.map { .string($0) })) }
            writeLine(.object(first))
            for comment in headerComments { writeLine(["comment": .string(comment)]) }
        }

        /// Writes `line` (after the header). A line past this file's bound or the server's is
        /// not written: a comment saying why ends the recording. `closing`: a line of its end,
        /// written within the room kept for it.
        mutating func write(_ line: JSON, closing: Bool = false) {
            if !headerWritten { writeHeader() }
            guard !finished else { return }
            var bytes = line.serialized()
            bytes.append(UInt8(ascii: "\n"))
            if closing {
                budget.add(bytes.count)
            } else if written > maxBytes - bytes.count {
                stop("it reached --max-record-bytes (\(maxBytes) bytes)")
                return
            } else if !budget.take(bytes.count) {
                stop("the recordings of this server reached --max-record-total-bytes (\(budget.limit) bytes)")
                return
            }
            writeBytes(bytes)
        }

        /// Ends the recording before the session: a comment saying why, then the end's lines.
        private mutating func stop(_ why: String) {
            write(["comment": .string(
                "The recording stops here: \(why). The session went on unrecorded; a replay of this file ends here, "
                    + "and fails if the host still had something to write.")], closing: true)
            end()
        }

        private mutating func writeLine(_ line: JSON) {
            var bytes = line.serialized()
            bytes.append(UInt8(ascii: "\n"))
            budget.add(bytes.count)
            writeBytes(bytes)
        }

        private mutating func writeBytes(_ bytes: [UInt8]) {
            guard !writeFailed else { return }
            written += bytes.count
            var offset = 0
            while offset < bytes.count {
                let count = bytes.withUnsafeBytes { buffer in
                    systemWrite(fd, buffer.baseAddress! + offset, buffer.count - offset)
                }
                if count < 0 {
                    if errno == EINTR { continue }
                    writeFailed = true
                    return
                }
                offset += count
            }
        }

        // MARK: Requests not answered yet

        /// The ids of the requests in `message` (one, or a batch's), as pending.
        mutating func noteRequests(in message: JSON) {
            switch message {
            case .array(let elements):
                for element in elements { noteRequests(in: element) }
            case .object(let object):
                guard object["method"]?.stringValue != nil, let id = object["id"] else { return }
                switch id {
                case .string, .int, .double:
                    if pending.count >= Self.maxPending { pending.removeFirst() }
                    pending.append(id)
                default: return  // an id the host refuses (-32600): answered at once
                }
            default:
                return
            }
        }

        /// The requests `message` answers (one response, or a batch's) are no longer pending.
        mutating func noteResponses(in message: JSON) {
            switch message {
            case .array(let elements):
                for element in elements { noteResponses(in: element) }
            case .object(let object):
                guard object["result"] != nil || object["error"] != nil, let id = object["id"],
                    let index = pending.firstIndex(of: id)
                else { return }
                pending.remove(at: index)
            default:
                return
            }
        }

        // MARK: What the client sent

        /// A message the client sent, as a `send`: secrets as placeholders, subscription handles
        /// the host gave as `$ref:`, and strings that a replayer would substitute wrapped.
        mutating func sendForm(_ message: JSON) -> JSON {
            switch message {
            case .array(let elements):
                return .array(elements.map { element in
                    if case .object = element { return sendForm(element) }
                    return sent(element, member: nil)
                })
            case .object(let object):
                var result = JSONObject()
                let method = object["method"]?.stringValue
                for member in object {
                    switch (method, member.key, member.value) {
                    case ("vm.send", "params", .object(let params)):
                        result.append("params", .object(sendParams(params)))
                    case ("vm.send", "params", let params):
                        // By position (an array), or no params at all (a string): the host
                        // refuses it, and the trace masks all of it; so does the recording.
                        result.append("params", secret(params, source: "params"))
                    case ("vm.unsubscribe", "params", .object(var params)):
                        if case .string(let handle)? = params["subscription"], let name = captures[handle] {
                            params["subscription"] = .string("$ref:" + name)
                            result.append("params", sent(.object(params), member: nil, keeping: ["subscription"]))
                        } else {
                            result.append("params", sent(.object(params), member: nil))
                        }
                    default:
                        result.append(member.key, sent(member.value, member: member.key))
                    }
                }
                return .object(result)
            default:
                return sent(message, member: nil)
            }
        }

        /// The params of a `vm.send`, by the trace's rule (``Redaction``, SPEC §8): `vm` and
        /// `input` kept when strings, `value` only when the input is declared plain; every other
        /// member, and `vm` or `input` of another type, is secret. A refused or malformed send
        /// leaks no more than an accepted one.
        private mutating func sendParams(_ params: JSONObject) -> JSONObject {
            var plain = false
            var source = "value"
            if case .string(let input)? = params["input"] {
                plain = redaction.plainInputs.contains(input)
                source = input
            }
            var result = JSONObject()
            for member in params {
                switch (member.key, member.value) {
                case ("vm", .string), ("input", .string):
                    result.append(member.key, sent(member.value, member: member.key))
                case ("value", _) where plain:
                    result.append("value", sent(member.value, member: "value"))
                case ("value", _):
                    result.append("value", secret(member.value, source: source))
                default:
                    result.append(member.key, secret(member.value, source: member.key))
                }
            }
            return result
        }

        /// Every string of `value` as a secret named after `source`.
        private mutating func secret(_ value: JSON, source: String) -> JSON {
            switch value {
            case .string(let text): return .string(secrets.placeholder(for: text, source: source, needed: true))
            case .array(let elements): return .array(elements.map { secret($0, source: source) })
            case .object(let object):
                var result = JSONObject()
                for member in object { result.append(member.key, secret(member.value, source: source)) }
                return .object(result)
            default: return value
            }
        }

        /// A value the client sent: secret members' strings and known secrets as placeholders,
        /// other strings escaped where a replayer would substitute them. `keeping` names members
        /// of this object already in their recorded form.
        private mutating func sent(_ value: JSON, member: String?, keeping: Set<String> = []) -> JSON {
            switch value {
            case .string(let text):
                if let member, redaction.secretMembers.contains(member) {
                    return .string(secrets.placeholder(for: text, source: member, needed: true))
                }
                if let placeholder = secrets.known(text, needed: true) { return .string(placeholder) }
                if text.hasPrefix("$ref:") || text.hasPrefix("$secret:") { return ["$literal": value] }
                return value
            case .array(let elements):
                return .array(elements.map { sent($0, member: nil) })
            case .object(let object):
                var result = JSONObject()
                for item in object {
                    result.append(item.key, keeping.contains(item.key) ? item.value : sent(item.value, member: item.key))
                }
                if object.count == 1, object["$literal"] != nil { return ["$literal": .object(result)] }
                return .object(result)
            default:
                return value
            }
        }

        // MARK: What the host wrote

        /// A message the host wrote, as an `expect` pattern.
        mutating func expectForm(_ message: JSON) -> JSON {
            switch message {
            case .array(let elements):
                return .array(elements.map { expectForm($0) })
            case .object(let object):
                var result = JSONObject()
                let method = object["method"]?.stringValue
                for member in object {
                    switch (member.key, member.value) {
                    case ("result", .object(let value)) where object["id"] != nil:
                        result.append("result", resultForm(value))
                    case ("params", .object(var params)) where method == "vm.changed" || method == "vm.event":
                        if case .string(let handle)? = params["subscription"], let name = captures[handle] {
                            params["subscription"] = .string("$ref:" + name)
                            result.append("params", expected(.object(params), member: nil, keeping: ["subscription"]))
                        } else {
                            result.append("params", expected(.object(params), member: nil))
                        }
                    default:
                        result.append(member.key, expected(member.value, member: member.key))
                    }
                }
                return .object(result)
            default:
                return expected(message, member: nil)
            }
        }

        /// A result: a subscription handle captured, the version and a kind's lists as `$any`.
        private mutating func resultForm(_ object: JSONObject) -> JSON {
            var object = object
            var keep: Set<String> = []
            if object.count == 2, case .string(let handle)? = object["subscription"], case .object? = object["values"] {
                let name = captures[handle] ?? Self.captureName(handle, count: captures.count)
                captures[handle] = name
                object["subscription"] = .string("$capture:" + name)
                keep.insert("subscription")
            }
            if case .object(var info)? = object["serverInfo"], info["version"] != nil {
                info["version"] = "$any"
                object["serverInfo"] = expected(.object(info), member: nil, keeping: ["version"])
                keep.insert("serverInfo")
            }
            if object["vm"] != nil, object["kind"] != nil, object["inputs"] != nil, object["outputs"] != nil {
                object["inputs"] = "$any"
                object["outputs"] = "$any"
                keep.formUnion(["inputs", "outputs"])
            }
            return expected(.object(object), member: nil, keeping: keep)
        }

        static func captureName(_ handle: String, count: Int) -> String {
            let usable = !handle.isEmpty && handle.utf8.count <= 64
                && handle.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || $0.properties.numericType != nil || "_-.".unicodeScalars.contains($0)) }
            return usable ? handle : "subscription\(count + 1)"
        }

        /// A value the host wrote: the app's secret members' strings and known secrets as
        /// placeholders, a string holding a secret as `$any`, pattern-like values as literals.
        private mutating func expected(_ value: JSON, member: String?, keeping: Set<String> = []) -> JSON {
            switch value {
            case .string(let text):
                if let member, appSecretMembers.contains(member), !text.isEmpty {
                    return .string(secrets.placeholder(for: text, source: member, needed: true))
                }
                if let placeholder = secrets.known(text, needed: true) { return .string(placeholder) }
                if secrets.isInside(text) { return "$any" }
                if text == "$any" || text.hasPrefix("$capture:") || text.hasPrefix("$ref:") || text.hasPrefix("$secret:") {
                    return ["$literal": value]
                }
                return value
            case .array(let elements):
                return .array(elements.map { expected($0, member: nil) })
            case .object(let object):
                var result = JSONObject()
                for item in object {
                    result.append(item.key, keeping.contains(item.key) ? item.value : expected(item.value, member: item.key))
                }
                if object["..."] == .bool(true) || (object.count == 1 && object["$literal"] != nil) {
                    return ["$literal": .object(result)]
                }
                return .object(result)
            default:
                return value
            }
        }

        // MARK: The app's lines

        /// An app's line: known secrets as placeholders, placeholders kept; a text holding a
        /// secret inside it is not kept: `"$secret:NAME:inside"` stands for it.
        mutating func appLineForm(_ value: JSON) -> JSON {
            switch value {
            case .string(let text):
                if text.hasPrefix("$secret:") { return value }
                if let placeholder = secrets.known(text) { return .string(placeholder) }
                if let name = secrets.nameInside(text) { return .string("$secret:\(name):inside") }
                return value
            case .array(let elements):
                return .array(elements.map { appLineForm($0) })
            case .object(let object):
                var result = JSONObject()
                for member in object { result.append(member.key, appLineForm(member.value)) }
                return .object(result)
            default:
                return value
            }
        }
    }
}

/// write(2), whichever C library declares it.
private func systemWrite(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
    Glibc.write(fd, bytes, count)
    #else
    Darwin.write(fd, bytes, count)
    #endif
}

// MARK: - Secrets

/// The secrets of a recording, by name: each is the longest value seen of a run of values where
/// each is a prefix or an extension of the longest (text typed or erased one character at a time).
/// A value is written as `"$secret:NAME:N"`: the first N characters (Unicode scalars) of NAME.
struct SecretBook {
    struct Secret {
        var name: String
        var source: String
        var longest: [Unicode.Scalar]
        /// Used in a `send` or an `expect` (not only in the app's lines): a replay needs it.
        var needed = false
    }

    private(set) var secrets: [Secret] = []
    /// The secret each source (an input, a member) last extended.
    private var current: [String: Int] = [:]
    /// Every value seen, by its text: its placeholder and its secret.
    private var placeholders: [String: (text: String, secret: Int)] = [:]

    /// The placeholder of a secret `value` coming from `source` (an input's or a member's name).
    /// The empty string is no secret. `needed`: it goes in a `send` or an `expect`.
    mutating func placeholder(for value: String, source: String, needed: Bool = false) -> String {
        if value.isEmpty { return value }
        if let known = placeholders[value] {
            if needed { secrets[known.secret].needed = true }
            return known.text
        }
        let scalars = Array(value.unicodeScalars)
        let index: Int
        if let at = current[source], secrets[at].longest.starts(with: scalars) {
            index = at
        } else if let at = current[source], scalars.starts(with: secrets[at].longest) {
            index = at
            secrets[at].longest = scalars
        } else {
            index = secrets.count
            secrets.append(Secret(name: uniqueName(for: source), source: source, longest: scalars))
            current[source] = index
        }
        if needed { secrets[index].needed = true }
        let placeholder = "$secret:\(secrets[index].name):\(scalars.count)"
        placeholders[value] = (placeholder, index)
        return placeholder
    }

    /// The placeholder of `text` if it is a secret (or a prefix of one) seen before, of three
    /// characters or more: the first one or two characters typed are no secret of their own, and
    /// masking them wherever they appear (an id `"1"`) would only make a recording hard to read.
    mutating func known(_ text: String, needed: Bool = false) -> String? {
        guard text.unicodeScalars.count >= 3, let known = placeholders[text] else { return nil }
        if needed { secrets[known.secret].needed = true }
        return known.text
    }

    /// Whether `text` holds a secret of four or more characters inside it.
    func isInside(_ text: String) -> Bool { nameInside(text) != nil }

    /// The name of a secret of four or more characters that `text` holds inside it, if any.
    func nameInside(_ text: String) -> String? {
        secrets.first { secret in
            secret.longest.count >= 4 && text.unicodeScalars.count > secret.longest.count
                && text.contains(String(String.UnicodeScalarView(secret.longest)))
        }?.name
    }

    /// `$secret:password (6 characters, from password), …` for the secrets a replay needs (or
    /// those it does not), at most `limit` UTF-8 bytes (`…, and N more`).
    func summary(needed: Bool, limit: Int = .max) -> String {
        let items = secrets.filter { $0.needed == needed }
            .map { "$secret:\($0.name) (\($0.longest.count) characters, from \($0.source))" }
        var text = ""
        for (index, item) in items.enumerated() {
            let more = ", and \(items.count - index) more"
            if text.utf8.count + item.utf8.count + 2 + more.utf8.count > limit {
                return text + more
            }
            text += text.isEmpty ? item : ", " + item
        }
        return text
    }

    private func uniqueName(for source: String) -> String {
        var base = String(String.UnicodeScalarView(source.unicodeScalars.map { scalar in
            scalar.isASCII && (scalar.properties.isAlphabetic || scalar.properties.numericType != nil) ? scalar : "_"
        }.prefix(40)))
        if base.isEmpty { base = "secret" }
        let names = Set(secrets.map(\.name))
        if !names.contains(base) { return base }
        var number = 2
        while names.contains("\(base)_\(number)") { number += 1 }
        return "\(base)_\(number)"
    }
}
