// The todo app's executable: its two kinds on the in-memory backend, served on stdio by the
// framework's server (which owns the command line, framing, signals, the trace and the logs).
import TodoKinds
import VMHost

Server(
    name: "todo-host", version: "1.0.0",
    options: [
        OptionSpec("latency-ms", value: "N", defaultValue: "200", abstract: "How long each backend call takes, on the host's clock."),
        OptionSpec("fail-every", value: "N", defaultValue: "0", abstract: "Fail every N-th backend call with a server error (0: none)."),
    ]
) { environment throws(UsageError) in
    let latency = try environment.arguments.integer("latency-ms") ?? 200
    let failEvery = try environment.arguments.integer("fail-every") ?? 0
    guard latency >= 0, failEvery >= 0 else { throw UsageError("--latency-ms and --fail-every must not be negative") }
    let backend = InMemoryTodoBackend(clock: environment.clock, latency: .milliseconds(latency), failEvery: failEvery)
    return ServedApp(
        kinds: [TodoListViewModel.factory(api: backend), TodoEditorViewModel.factory(api: backend)],
        summary: "in-memory backend, latency \(latency) ms")
}.run()
