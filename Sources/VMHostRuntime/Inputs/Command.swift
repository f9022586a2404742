import VMHostEventLoop
import VMHostWire

/// What to do when a command is sent while it runs.
public enum CommandPolicy: Sendable {
    /// Cancel the running execution and start anew (flatMapLatest). Its caller gets -32800.
    case latest
    /// Refuse with -32003 `already running` (RACCommand's default).
    case ignore
    /// Refuse only while an execution with the same key runs (`delete` of the same group);
    /// executions with different keys run side by side.
    case ignorePerKey(@Sendable (JSON) -> String)
    /// Run side by side.
    case concurrent

    var name: String {
        switch self {
        case .latest: "latest"
        case .ignore: "ignore"
        case .ignorePerKey: "ignorePerKey"
        case .concurrent: "concurrent"
        }
    }
}

/// How a command execution ended.
public enum CommandOutcome: Sendable, Equatable {
    case succeeded(JSON?)
    /// A domain failure; also emitted on the view-model's `error` event.
    case failed(DomainError)
    /// Cancelled (by `$/cancelRequest`, a `latest` resend, the view-model's own cancel, or dispose).
    /// Not an error: nothing is emitted.
    case cancelled
    /// An unexpected error (a bug); answered -32603.
    case crashed(String)
}

/// Async work with a result, `isExecuting`, an enabled state with a reason, and a policy for being
/// sent again while it runs (RACCommand / Action).
///
/// Cancellation is real: the execution's task is cancelled (an HTTP request in flight is
/// cancelled with it), `isExecuting` drops at once, the caller is answered -32800 at once, and
/// nothing the body does afterwards is applied, because ``ViewModelContext/perform(_:)`` checks
/// cancellation after every await.
@HostActor
public final class Command<Value: JSONDecodable & Sendable>: AnyInput {
    public let name: String
    /// The schema given at declaration; else `{"type":"null"}`, made when asked.
    private let declaredSchema: JSON?
    public var valueSchema: JSON { declaredSchema ?? NoValue.jsonSchema }
    public let policy: CommandPolicy
    public var kind: InputKind { .command }
    public var describeExtras: JSONObject { ["policy": .string(policy.name)] }

    /// True while at least one execution runs.
    public let isExecuting: Property<Bool>
    /// Why the command cannot run now, or nil when it can. Checked on every send.
    public var disabledReason: () -> String? = { nil }

    private let body: @HostActor (Value) async throws -> JSON?
    private var running: [CommandExecution] = []
    weak var owner: ViewModelContext?

    init(name: String, schema: JSON?, policy: CommandPolicy, body: @escaping @HostActor (Value) async throws -> JSON?) {
        self.name = name
        self.declaredSchema = schema
        self.policy = policy
        self.body = body
        self.isExecuting = Property("isExecuting", false)
    }

    /// Executions running now.
    public var runningCount: Int { running.count }

    /// Starts an execution, or refuses (invalid value, disabled, policy). `completion` is called
    /// exactly once, on the host actor, when the execution ends.
    @discardableResult
    public func execute(_ value: JSON, completion: @escaping (CommandOutcome) -> Void) throws(InputError) -> CommandExecution {
        let decoded: Value
        do throws(JSONDecodingError) { decoded = try Value(json: value, path: "params.value") } catch { throw .invalidValue(error) }
        if owner?.isDisposed == true { throw .disabled(reason: "the view-model is disposed") }
        var key: String?
        switch policy {
        case .ignore:
            if !running.isEmpty { throw .disabled(reason: "already running") }
        case .ignorePerKey(let keyOf):
            key = keyOf(value)
            if running.contains(where: { $0.key == key }) { throw .disabled(reason: "already running for \(key!)") }
        case .latest, .concurrent:
            break
        }
        if let reason = disabledReason() { throw .disabled(reason: reason) }
        if case .latest = policy { cancelAll() }

        let execution = CommandExecution(command: self, key: key, completion: completion)
        running.append(execution)
        isExecuting.value = true
        let body = self.body
        let context = owner
        context?.taskStarted()
        execution.task = EventLoop.startTask { [weak execution] in
            defer { context?.taskEnded() }
            let outcome: CommandOutcome
            do {
                outcome = .succeeded(try await body(decoded))
            } catch is CancellationError {
                outcome = .cancelled
            } catch let error as DomainError {
                outcome = .failed(error)
            } catch {
                outcome = .crashed(String(describing: error))
            }
            execution?.finish(Task.isCancelled ? .cancelled : outcome)
        }
        return execution
    }

    /// Runs the command from inside the host (no caller to answer): refusals are ignored.
    public func run(_ value: JSON = .null) {
        _ = try? execute(value) { _ in }
    }

    /// Cancels every running execution.
    public func cancelAll() {
        for execution in running { execution.cancel() }
    }

    fileprivate func ended(_ execution: CommandExecution, _ outcome: CommandOutcome) {
        running.removeAll { $0 === execution }
        isExecuting.value = !running.isEmpty
        if case .failed(let failure) = outcome {
            let error = failure.reaching(input: name, locale: owner?.locale ?? failure.locale)
            owner?.error.emit(error)
            execution.completion(.failed(error))
        } else {
            execution.completion(outcome)
        }
    }
}

/// One run of a command.
@HostActor
public final class CommandExecution {
    public let key: String?
    fileprivate let completion: (CommandOutcome) -> Void
    fileprivate var task: Task<Void, Never>?
    private weak var command: (any AnyCommandEnding)?
    public private(set) var isFinished = false

    fileprivate init<V>(command: Command<V>, key: String?, completion: @escaping (CommandOutcome) -> Void) {
        self.command = command
        self.key = key
        self.completion = completion
    }

    /// Cancels this run: its task is cancelled, it ends now as `.cancelled`, and nothing it does later is applied.
    public func cancel() {
        guard !isFinished else { return }
        task?.cancel()
        finish(.cancelled)
    }

    fileprivate func finish(_ outcome: CommandOutcome) {
        guard !isFinished else { return }
        isFinished = true
        task = nil
        command?.end(self, outcome)
    }
}

@HostActor
private protocol AnyCommandEnding: AnyObject {
    func end(_ execution: CommandExecution, _ outcome: CommandOutcome)
}

extension Command: AnyCommandEnding {
    fileprivate func end(_ execution: CommandExecution, _ outcome: CommandOutcome) { ended(execution, outcome) }
}

/// A command seen without its value type: what the host dispatches `vm.send` to.
@HostActor
public protocol AnyCommand: AnyInput {
    @discardableResult
    func execute(_ value: JSON, completion: @escaping (CommandOutcome) -> Void) throws(InputError) -> CommandExecution
    func cancelAll()
}

extension Command: AnyCommand {}
