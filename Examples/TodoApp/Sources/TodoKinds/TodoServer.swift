import VMHost

/// The todo app as a server: its options, its kinds on the in-memory backend, its error kinds.
/// Its `main` runs it (`todo-host`); its tests drive the same server in process
/// (`InProcessConnection(server:arguments:)`).
public enum TodoServer {
    public static let server = Server(
        ServerConfiguration(
            name: "todo-host", version: "1.0.0",
            options: [
                OptionSpec("latency-ms", value: "MS", defaultValue: "200", abstract: "How long each backend call takes, on the host's clock."),
                OptionSpec("fail-every", value: "N", defaultValue: "0", abstract: "Fail every N-th backend call as unavailable (0: none)."),
            ],
            errorKinds: TodoFailure.kinds
        ) { environment throws(UsageError) in
            let latency = try environment.arguments.integer("latency-ms") ?? 200
            let failEvery = try environment.arguments.integer("fail-every") ?? 0
            guard latency >= 0, failEvery >= 0 else { throw UsageError("--latency-ms and --fail-every must not be negative") }
            let backend = InMemoryTodoBackend(clock: environment.clock, latency: .milliseconds(latency), failEvery: failEvery)
            return ServedApp(
                kinds: [TodoListViewModel.factory(api: backend), TodoEditorViewModel.factory(api: backend)],
                summary: "in-memory backend, latency \(latency) ms")
        })
}
