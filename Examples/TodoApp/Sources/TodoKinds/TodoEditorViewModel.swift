import VMHost

/// The editor of one todo's title (`TodoEditor`), opened from a list's `edit` event.
///
/// Inputs: `title` (value: the text typed), `save` (command, `ignore`; disabled, -32003, while the
/// title is empty, too long or unchanged), `cancel` (trigger). Outputs: `title`, `canSave`,
/// `isSaving`, events `saved` (the todo as stored), `dismiss` and `error`. After a save the
/// `parent` list, if it still exists, reloads.
@HostActor
public final class TodoEditorViewModel: ViewModel {
    public static let kind = "TodoEditor"

    /// `{id, title, parent?}`: the todo edited, its current title, and the list to reload.
    public struct Args: ViewModelArgs, Sendable, Equatable, JSONEncodable {
        /// The todo edited.
        public var id: String
        /// Its title when the editor opened: the starting text, and what "unchanged" means.
        public var title: String
        /// The handle of the `TodoList` to reload after a save.
        public var parent: String?

        /// The args of an editor of `id`, titled `title`, opened from `parent`.
        public init(id: String, title: String, parent: String? = nil) {
            self.id = id
            self.title = title
            self.parent = parent
        }

        /// Reads `{id, title, parent?}`, naming what is missing or wrong; the schema is derived from these reads.
        public init(reader: ObjectReader) throws(JSONDecodingError) {
            id = try reader.required("id", .nonEmpty)
            title = try reader.required("title")
            parent = try reader.optional("parent")
        }

        /// As the list's `edit` event carries them; its schema is the args' own.
        public var json: JSON { ["id": .string(id), "title": .string(title), "parent": JSON(parent)] }
    }

    /// Where its members are declared.
    public let context: ViewModelContext
    /// The text typed.
    public let title: Property<String>
    /// Whether `save` would run: the title is valid and changed.
    public let canSave: Property<Bool>
    /// True while a save runs.
    public let isSaving: Property<Bool>
    /// The todo as stored, after a save.
    public let saved: Event<Todo>
    /// Asks the UI to close the editor (after a save, or on `cancel`).
    public let dismiss: Event<NoValue>

    private let args: Args
    private let api: any TodoAPI

    /// Registers the kind with the host: saves go to `api`.
    public static func factory(api: any TodoAPI) -> ViewModelFactory {
        ViewModelFactory(TodoEditorViewModel.self) { args, context in TodoEditorViewModel(args: args, context: context, api: api) }
    }

    /// Declares the editor's members in `context`; saves go to `api`.
    public init(args: Args, context: ViewModelContext, api: any TodoAPI) {
        self.context = context
        self.args = args
        self.api = api
        title = context.property("title", args.title)
        canSave = context.property("canSave", false)
        isSaving = context.property("isSaving", false)
        saved = context.event("saved")
        dismiss = context.event("dismiss")

        context.value("title", of: String.self) { [unowned self] in title.value = $0 }
        let save = context.command("save", policy: .ignore) { [unowned self] in try await store() }
        save.disabledReason = { [unowned self] _ in problem() }
        context.trigger("cancel") { [unowned self, unowned save] in
            save.cancelAll()
            dismiss.emit(NoValue())
        }
        derive(canSave, from: [title]) { [unowned self] in problem() == nil }
        isSaving.bind(to: save.isExecuting)
    }

    /// Why the title cannot be saved, or nil when it can.
    private func problem() -> String? {
        if let problem = TodoTitle.problem(title.value) { return problem }
        return TodoTitle.trimmed(title.value) == TodoTitle.trimmed(args.title) ? "the title is unchanged" : nil
    }

    private func store() async throws -> JSON? {
        let text = TodoTitle.trimmed(title.value)
        let stored = try await context.perform { [api, id = args.id] in try await api.rename(id: id, title: text) }
        saved.emit(stored)
        dismiss.emit(NoValue())
        if let parent = args.parent, let list = context.lookup(parent) as? TodoListViewModel { list.reload() }
        return stored.json
    }
}
