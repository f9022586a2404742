import VMHostEventLoop
import VMHostWire

/// A view-model's in-flight counter (ActivityIndicator): ``isActive`` is `count > 0`.
@HostActor
public final class ActivityCounter {
    public private(set) var count = 0 {
        didSet { isActive.value = count > 0 }
    }
    /// True while at least one tracked operation runs. Bind an output to it (`loading`).
    public let isActive = Property("activity", false)

    init() {}

    /// Counts `operation` as in flight until it ends, however it ends (cancellation included).
    ///
    /// Inside a command's execution the count also drops the moment that execution ends: a
    /// cancelled execution's operation may take a while to unwind (a backend reply due later on the
    /// clock), but its activity ends with it, before its caller is answered -32800 (SPEC §6).
    public func track<T>(_ operation: @HostActor () async throws -> T) async throws -> T {
        let lease = ActivityLease(self)
        CommandExecution.current?.hold(lease)
        defer { lease.release() }
        return try await operation()
    }

    fileprivate func add(_ delta: Int) { count += delta }
}

/// One operation counted by an ``ActivityCounter``: released once, by whichever comes first, the
/// operation's end or the end of the command execution it runs in.
@HostActor
final class ActivityLease {
    private var counter: ActivityCounter?

    init(_ counter: ActivityCounter) {
        self.counter = counter
        counter.add(1)
    }

    var isReleased: Bool { counter == nil }

    func release() {
        counter?.add(-1)
        counter = nil
    }
}
