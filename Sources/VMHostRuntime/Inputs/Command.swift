import VMHostEventLoop
import VMHostWire

/// What to do when a command is sent while it runs; `Value` is the command's value type.
public enum CommandPolicy<Value>: Sendable {
    /// Cancel the running execution and start anew (flatMapLatest). Its caller gets -32800.
    case latest
    /// Refuse with -32003 `already running` (RACCommand's default).
    case ignore
    /// Refuse only while an execution with the same key runs (`delete` of the same group);
    /// executions with different keys run side by side. The key is read from the decoded value:
    /// `.ignorePerKey { $0.groupId }`.
    case ignorePerKey(@Sendable (Value) -> String)
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
public final class Command<Value: InputValue & Sendable>: AnyInput {
    public let name: String
    /// The schema given at declaration, if any; else the value type's, made when asked.
    private let declaredSchema: JSON?
    public var valueSchema: JSON { declaredSchema ?? Value.jsonSchema }
    public let policy: CommandPolicy<Value>
    public var kind: InputKind { .command }
    public var describeExtras: JSONObject { ["policy": .string(policy.name)] }

    /// True while at least one execution runs.
    public let isExecuting: Property<Bool>
    /// Why the command cannot run now with this value, or nil when it can: checked on every send,
    /// after the value decoded and the policy let it through; a reason is answered -32003.
    /// A command without a value gets ``NoValue``: `save.disabledReason = { [unowned self] _ in … }`.
    public var disabledReason: (Value) -> String? = { _ in nil }
    /// Refuses a value that is well-formed but wrong now (an id not in the list): throw
    /// ``InputError/refused(_:_:)``, answered -32602 naming the member. Checked on every send right
    /// after the value decoded, before the policy and ``disabledReason``.
    public var check: (Value) throws(InputError) -> Void = { _ in }

    private let body: @HostActor (Value) async throws -> JSON?
    private var running: [CommandExecution] = []
    weak var owner: ViewModelContext?

    init(name: String, schema: JSON?, policy: CommandPolicy<Value>, body: @escaping @HostActor (Value) async throws -> JSON?) {
        self.name = name
        self.declaredSchema = schema
        self.policy = policy
        self.body = body
        self.isExecuting = Property("isExecuting", false)
    }

    /// Executions running now.
    public var runningCount: Int { running.count }

    public func validate(_ value: JSON) throws(JSONDecodingError) { _ = try Value(json: value, path: "params.value") }

    /// Why a send of `value` would be refused now (invalid value, disposed, policy, disabled), or
    /// nil when it would start. Nothing runs.
    public func refusal(for value: JSON) -> InputError? {
        do throws(InputError) {
            _ = try admit(value)
            return nil
        } catch {
            return error
        }
    }

    /// Decodes `value` and applies the refusals, in the order a send meets them.
    private func admit(_ value: JSON) throws(InputError) -> (value: Value, key: String?) {
        let decoded: Value
        do throws(JSONDecodingError) { decoded = try Value(json: value, path: "params.value") } catch { throw .invalidValue(error) }
        try check(decoded)
        if owner?.isDisposed == true { throw .disabled(reason: "the view-model is disposed") }
        if owner?.isDescribing == true { throw .disabled(reason: "the kind is being described") }
        var key: String?
        switch policy {
        case .ignore:
            if !running.isEmpty { throw .disabled(reason: "already running") }
        case .ignorePerKey(let keyOf):
            let runningKey = keyOf(decoded)
            key = runningKey
            if running.contains(where: { $0.key == runningKey }) { throw .disabled(reason: "already running for \(runningKey)") }
        case .latest, .concurrent:
            break
        }
        if let reason = disabledReason(decoded) { throw .disabled(reason: reason) }
        return (decoded, key)
    }

    /// Starts an execution, or refuses (invalid value, disabled, policy). `completion` is called
    /// exactly once, on the host actor, when the execution ends.
    @discardableResult
    public func execute(_ value: JSON, completion: @escaping (CommandOutcome) -> Void) throws(InputError) -> CommandExecution {
        let (decoded, key) = try admit(value)
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
        if case .failed(var error) = outcome {
            error.input = name
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
    /// Why a send of `value` would be refused now, or nil when it would start. Nothing runs.
    func refusal(for value: JSON) -> InputError?
    /// Executions running now.
    var runningCount: Int { get }
    func cancelAll()
}

extension Command: AnyCommand {}
