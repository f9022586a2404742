@_spi(Transport) import VMHostEventLoop
import VMHostWire

/// A command input (RACCommand, Action): async work a client starts with `vm.send`, answered when
/// it ends with its result, -32004 (a domain failure, also emitted once on `error`), -32800
/// (cancelled) or -32003 (refused). Declared as a stored property of the kind, named by it, and
/// written as `Command` inside the kind (``ViewModel/Command``):
///
/// ```swift
/// let refresh = Command(.latest) { vm in try await vm.load(page: 1) }
/// let add = Command(.ignore, of: String.self, returning: Todo.self) { vm, title in
///     try await vm.api.add(title: title)        // the reply's value: a Todo, described in host.describe
/// }
/// let delete = Command(.ignorePerKey { $0.id }, of: TodoReference.self) { vm, todo in try await vm.remove(todo) }
/// ```
///
/// - The body is handed the view-model; it must not capture it. It runs on the host actor and may
///   await any async code (the kind's methods, free functions, a client's methods, `Task.sleep`)
///   and throw any error: a ``DomainFailure`` fails the run (-32004), `CancellationError` cancels
///   it, anything else is a bug (-32603). No closure needs a typed-throws annotation.
/// - The policy says what a send does while it runs: ``CommandPolicy/latest`` cancels the run,
///   ``CommandPolicy/ignore`` refuses (-32003 `already running`), ``CommandPolicy/ignorePerKey(_:)``
///   refuses only for the same key, ``CommandPolicy/concurrent`` runs side by side.
/// - `check` refuses a well-formed value that is wrong now (an unknown id): `throw .refused("id", "…")`
///   is -32602 naming `params.value.id`; a ``DomainFailure`` it throws refuses the whole value with
///   its message in the view-model's locale. `disabled` says why the command cannot run now, or nil
///   (-32003 with `data: {input, reason}`).
/// - A command declared `returning:` a `Codable` type answers its body's result as the reply's
///   `value`, and its schema is the input's `result` in `host.describe`; any other is answered `{}`.
/// - Cancelling a run is real: its task is cancelled, and nothing it changes afterwards reaches an
///   output.
@HostActor
public final class ViewModelCommand<Owner: AnyObject, Value: InputValue & Sendable, Result>: AnyCommand, DeclaredMember {
    /// The command's name on the wire; empty until the view-model is bound.
    package private(set) var name = ""
    private let declaredSchema: JSON?
    package var valueSchema: JSON { declaredSchema ?? Value.jsonSchema }
    package var kind: InputKind { .command }
    package var describeExtras: JSONObject {
        var extras: JSONObject = ["policy": .string(runs.policy.name)]
        if let resultSchema = resultSchema() { extras.append("result", resultSchema) }
        return extras
    }

    /// True while at least one run runs, as a property (to observe or chain).
    public var isExecuting: Property<Bool> { runs.isExecuting }

    /// True while at least one run runs: read in a `@Derived` output, a source of it
    /// (`@Derived({ $0.refresh.isRunning }) var isRefreshing: Bool`).
    public var isRunning: Bool { runs.isExecuting.value }
    let runs: Runs<Value>
    private var body: (@HostActor (Owner, Value) async throws -> Result)?
    private var check: (@HostActor (Owner, Value) throws -> Void)?
    private var disabled: (@HostActor (Owner, Value) -> String?)?
    // Set once, by the nonisolated initializer, and called on the host actor only: plain closures,
    // which the initializer of a command `returning:` a type makes knowing it.
    private nonisolated(unsafe) let encodeResult: (Result) -> JSON?
    private nonisolated(unsafe) let resultSchema: () -> JSON?
    private weak var owner: Owner?
    /// The context of the view-model being built when the command was made.
    private weak var declaredIn: ViewModelContext?

