import Backend
import VMHostEventLoop
import VMHostRuntime
import VMHostWire

/// The menu sub-group screen (`MenuSubGroup`): the groups of one menu, loaded on appear, with
/// create, rename and delete.
///
/// Input → output:
/// - `load` (command, `latest`): fetches the groups; a resend cancels the fetch in flight.
/// - `create` (trigger): emits `navigate` to a new `MenuEditGroup`.
/// - `rename {groupId}` (trigger): emits `navigate` to a `MenuEditGroup` for that group.
/// - `delete {groupId}` (command, ignore per group): deletes on the server, then drops the row.
/// - `groups`, `loading` (the activity counter: any request of this view-model in flight),
///   `isEmpty` (a load finished with no groups), `navigate`, `error`.
///
/// A failed request changes no row: the last good list stays on screen and the failure goes to
/// `error` once. When an editor opened from here saves, it calls ``reload()`` on this view-model
/// inside the host, so subscribers see the new list without a client round trip.
@HostActor
public final class MenuSubGroupViewModel: ViewModel {
    public static let kind = "MenuSubGroup"

    public let context: ViewModelContext
    public let menuUid: String
    public let groups: Property<[GroupRow]>
    public let loading: Property<Bool>
    public let isEmpty: Property<Bool>
    public let navigate: Event<EditGroupRoute>

    let api: any APIClient
    /// Set once a load succeeded: `isEmpty` means "loaded and empty", never "not loaded yet".
    var hasLoaded = false
    /// The groups deleted since the latest load was sent: its answer may still list them.
    var deletedDuringLoad: Set<String> = []
    private var loadCommand: Command<NoValue>?

    public static func factory(api: any APIClient) -> ViewModelFactory {
        ViewModelFactory(MenuSubGroupViewModel.self) { args, context in
            MenuSubGroupViewModel(args: args, context: context, api: api)
        }
    }

    public init(args: Args, context: ViewModelContext, api: any APIClient) {
        self.context = context
        self.menuUid = args.menuUid
        self.api = api
        groups = context.property("groups", [GroupRow]())
        loading = context.property("loading", false)
        isEmpty = context.property("isEmpty", false)
        navigate = context.event("navigate")

        loadCommand = context.command("load", policy: .latest) { [unowned self] in
            try await load()
            return nil
        }
        context.trigger("create") { [unowned self] in
            navigate.emit(EditGroupRoute(menuUid: menuUid, parent: self.context.handle))
        }
        context.trigger("rename", of: GroupReference.self) {
            [unowned self] reference throws(InputError) in
            let group = try row(reference.groupId)
            navigate.emit(EditGroupRoute(menuUid: menuUid, parent: self.context.handle, groupId: group.id, name: group.name))
        }
        context.command(
            "delete", of: GroupReference.self, policy: .ignorePerKey(GroupReference.key)
        ) { [unowned self] reference in
            try await delete(reference.groupId)
            return nil
        }
        loading.bind(to: context.activity.isActive)
    }

    /// Starts `load` from inside the host (an editor saved): cancels a load in flight, as a resend would.
    public func reload() {
        loadCommand?.run()
    }
}
