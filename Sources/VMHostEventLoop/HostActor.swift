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
    public static let shared = HostActor()

    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        EventLoop.shared.asUnownedSerialExecutor()
    }
}

extension HostActor {
    /// Runs `operation` as isolated to the host actor, trapping if the caller is not on the host thread.
    ///
    /// For code that the loop calls directly (input handlers, timers), which is on the host thread
    /// but not inside a Swift job.
    public static func assumeIsolated<T>(_ operation: @HostActor () throws -> T) rethrows -> T {
        typealias Isolated = @HostActor () throws -> T
        typealias Plain = () throws -> T
        shared.preconditionIsolated()
        return try withoutActuallyEscaping(operation) { isolated in
            try unsafeBitCast(isolated, to: Plain.self)()
        }
    }
}
