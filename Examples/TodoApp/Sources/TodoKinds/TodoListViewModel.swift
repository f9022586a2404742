import VMHost

/// Which todos the list shows.
public enum TodoFilter: String, Sendable, CaseIterable, JSONEncodable, InputValue {
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
/// Inputs: `load` (command, `latest`), `add "title"` (command, `ignore`; an empty or too long title
/// is refused, -32602), `toggle {id}` and `delete {id}` (commands, one at a time per todo; an id
/// not in the list is refused, -32602), `filter` (value), `edit {id}` (trigger: emits `edit`).
/// Outputs: `items` (the todos the filter shows), `remaining` (open todos), `filter`, `loading`
/// (any call in flight), `isEmpty`, events `edit {id, title, parent}` (the args of a
/// `TodoEditor`) and `error`.
@HostActor
public final class TodoListViewModel: ViewModel {
    public static let kind = "TodoList"

    /// `{filter?}`: the filter shown first, `all` by default.
    public struct Args: ViewModelArgs {
        /// The filter shown first.
        public var filter: TodoFilter

        /// Args showing `filter`.
        public init(filter: TodoFilter = .all) { self.filter = filter }

        /// Reads `{filter?}`; an unknown member or filter fails naming it.
        public init(reader: ObjectReader) throws(JSONDecodingError) {
            filter = try reader.optional("filter", default: .all)
        }
    }

    /// Where its members are declared.
    public let context: ViewModelContext
    /// The todos the filter shows, in creation order.
    public let items: Property<[Todo]>
    /// How many todos are not done, whatever the filter.
    public let remaining: Property<Int>
    /// The filter shown.
    public let filter: Property<TodoFilter>
    /// True while any backend call of this list is in flight.
    public let loading: Property<Bool>
    /// True once a load found no todo at all.
    public let isEmpty: Property<Bool>
    /// Asks the UI to open an editor: the args of a `TodoEditor`.
    public let edit: Event<TodoEditorViewModel.Args>

    private let api: any TodoAPI
    /// Every todo loaded, whatever the filter.
    private var todos: [Todo] = [] {
        didSet { show() }
    }
    private var loadCommand: Command<NoValue>?

    /// Registers the kind with the host: the todos come from `api`.
    public static func factory(api: any TodoAPI) -> ViewModelFactory {
        ViewModelFactory(TodoListViewModel.self) { args, context in TodoListViewModel(args: args, context: context, api: api) }
    }

    /// Declares the list's members in `context`; its todos come from `api`.
    public init(args: Args, context: ViewModelContext, api: any TodoAPI) {
        self.context = context
        self.api = api
        items = context.property("items", [Todo]())
        remaining = context.property("remaining", 0)
        filter = context.property("filter", args.filter)
        loading = context.property("loading", false)
        isEmpty = context.property("isEmpty", false)
        edit = context.event("edit")

        loadCommand = context.command("load", policy: .latest) { [unowned self] in
            todos = try await self.context.perform { [api] in try await api.list() }
            isEmpty.value = todos.isEmpty
            return nil
        }
        let add = context.command("add", of: String.self, policy: .ignore) { [unowned self] title in
            let todo = try await self.context.perform { [api] in try await api.add(title: TodoTitle.trimmed(title)) }
            todos.append(todo)
            return todo.json
        }
        add.check = { title throws(InputError) in
            if let problem = TodoTitle.problem(title) { throw .refused("", problem) }
        }
        let toggle = context.command("toggle", of: TodoReference.self, policy: .ignorePerKey { $0.id }) { [unowned self] reference in
            let done = !(try listed(reference).done)
            let stored = try await self.context.perform { [api] in try await api.setDone(id: reference.id, done: done) }
            replace(stored)
            return nil
        }
        toggle.check = { [unowned self] reference throws(InputError) in _ = try listed(reference) }
        let delete = context.command("delete", of: TodoReference.self, policy: .ignorePerKey { $0.id }) { [unowned self] reference in
            try await self.context.perform { [api] in try await api.delete(id: reference.id) }
            todos.removeAll { $0.id == reference.id }
            return nil
        }
        delete.check = { [unowned self] reference throws(InputError) in _ = try listed(reference) }
        context.value("filter", of: TodoFilter.self) { [unowned self] in
            filter.value = $0
            show()
        }
        context.trigger("edit", of: TodoReference.self) { [unowned self] reference throws(InputError) in
            let todo = try listed(reference)
            edit.emit(.init(id: todo.id, title: todo.title, parent: self.context.handle))
        }
        loading.bind(to: context.activity.isActive)
    }

    /// Loads the list again from inside the host (an editor saved), cancelling a load in flight.
    public func reload() {
        loadCommand?.run()
    }

    /// The listed todo `reference` names, or a refusal naming `params.value.id`.
    private func listed(_ reference: TodoReference) throws(InputError) -> Todo {
        guard let todo = todos.first(where: { $0.id == reference.id }) else {
            throw .refused("id", "no todo \"\(reference.id)\" in the list")
        }
        return todo
    }

    private func replace(_ todo: Todo) {
        if let index = todos.firstIndex(where: { $0.id == todo.id }) { todos[index] = todo }
    }

    private func show() {
        items.value = todos.filter(filter.value.shows)
        remaining.value = todos.count { !$0.done }
    }
}
