/// The global actor of everything that holds state in the host: the JSON-RPC engine, the view-models,
/// their properties and commands, the clocks and the embedded backend.
///
/// Its executor is the one host thread of ``EventLoop``. Because that thread also reads stdin, a
/// request is handled from the moment its bytes are read to the moment its reply is queued without
/// a thread hop, and the work it starts (a command's task, a timer) runs on the same thread, in order.
///
/// - Important: Code isolated to `HostActor` must never block: the host thread is shared by every
///   view-model. Blocking I/O (HTTP) awaits a continuation that is resumed from another thread.
@globalActor
public actor HostActor {
    /// The one instance: `@HostActor` code runs on it.
    public static let shared = HostActor()

    /// The host thread (``EventLoop``).
    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        EventLoop.shared.asUnownedSerialExecutor()
    }
}

extension HostActor {
    /// Runs `operation` as isolated to the host actor, trapping if the caller is not on the host thread.
    ///
    /// For code that the loop calls directly (input handlers, timers), which is on the host thread
    /// but not inside a Swift job.
    @_spi(Transport)
    public static func assumeIsolated<T>(_ operation: @HostActor () throws -> T) rethrows -> T {
        typealias Isolated = @HostActor () throws -> T
        typealias Plain = () throws -> T
        shared.preconditionIsolated()
        return try withoutActuallyEscaping(operation) { isolated in
            try unsafeBitCast(isolated, to: Plain.self)()
        }
    }
}

extension HostActor {
    /// Starts a task on the host actor that nothing awaits: work the current code hands off and
    /// does not wait for (a deletion in the background when a session ends, a write when an
    /// object goes away).
    ///
    /// Unlike `Task { @HostActor in … }`, the task prefers the host thread as its task executor:
    /// its steps are posted to the host thread by whoever releases them, never through the
    /// runtime's global pool, and the host counts it until it first runs, so that a manual clock's
    /// advance and a test's settling see what it does, as deterministic as a command's work. It belongs to the work of the view-model under test that starts it, if any.
    @discardableResult
    public static func startTask<T: Sendable>(_ body: @escaping @HostActor () async -> T) -> Task<T, Never> {
        EventLoop.startTask(group: WorkGroup.current, body)
    }
}
