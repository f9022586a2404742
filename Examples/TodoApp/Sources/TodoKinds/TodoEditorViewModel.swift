import VMHost

/// The editor of one todo's title (`TodoEditor`), opened from a list's `openEditor` event.
///
/// Inputs: `title` (a field: the text typed), `save` (command, `ignore`, answers the todo as
/// stored; disabled, -32003, while the title is empty, too long or unchanged), `cancel` (trigger).
/// Outputs: `title`, `canSave`, `isSaving`, events `saved` (the todo as stored), `dismiss` and
/// `error`. After a save the `parent` list, if it still exists, reloads.
@HostActor
public final class TodoEditorViewModel: ViewModel {
    public static let kind = "TodoEditor"

    /// `{id, title, parent?}`: the todo edited, its current title, and the list to reload.
    public struct Args: ViewModelArgs, Equatable, Codable {
        public var id: String
        public var title: String
        public var parent: String?
        public init(id: String, title: String, parent: String? = nil) { (self.id, self.title, self.parent) = (id, title, parent) }
        public init(reader: ObjectReader) throws(JSONDecodingError) {
            id = try reader.required("id", .nonEmpty)
            title = try reader.required("title")
            parent = try reader.optional("parent")
        }
    }

    @Field public var title = ""
    @Derived({ $0.problem() == nil }) public var canSave: Bool
    @Derived({ $0.save.isRunning }) public var isSaving: Bool
    public let saved = Event<Todo>()
    public let dismiss = Event<NoValue>()
    public let save = Command(.ignore, returning: Todo.self, disabled: { $0.problem() }) { vm in try await vm.store() }
    public let cancel = Trigger { vm in
        vm.save.cancelAll()
        vm.dismiss.emit()
    }

    private let args: Args
    private let api: any TodoAPI

    /// Registers the kind with the host: saves go to `api`.
    public static func factory(api: any TodoAPI) -> ViewModelFactory { ViewModelFactory { args in TodoEditorViewModel(args: args, api: api) } }

    public init(args: Args, api: any TodoAPI) {
        self.args = args
        self.api = api
        title = args.title
    }

    /// Why the title cannot be saved, or nil when it can.
    private func problem() -> String? {
        if let problem = TodoTitle.problem(title) { return problem }
        return TodoTitle.trimmed(title) == TodoTitle.trimmed(args.title) ? "the title is unchanged" : nil
    }

    private func store() async throws -> Todo {
        let stored = try await api.rename(id: args.id, title: TodoTitle.trimmed(title))
        saved.emit(stored)
        dismiss.emit()
        context.viewModel(args.parent ?? "", as: TodoListViewModel.self)?.load.run()
        return stored
    }
}
