import Backend
import VMHost

/// The edit screen of a menu group (`MenuEditGroup`): creates a group, or renames one, then hands
/// the saved group back and asks to be dismissed.
///
/// Input → output:
/// - `name` (value): the text typed; `canSave` follows it (trimmed 1…20 characters and, when
///   renaming, different from the original).
/// - `save` (command, `ignore`): creates or renames with the trimmed name; disabled with a reason
///   while `canSave` is false. Answers the saved group. On success: `saved {group}`, then
///   `dismiss`, and the `parent` `MenuSubGroup`, when it still exists, shows the saved group at
///   once and reloads.
/// - `cancel` (trigger): cancels a save in flight and emits `dismiss`.
/// - `title`, `name`, `canSave`, `isSaving`, events `saved`, `dismiss`, `error`.
@HostActor
public final class MenuEditGroupViewModel: ViewModel {
    public static let kind = "MenuEditGroup"

    @Derived({ ($0.args.groupId == nil ? Strings.newGroupTitle : Strings.renameGroupTitle)($0.context.locale) })
    public var title: String
    @Field public var name = ""
    @Derived({ GroupName.problem($0.name, original: $0.originalName) == nil }) public var canSave: Bool
    @Derived({ $0.save.isRunning }) public var isSaving: Bool
    public let save = Command(.ignore, returning: MenuGroup.self, disabled: { GroupName.problem($0.name, original: $0.originalName) }) { vm in
        try await vm.store()
    }
    public let cancel = Trigger { vm in
        // Leaving the screen abandons the save: its request is cancelled, not left to land later.
        vm.save.cancelAll()
        vm.dismiss.emit()
    }
    public let saved = Event<SavedGroup>()
    public let dismiss = Event<NoValue>()

    public let args: Args
    private let api: any APIClient

    public static func factory(api: any APIClient) -> ViewModelFactory {
        ViewModelFactory { args in MenuEditGroupViewModel(args: args, api: api) }
    }

    public init(args: Args, api: any APIClient) {
        self.args = args
        self.api = api
        name = args.name ?? ""
    }

    /// The name being renamed (nil when creating): "unchanged" is measured against it.
    private var originalName: String? { args.groupId == nil ? nil : (args.name ?? "") }

    private func store() async throws -> MenuGroup {
        let text = GroupName.trimmed(name)
        let group =
            if let groupId = args.groupId {
                try await api.renameGroup(menuUid: args.menuUid, groupId: groupId, name: text)
            } else {
                try await api.createGroup(menuUid: args.menuUid, name: text)
            }
        try Task.checkCancellation()
        saved.emit(SavedGroup(group: group))
        dismiss.emit()
        // The parent may have been disposed meanwhile (screen closed): then there is nothing to refresh.
        if let parent = args.parent, let screen = context.viewModel(parent, as: MenuSubGroupViewModel.self) {
            screen.applySaved(group)
        }
        return group
    }
}
