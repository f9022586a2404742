import VMHostEventLoop
import VMHostWire

/// The changes of a property, shaped on the host's clock before they start work: the operators of
/// a search box, declared in the kind's initializer.
///
/// ```swift
/// $query.debounce(for: .milliseconds(300)).removeDuplicates().run(search)
/// ```
///
/// A stream starts with the next change of its property (not its current value). Its timers run
/// on the view-model's clock (a manual clock in tests) and end with the view-model. Closures given
/// to ``map(_:)`` and ``filter(_:)`` are kept as long as the view-model: they must not capture it.
@HostActor
public final class ValueStream<Value> {
    private var subscribers: [@HostActor (Value) -> Void] = []
    private weak var context: ViewModelContext?

    init(context: ViewModelContext?) {
        self.context = context
    }

    func send(_ value: Value) {
        for subscriber in subscribers { subscriber(value) }
    }

    func subscribe(_ subscriber: @escaping @HostActor (Value) -> Void) {
        subscribers.append(subscriber)
    }

    private func derived<Output>(_ connect: (ValueStream<Output>) -> @HostActor (Value) -> Void) -> ValueStream<Output> {
        let stream = ValueStream<Output>(context: context)
        subscribe(connect(stream))
        return stream
    }

    /// Each value once `interval` has passed without a newer one (the last keystroke of a burst).
    public func debounce(for interval: Duration) -> ValueStream<Value> {
        let context = self.context
        var timer: ClockTimer?
        return derived { output in
            { value in
                guard let context else { return }
                if let pending = timer { context.cancel(pending) }
                timer = context.schedule(after: interval) {
                    timer = nil
                    output.send(value)
                }
            }
        }
    }

    /// At most one value per `interval`, as `sending` chooses (RxSwift's `throttle(_:latest:)`,
    /// Combine's `throttle(for:latest:)`, lodash's leading and trailing edges):
    ///
    /// - ``ThrottleSending/firstAndLast`` (the default): a value that comes while no interval runs
    ///   is sent at once and starts one; the latest value received during it is sent when it ends,
    ///   and starts the next. A burst sends its first and its last value, and one per interval in
    ///   between (a typing indicator that follows the text).
    /// - ``ThrottleSending/first``: the value that starts an interval, at once; the others received
    ///   during it are dropped (a button that must not fire twice in a row).
    /// - ``ThrottleSending/last``: nothing at once; the latest value received during the interval,
    ///   when it ends (a draft saved at most every few seconds, with what it then holds).
    ///
    /// ```swift
    /// $text.throttle(for: .seconds(2), sending: .first).run(announceTyping)   // at most one "typing" per 2 s
    /// ```
    ///
    /// The intervals run on the view-model's clock and end with it.
    public func throttle(for interval: Duration, sending: ThrottleSending = .firstAndLast) -> ValueStream<Value> {
        let context = self.context
        var intervalRuns = false
        var latest: Value?
        return derived { output in
            @HostActor func startInterval() {
                guard let context else { return }
                intervalRuns = true
                context.schedule(after: interval) {
                    intervalRuns = false
                    guard let value = latest else { return }
                    latest = nil
                    output.send(value)
                    // Sent at the end of one interval: the next starts now (one value per interval).
                    if sending == .firstAndLast { startInterval() }
                }
            }
            return { value in
                if intervalRuns {
                    if sending != .first { latest = value }
                    return
                }
                if sending == .last {
                    latest = value
                } else {
                    output.send(value)
                }
                startInterval()
            }
        }
    }

    /// Each value transformed.
    public func map<Output>(_ transform: @escaping @HostActor (Value) -> Output) -> ValueStream<Output> {
        derived { output in { output.send(transform($0)) } }
    }

    /// The values that pass `isIncluded`.
    public func filter(_ isIncluded: @escaping @HostActor (Value) -> Bool) -> ValueStream<Value> {
        derived { output in { if isIncluded($0) { output.send($0) } } }
    }

    /// Starts a run of `work` with each value.
    public func run<Owner>(_ work: ViewModelWork<Owner, Value>) {
        subscribe { work.run($0) }
    }
}

/// Which values of an interval ``ValueStream/throttle(for:sending:)`` sends.
public enum ThrottleSending: Sendable, Equatable {
    /// The first, at once, and the latest of the interval when it ends (leading and trailing).
    case firstAndLast
    /// The first, at once; the rest of the interval is dropped (leading).
    case first
    /// The latest of the interval, when it ends; nothing at once (trailing).
    case last
}

extension ValueStream where Value: Equatable {
    /// Each value that differs from the one before it (distinctUntilChanged).
    public func removeDuplicates() -> ValueStream<Value> {
        var last: Value?
        return derived { output in
            { value in
                guard value != last else { return }
                last = value
                output.send(value)
            }
        }
    }
}

extension Property {
    /// The values this property takes from now on, one per change.
    public var changes: ValueStream<Value> {
        let stream = ValueStream<Value>(context: ViewModelContext.declaring ?? owner)
        observe { stream.send($0) }
        return stream
    }

    /// ``ValueStream/debounce(for:)`` of ``changes``.
    public func debounce(for interval: Duration) -> ValueStream<Value> { changes.debounce(for: interval) }

    /// ``ValueStream/throttle(for:sending:)`` of ``changes``.
    public func throttle(for interval: Duration, sending: ThrottleSending = .firstAndLast) -> ValueStream<Value> {
        changes.throttle(for: interval, sending: sending)
    }

    /// ``ValueStream/removeDuplicates()`` of ``changes`` (a property's changes are distinct already;
    /// after a `map` they may not be).
    public func removeDuplicates() -> ValueStream<Value> { changes.removeDuplicates() }
}

extension ViewModel {
    /// Calls `action` with the view-model and each value of `stream`.
    public func observe<Value>(_ stream: ValueStream<Value>, _ action: @escaping @HostActor (Self, Value) -> Void) {
        stream.subscribe { [weak self] value in
            guard let self else { return }
            action(self, value)
        }
    }
}
