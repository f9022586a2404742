@_spi(Transport) import VMHostEventLoop
import VMHostWire

/// What to do when a command or work is started while it runs; `Value` is what it is started with.
public enum CommandPolicy<Value>: Sendable {
    /// Cancel the running run and start anew (flatMapLatest). A cancelled command's caller gets -32800.
    case latest
    /// Refuse with -32003 `already running` (RACCommand's default); a work started again is not started.
    case ignore
    /// Refuse only while a run with the same key runs (`delete` of the same group); runs with
    /// different keys run side by side. The key is read from the value: `.ignorePerKey { $0.groupId }`.
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

/// How a run of a command or work ended.
public enum CommandOutcome: Sendable, Equatable {
    /// It ended with this result (the reply's `value`; nil for none).
    case succeeded(JSON?)
    /// A domain failure; also emitted on the view-model's `error` event.
    case failed(DomainError)
    /// Cancelled (by `$/cancelRequest`, a `latest` restart, the view-model's own cancel, or dispose).
    /// Not an error: nothing is emitted.
    case cancelled
    /// An unexpected error (a bug); answered -32603.
    case crashed(String)
}

/// The runs of one command or work: its policy, `isExecuting`, and how each run starts and ends.
///
/// A run is a task on the host actor. Cancelling it is real: the task is cancelled (a backend call
/// in flight is cancelled with it), the run ends at once as cancelled, and whatever the task does
/// afterwards changes no output (``Property/value`` drops the writes of a cancelled task).
@HostActor
final class Runs<Value: Sendable> {
    let policy: CommandPolicy<Value>
    /// True while at least one run runs.
    let isExecuting = Property(false)
    private(set) var running: [CommandExecution] = []
    weak var context: ViewModelContext?
    /// The name the `error` event's `input` carries: the command's; nil for a work.
    var inputName: String?
    /// Whether a `latest` restart keeps `isExecuting` up throughout (work, whose runs no caller
    /// waits for). A command's restart ends the replaced run first, flags and reply included, as
    /// SPEC §6 has a cancelled request's flags drop before its -32800.
    var restartsInPlace = false
    /// Whether a run counts in the view-model's activity (`loading`): not a listener's, which runs
    /// as long as the view-model.
    var countsInActivity = true
    /// Told of every run's end, before its flags and its caller (a view-model's ``LoadTracker``).
    var endObservers: [(CommandExecution, CommandOutcome) -> Void] = []

    init(policy: CommandPolicy<Value>) {
        self.policy = policy
    }

    /// Why a run with `value` cannot start now, or nil when it can; the key it runs under.
    func admit(_ value: Value) -> (refusal: InputError?, key: String?) {
        if context?.isDisposed == true { return (.disabled(reason: "the view-model is disposed"), nil) }
        if context?.isDescribing == true { return (.disabled(reason: "the kind is being described"), nil) }
        switch policy {
        case .ignore:
            if !running.isEmpty { return (.disabled(reason: "already running"), nil) }
        case .ignorePerKey(let keyOf):
            let key = keyOf(value)
            if running.contains(where: { $0.key == key }) { return (.disabled(reason: "already running for \(key)"), key) }
            return (nil, key)
        case .latest, .concurrent:
            break
        }
        return (nil, nil)
    }

    /// Starts a run of `body` under `key`; `completion` is called once, on the host actor, when it
    /// ends (after `isExecuting` and the `error` event).
    func start(
        key: String?, body: @escaping @HostActor () async throws -> JSON?,
        completion: @escaping (CommandOutcome) -> Void
    ) -> CommandExecution {
        let run = CommandExecution(key: key, completion: completion)
        run.ending = { [weak self] run, outcome in self?.ended(run, outcome) }
        if case .latest = policy {
            // A restart carries on the activity of the run it replaces (no `loading` blink).
            if running.contains(where: \.holdsActivity) {
                run.holdsActivity = true
                context?.activity.add(1)
            }
            let replaced = running
            if restartsInPlace { running.append(run) }
            for old in replaced { old.cancel() }
        }
        if !running.contains(where: { $0 === run }) { running.append(run) }
        isExecuting.set(true)
        let context = self.context
        let locale = context?.locale ?? .en
        let inputName = self.inputName
        let countsInActivity = self.countsInActivity
        context?.taskStarted()
        run.task = EventLoop.startTask(group: context?.workGroup) { [weak run] in
            defer { context?.taskEnded() }
            // The activity counts from when the body runs (SPEC §6: `loading` follows the work in flight).
            if let run, countsInActivity, !run.holdsActivity, !run.isFinished {
                run.holdsActivity = true
                context?.activity.add(1)
            }
            let outcome: CommandOutcome
            do {
                outcome = .succeeded(try await body())
            } catch is CancellationError {
                outcome = .cancelled
            } catch let failure as any DomainFailure {
                var error = failure.domainError(in: locale)
                error.input = inputName
                outcome = .failed(error)
            } catch {
                outcome = .crashed(String(describing: error))
            }
            run?.finish(Task.isCancelled ? .cancelled : outcome)
        }
        return run
    }

    /// Cancels every run.
    func cancelAll() {
        for run in running { run.cancel() }
    }

    private func ended(_ run: CommandExecution, _ outcome: CommandOutcome) {
        running.removeAll { $0 === run }
        // The run's activity ends with it, before its flags and its caller's answer (SPEC §6).
        if run.holdsActivity { context?.activity.add(-1) }
        for observer in endObservers { observer(run, outcome) }
        isExecuting.set(!running.isEmpty)
        if case .failed(let error) = outcome { context?.error.emitUnchecked(error) }
        run.completion(outcome)
    }

    func tearDown() {
        endObservers = []
        isExecuting.tearDown()
    }
}

/// One run of a command or work.
@HostActor
package final class CommandExecution {
    /// The key it runs under (``CommandPolicy/ignorePerKey(_:)``), if any.
    package let key: String?
    fileprivate let completion: (CommandOutcome) -> Void
    fileprivate var task: Task<Void, Never>?
    fileprivate var ending: ((CommandExecution, CommandOutcome) -> Void)?
    /// Whether it has ended.
    package private(set) var isFinished = false
    /// Whether it counts in its view-model's activity.
    var holdsActivity = false

    fileprivate init(key: String?, completion: @escaping (CommandOutcome) -> Void) {
        self.key = key
        self.completion = completion
    }

    /// Cancels this run: its task is cancelled, it ends now as cancelled, and nothing it does later
    /// changes an output.
    package func cancel() {
        guard !isFinished else { return }
        task?.cancel()
        finish(.cancelled)
    }

    fileprivate func finish(_ outcome: CommandOutcome) {
        guard !isFinished else { return }
        isFinished = true
        task = nil
        let ending = self.ending
        self.ending = nil
        ending?(self, outcome)
    }
}
