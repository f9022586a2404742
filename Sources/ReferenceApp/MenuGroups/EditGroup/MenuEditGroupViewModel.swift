import Backend
import VMHostEventLoop
import VMHostRuntime
import VMHostWire

/// The edit screen of a menu group (`MenuEditGroup`): creates a group, or renames one, then hands
/// the saved group back and asks to be dismissed.
///
/// Input → output:
/// - `name` (value): the text typed; `canSave` follows it (trimmed 1…20 characters and, when
///   renaming, different from the original).
/// - `save` (command, `ignore`): creates or renames with the trimmed name; disabled with a reason
///   while `canSave` is false. On success: `saved {group}`, then `dismiss`, and the `parent`
///   `MenuSubGroup`, when it still exists, reloads.
/// - `cancel` (trigger): cancels a save in flight and emits `dismiss`.
/// - `title`, `name`, `canSave`, `isSaving`, events `saved`, `dismiss`, `error`.
@HostActor
public final class MenuEditGroupViewModel: ViewModel {
    public static let kind = "MenuEditGroup"

    public let context: ViewModelContext
    public let args: Args
    public let title: Property<String>
    public let name: Property<String>
    public let canSave: Property<Bool>
    public let isSaving: Property<Bool>
    public let saved: Event<SavedGroup>
    public let dismiss: Event<NoValue>

    private let api: any APIClient

    public static func factory(api: any APIClient) -> ViewModelFactory {
        ViewModelFactory(MenuEditGroupViewModel.self) { args, context in
            MenuEditGroupViewModel(args: args, context: context, api: api)
        }
    }

    public init(args: Args, context: ViewModelContext, api: any APIClient) {
        self.context = context
        self.args = args
        self.api = api
        let titleText = args.groupId == nil ? Strings.newGroupTitle : Strings.renameGroupTitle
        title = context.property("title", titleText(context.locale))
        name = context.property("name", args.name ?? "")
        canSave = context.property("canSave", false)
        isSaving = context.property("isSaving", false)
        saved = context.event("saved")
        dismiss = context.event("dismiss")

        context.value("name", of: String.self) { [unowned self] in name.value = $0 }
        let save = context.command("save", policy: .ignore) { [unowned self] in try await performSave() }
        save.disabledReason = { [unowned self] _ in GroupName.problem(name.value, original: originalName) }
        context.trigger("cancel") { [unowned self, unowned save] in
            // Leaving the screen abandons the save: its request is cancelled, not left to land later.
            save.cancelAll()
            dismiss.emit(NoValue())
        }
        derive(canSave, from: [name]) { [unowned self] in GroupName.problem(name.value, original: originalName) == nil }
        isSaving.bind(to: save.isExecuting)
    }

    /// The name being renamed (nil when creating): "unchanged" is measured against it.
    private var originalName: String? { args.groupId == nil ? nil : (args.name ?? "") }

    private func performSave() async throws -> JSON? {
        let text = GroupName.trimmed(name.value)
        let group = try await context.perform { [api, args] in
            if let groupId = args.groupId {
                try await api.renameGroup(menuUid: args.menuUid, groupId: groupId, name: text)
            } else {
                try await api.createGroup(menuUid: args.menuUid, name: text)
            }
        }
        let row = GroupRow(group)
        saved.emit(SavedGroup(group: row))
        dismiss.emit(NoValue())
        // The parent may have been disposed meanwhile (screen closed): then there is nothing to refresh.
        if let parent = args.parent, let screen = context.lookup(parent) as? MenuSubGroupViewModel {
            screen.reload()
        }
        return row.json
    }
}
