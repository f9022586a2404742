import VMHost

/// What the app's view-models ask of its backend. The server implements it with
/// ``InMemoryTodoBackend``; tests with a stub (`StubCalls`). Failures are ``TodoFailure``s.
@HostActor
public protocol TodoAPI: AnyObject {
    /// Every todo, in creation order.
    func list() async throws -> [Todo]
    /// Adds an open todo titled `title`; answers it with its id.
    func add(title: String) async throws -> Todo
    /// Marks the todo `id` done or open; answers it as stored.
    func setDone(id: String, done: Bool) async throws -> Todo
    /// Renames the todo `id`; answers it as stored.
    func rename(id: String, title: String) async throws -> Todo
    /// Deletes the todo `id`.
    func delete(id: String) async throws
}

/// A backend held in memory, with a latency and failures on the host's clock, so that a client
/// can see loading states and error handling, and a test can make both deterministic
/// (`--clock manual`).
@HostActor
public final class InMemoryTodoBackend: TodoAPI {
    private let clock: any HostClock
    /// How long every call takes, on the host's clock.
    public var latency: Duration
    /// Every `failEvery`-th call fails as ``TodoFailure/unavailable`` (0: none fail).
    public var failEvery: Int
    private var todos: [Todo]
    private var nextID = 0
    private var callCount = 0

    /// A backend holding `todos`, answering after `latency`, failing every `failEvery`-th call.
    public init(clock: any HostClock, latency: Duration = .milliseconds(200), failEvery: Int = 0, todos: [Todo] = InMemoryTodoBackend.sample) {
        self.clock = clock
        self.latency = latency
        self.failEvery = failEvery
        self.todos = todos
        nextID = todos.count
    }

    /// Three todos to start with.
    public static let sample = [
        Todo(id: "t1", title: "Buy milk"), Todo(id: "t2", title: "Call the bank", done: true), Todo(id: "t3", title: "Water the plants"),
    ]

    /// Every todo, after the latency.
    public func list() async throws -> [Todo] {
        try await answer()
        return todos
    }

    /// Adds an open todo with the next id, after the latency.
    public func add(title: String) async throws -> Todo {
        try await answer()
        nextID += 1
        let todo = Todo(id: "t\(nextID)", title: title)
        todos.append(todo)
        return todo
    }

    /// Marks a todo done or open, after the latency; an unknown id is a `business` error.
    public func setDone(id: String, done: Bool) async throws -> Todo {
        try await answer()
        guard let index = todos.firstIndex(where: { $0.id == id }) else { throw Self.notFound(id) }
        todos[index].done = done
        return todos[index]
    }

    /// Renames a todo, after the latency; an unknown id is a `business` error.
    public func rename(id: String, title: String) async throws -> Todo {
        try await answer()
        guard let index = todos.firstIndex(where: { $0.id == id }) else { throw Self.notFound(id) }
        todos[index].title = title
        return todos[index]
    }

    /// Deletes a todo, after the latency; an unknown id is a `business` error.
    public func delete(id: String) async throws {
        try await answer()
        guard let index = todos.firstIndex(where: { $0.id == id }) else { throw Self.notFound(id) }
        todos.remove(at: index)
    }

    /// Waits the latency, then fails the call if it is a failing one.
    private func answer() async throws {
        callCount += 1
        let failing = failEvery > 0 && callCount % failEvery == 0
        try await clock.sleep(for: latency)
        if failing { throw TodoFailure.unavailable }
    }

    private static func notFound(_ id: String) -> TodoFailure {
        TodoFailure.notFound(id)
    }
}

/// How the todo service fails: the app's own error kinds, with its own (English) messages.
public enum TodoFailure: DomainFailure, Equatable {
    /// The service did not answer (HTTP 503).
    case unavailable
    /// No todo has this id.
    case notFound(String)

    public func domainError(in locale: AppLocale) -> DomainError {
        switch self {
        case .unavailable:
            DomainError(kind: "unavailable", code: 503, message: "The todo list is unavailable. Try again.", detail: "the todo service answered 503")
        case .notFound(let id):
            DomainError(kind: "notFound", code: "NOT_FOUND", message: "This todo is gone.", detail: "no todo \(id)")
        }
    }

    /// Every kind, for the server's configuration (the `error` schema in `host.describe`).
    public static let kinds = ["unavailable", "notFound"]
}