    /// Nonisolated, and every closure it takes isolated to the host actor by its type: a command is
    /// declared in a stored property's initial value, whose isolation Swift infers from what the
    /// expression calls (SE-0411). A body that awaits a nonisolated function (`Task.sleep`, a free
    /// `async` function, a client's method) makes that expression nonisolated, which an isolated
    /// initializer here would contradict ("default argument cannot be both …"). It runs on the host
    /// thread all the same, as the view-model's initializer does (checked).
    nonisolated init(
        policy: CommandPolicy<Value>, schema: JSON?, check: (@HostActor (Owner, Value) throws -> Void)?,
        disabled: (@HostActor (Owner, Value) -> String?)?, encode: @escaping (Result) -> JSON?,
        resultSchema: @escaping () -> JSON?, body: @escaping @HostActor (Owner, Value) async throws -> Result
    ) {
        (runs, declaredIn) = HostActor.assumeIsolated { (Runs(policy: policy), ViewModelContext.declaring) }
        declaredSchema = schema
        self.check = check
        self.disabled = disabled
        encodeResult = encode
        self.resultSchema = resultSchema
        self.body = body
        HostActor.assumeIsolated { declaredIn?.adopt(self) }
    }

    /// Runs now.
    package var runningCount: Int { runs.running.count }

    /// The schema of the reply's `value` and a value of its type made of placeholders, as JSON; nil
    /// for a command that answers none.
    package var resultSample: (schema: JSON, sample: JSON?)? {
        guard let schema = resultSchema() else { return nil }
        return (schema, OutputSample.of(Result.self))
    }

    package func validate(_ value: JSON) throws(JSONDecodingError) { _ = try Value.read(sent: value) }

    package func refusal(for value: JSON) -> InputError? {
        do throws(InputError) {
            _ = try admit(value)
            return nil
        } catch {
            return error
        }
    }

    /// Decodes `value` and applies the refusals, in the order a send meets them.
    private func admit(_ value: JSON) throws(InputError) -> (value: Value, key: String?) {
        try admit(decoded: try Value.admit(sent: value))
    }

    private func admit(decoded: Value) throws(InputError) -> (value: Value, key: String?) {
        if let owner, let check {
            do { try check(owner, decoded) } catch { throw InputError.refusal(error, locale: runs.context?.locale) }
        }
        let (refusal, key) = runs.admit(decoded)
        if let refusal { throw refusal }
        if let owner, let disabled, let reason = disabled(owner, decoded) { throw .disabled(reason: reason) }
        return (decoded, key)
    }

    @discardableResult
    package func execute(_ value: JSON, completion: @escaping (CommandOutcome) -> Void) throws(InputError) -> CommandExecution {
        let (decoded, key) = try admit(value)
        return start(decoded, key: key, completion: completion)
    }

    /// Starts a run with a value already read, as a send of it would (the test kit's typed sends).
    package func execute(decoded value: Value, completion: @escaping (CommandOutcome) -> Void) throws(InputError) -> CommandExecution {
        let (decoded, key) = try admit(decoded: value)
        return start(decoded, key: key, completion: completion)
    }

    private func start(_ value: Value, key: String?, completion: @escaping (CommandOutcome) -> Void) -> CommandExecution {
        let body = self.body
        let encode = encodeResult
        return runs.start(key: key, body: { [weak owner] in
            guard let owner, let body else { throw CancellationError() }
            return encode(try await body(owner, value))
        }, completion: completion)
    }

    /// Runs the command from inside the host (no caller to answer), as a send would: refused
    /// sends (its policy, `check`, `disabled`) do nothing.
    public func run(_ value: Value) {
        (runs.context ?? declaredIn)?.afterBinding { [weak self] in
            guard let self, let (decoded, key) = try? self.admit(decoded: value) else { return }
            _ = self.start(decoded, key: key) { _ in }
        }
    }

    /// Cancels every run.
    public func cancelAll() { runs.cancelAll() }

    func bind(name: String, owner: AnyObject, context: ViewModelContext) {
        self.name = name
        self.owner = owner as? Owner
        runs.context = context
        runs.inputName = name
        context.declareInput(self)
    }

    func cancelRuns() { runs.cancelAll() }

    func tearDown() {
        body = nil
        check = nil
        disabled = nil
        runs.tearDown()
    }
}

