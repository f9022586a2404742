import VMHost

/// Which todos the list shows.
public enum TodoFilter: String, Sendable, CaseIterable, Codable, InputValue {
    /// Every todo.
    case all
    /// The todos not done.
    case open
    /// The todos done.
    case done

    func shows(_ todo: Todo) -> Bool {
        switch self {
        case .all: true
        case .open: !todo.done
        case .done: todo.done
        }
    }
}

/// The todo list (`TodoList`): loads the todos, adds, toggles and deletes them, and opens an editor.
///
/// Inputs: `load` (command, `latest`), `add "title"` (command, `ignore`, answers the todo added;
/// an empty or too long title is refused, -32602), `toggle {id}` and `delete {id}` (commands, one
/// at a time per todo; an id not in the list is refused, -32602), `filter` (a field), `edit {id}`
/// (trigger: emits `openEditor`). Outputs: `items` (the todos the filter shows), `remaining` (open
/// todos), `filter`, `loading` (any call in flight), `loadState`/`lastError` (of `load`), events
/// `openEditor {id, title, parent}` (the args of a `TodoEditor`) and `error`.
@HostActor
public final class TodoListViewModel: ViewModel {
    public static let kind = "TodoList"

    /// `{filter?}`: the filter shown first, `all` by default.
    public struct Args: ViewModelArgs {
        public var filter: TodoFilter
        public init(filter: TodoFilter = .all) { self.filter = filter }
        public init(reader: ObjectReader) throws(JSONDecodingError) { filter = try reader.optional("filter", default: .all) }
    }

    @Derived({ $0.todos.filter($0.filter.shows) }) public var items: [Todo]
    @Derived({ $0.todos.count { !$0.done } }) public var remaining: Int
    @Field public var filter = TodoFilter.all
    @Derived({ $0.context.isBusy }) public var loading: Bool
    public let loads = Loads(tracking: \.load, emptyWhen: \.todos.isEmpty)
    public let openEditor = Event<TodoEditorViewModel.Args>()

    public let load = Command(.latest) { vm in vm.todos = try await vm.api.list() }
    public let add = Command(.ignore, of: String.self, returning: Todo.self, check: { _, title throws(InputError) in try TodoTitle.check(title) }) { vm, title in
        let todo = try await vm.api.add(title: TodoTitle.trimmed(title))
        vm.todos.append(todo)
        return todo
    }
    public let toggle = Command(.ignorePerKey { $0.id }, of: TodoReference.self, check: { vm, todo throws(InputError) in _ = try vm.listed(todo) }) { vm, todo in
        vm.replace(try await vm.api.setDone(id: todo.id, done: !(try vm.listed(todo).done)))
    }
    public let delete = Command(.ignorePerKey { $0.id }, of: TodoReference.self, check: { vm, todo throws(InputError) in _ = try vm.listed(todo) }) { vm, todo in
        try await vm.api.delete(id: todo.id)
        vm.todos.removeAll { $0.id == todo.id }
    }
    public let edit = Trigger(of: TodoReference.self) { vm, reference throws(InputError) in
        let todo = try vm.listed(reference)
        vm.openEditor.emit(.init(id: todo.id, title: todo.title, parent: vm.context.handle))
    }

    /// Every todo loaded, whatever the filter: the source of ``items`` and ``remaining``.
    @Tracked var todos: [Todo] = []
    private let api: any TodoAPI

    /// Registers the kind with the host: the todos come from `api`.
    public static func factory(api: any TodoAPI) -> ViewModelFactory { ViewModelFactory { args in TodoListViewModel(args: args, api: api) } }

    public init(args: Args, api: any TodoAPI) {
        self.api = api
        filter = args.filter
    }

    /// The listed todo `reference` names, or a refusal naming `params.value.id`.
    private func listed(_ reference: TodoReference) throws(InputError) -> Todo {
        guard let todo = todos.first(where: { $0.id == reference.id }) else { throw .refused("id", "no todo \"\(reference.id)\" in the list") }
        return todo
    }

    private func replace(_ todo: Todo) {
        if let index = todos.firstIndex(where: { $0.id == todo.id }) { todos[index] = todo }
    }
}
