import TodoKinds
import VMHostTesting

/// The endpoints of ``TodoAPI``, for the stub.
enum TodoEndpoint: String, Sendable {
    case list, add, setDone, rename, delete
}

/// A ``TodoAPI`` whose calls wait for the test to answer them.
@HostActor
final class StubTodoAPI: TodoAPI {
    let calls = StubCalls<TodoEndpoint>()

    func list() async throws -> [Todo] { try await calls.perform(.list) }
    func add(title: String) async throws -> Todo { try await calls.perform(.add, ["title": .string(title)]) }
    func setDone(id: String, done: Bool) async throws -> Todo {
        try await calls.perform(.setDone, ["id": .string(id), "done": .bool(done)])
    }
    func rename(id: String, title: String) async throws -> Todo {
        try await calls.perform(.rename, ["id": .string(id), "title": .string(title)])
    }
    func delete(id: String) async throws { try await calls.perform(.delete, ["id": .string(id)], as: Void.self) }
}