extension ViewModelCommand where Value == NoValue {
    /// Runs the command from inside the host (a child saved: its list reloads).
    public func run() { run(NoValue()) }
}

// MARK: - Declaring

extension ViewModelCommand where Value == NoValue {
    /// `disabled`, handed the value too (a command without a value has none to read).
    fileprivate nonisolated static func ignoringValue(
        _ disabled: (@HostActor (Owner) -> String?)?
    ) -> (@HostActor (Owner, NoValue) -> String?)? {
        guard let disabled else { return nil }
        return { owner, _ in disabled(owner) }
    }
}

extension ViewModelCommand where Value == NoValue, Result == Void {
    /// A command without a value whose body returns nothing (answered `{}`).
    nonisolated public convenience init(
        _ policy: CommandPolicy<NoValue>, disabled: (@HostActor (Owner) -> String?)? = nil,
        _ body: @escaping @HostActor (Owner) async throws -> Void
    ) {
        self.init(
            policy: policy, schema: nil, check: nil, disabled: Self.ignoringValue(disabled),
            encode: { _ in nil }, resultSchema: { nil }, body: { owner, _ in try await body(owner) })
    }
}

extension ViewModelCommand where Value == NoValue, Result: Encodable {
    /// A command without a value whose body's result, of type `result`, is the reply's `value`.
    nonisolated public convenience init(
        _ policy: CommandPolicy<NoValue>, returning result: Result.Type, disabled: (@HostActor (Owner) -> String?)? = nil,
        _ body: @escaping @HostActor (Owner) async throws -> Result
    ) {
        self.init(
            policy: policy, schema: nil, check: nil, disabled: Self.ignoringValue(disabled),
            encode: { JSONValueEncoder.encode($0) }, resultSchema: { OutputSchema.of(Result.self) },
            body: { owner, _ in try await body(owner) })
    }
}

extension ViewModelCommand where Result == Void {
    /// A command that carries a value of `type` and returns nothing (answered `{}`); `schema`
    /// refines the type's schema.
    nonisolated public convenience init(
        _ policy: CommandPolicy<Value>, of type: Value.Type, schema: JSON? = nil,
        check: (@HostActor (Owner, Value) throws -> Void)? = nil, disabled: (@HostActor (Owner, Value) -> String?)? = nil,
        _ body: @escaping @HostActor (Owner, Value) async throws -> Void
    ) {
        self.init(
            policy: policy, schema: schema, check: check, disabled: disabled, encode: { _ in nil }, resultSchema: { nil },
            body: body)
    }
}

extension ViewModelCommand where Result: Encodable {
    /// A command that carries a value of `type` and whose body's result, of type `result`, is the
    /// reply's `value`.
    nonisolated public convenience init(
        _ policy: CommandPolicy<Value>, of type: Value.Type, schema: JSON? = nil, returning result: Result.Type,
        check: (@HostActor (Owner, Value) throws -> Void)? = nil, disabled: (@HostActor (Owner, Value) -> String?)? = nil,
        _ body: @escaping @HostActor (Owner, Value) async throws -> Result
    ) {
        self.init(
            policy: policy, schema: schema, check: check, disabled: disabled, encode: { JSONValueEncoder.encode($0) },
            resultSchema: { OutputSchema.of(Result.self) }, body: body)
    }
}

/// A command seen without its types: what the host dispatches `vm.send` to.
@HostActor
package protocol AnyCommand: AnyInput {
    /// Starts a run with `value`, or refuses (invalid value, `check`, policy, `disabled`).
    /// `completion` is called exactly once, on the host actor, when the run ends.
    @discardableResult
    func execute(_ value: JSON, completion: @escaping (CommandOutcome) -> Void) throws(InputError) -> CommandExecution
    /// Why a send of `value` would be refused now, or nil when it would start. Nothing runs.
    func refusal(for value: JSON) -> InputError?
    /// Runs now.
    var runningCount: Int { get }
    /// Cancels every run.
    func cancelAll()
    /// The schema of the reply's `value` and a sample of it, for the test kit; nil for none.
    var resultSample: (schema: JSON, sample: JSON?)? { get }
}
