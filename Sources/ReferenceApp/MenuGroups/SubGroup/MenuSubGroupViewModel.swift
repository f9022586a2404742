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
/// - `cancel` (trigger): cancels every request of this view-model in flight (the load and deletes).
/// - `groups`, `loading` (the activity counter: any request of this view-model in flight),
///   `isEmpty` (a load finished with no groups), `isStale` (the groups shown were saved by an
///   earlier run), `loadState` and `lastError` (of `load`), `navigate`, `error`.
///
/// With a ``ListCache`` (the host's `--state-dir`) the groups are saved whenever the server
/// confirmed them (a load, a delete, a saved group), and a new view-model of the same menu starts
/// with them at once: `isStale` true, `loadState` `loaded` (or `empty`), until its first successful
/// load replaces them.
///
/// A failed request changes no row: the last good list stays on screen and the failure goes to
/// `error` once. When an editor opened from here saves, it calls ``applySaved(_:)`` on this
/// view-model inside the host: the saved group is shown at once, then the list reloads, so
/// subscribers see the new list without a client round trip and a failed reload keeps the group.
@HostActor
public final class MenuSubGroupViewModel: ViewModel {
    public static let kind = "MenuSubGroup"

    public let context: ViewModelContext
    public let menuUid: String
    public let groups: Property<[GroupRow]>
    public let loading: Property<Bool>
    public let isEmpty: Property<Bool>
    /// True while the groups shown are the ones saved by an earlier run; false once a load of this
    /// view-model succeeded, and always without a cache.
    public let isStale: Property<Bool>
    /// `loadState` (`loading` while `load` runs) and `lastError`.
    public let loads: LoadTracker
    public let navigate: Event<EditGroupRoute>

    let api: any APIClient
    /// Where the groups are saved; nil keeps nothing.
    let cache: (any ListCache)?
    /// Set once a load succeeded: `isEmpty` means "loaded and empty", never "not loaded yet".
    var hasLoaded = false
    /// The groups deleted since the latest load was sent: its answer may still list them.
    var deletedDuringLoad: Set<String> = []
    private var loadCommand: Command<NoValue>?

    /// `cache`, when given, keeps each menu's groups between runs.
    public static func factory(api: any APIClient, cache: (any ListCache)? = nil) -> ViewModelFactory {
        ViewModelFactory(MenuSubGroupViewModel.self) { args, context in
            MenuSubGroupViewModel(args: args, context: context, api: api, cache: cache)
        }
    }

    public init(args: Args, context: ViewModelContext, api: any APIClient, cache: (any ListCache)? = nil) {
        self.context = context
        self.menuUid = args.menuUid
        self.api = api
        self.cache = cache
        // The saved groups, shown from the start: declared with them, creating it changes nothing.
        let saved = cache?.savedGroups(menuUid: args.menuUid).map { $0.map(GroupRow.init) }
        groups = context.property("groups", saved ?? [])
        loading = context.property("loading", false)
        isEmpty = context.property("isEmpty", saved?.isEmpty ?? false)
        isStale = context.property("isStale", saved != nil)
        loads = LoadTracker(context: context, initial: saved.map { $0.isEmpty ? .empty : .loaded } ?? .idle)
        navigate = context.event("navigate")
        hasLoaded = saved != nil

        let loadCommand = context.command("load", policy: .latest) { [unowned self] in
            try await loads.run("load") { try await load() }
            return nil
        }
        self.loadCommand = loadCommand
        context.trigger("create") { [unowned self] in
            navigate.emit(EditGroupRoute(menuUid: menuUid, parent: self.context.handle))
        }
        context.trigger("rename", of: GroupReference.self) {
            [unowned self] reference throws(InputError) in
            let group = try row(reference.groupId)
            navigate.emit(EditGroupRoute(menuUid: menuUid, parent: self.context.handle, groupId: group.id, name: group.name))
        }
        let deleteCommand = context.command(
            "delete", of: GroupReference.self, policy: .ignorePerKey(GroupReference.key)
        ) { [unowned self] reference in
            try await delete(reference.groupId)
            return nil
        }
        context.trigger("cancel") { [unowned loadCommand, unowned deleteCommand] in
            loadCommand.cancelAll()
            deleteCommand.cancelAll()
        }
        loading.bind(to: context.activity.isActive)
        loads.track([loadCommand.isExecuting])
    }

    /// Starts `load` from inside the host: cancels a load in flight, as a resend would.
    public func reload() {
        loadCommand?.run()
    }

    /// An editor opened from here saved `row` (created or renamed, as the server answered): the row
    /// replaces the one with its id, or is appended, at once; then the list reloads. A failing reload
    /// changes no row, so the saved group stays visible.
    public func applySaved(_ row: GroupRow) {
        var rows = groups.value
        if let index = rows.firstIndex(where: { $0.id == row.id }) { rows[index] = row } else { rows.append(row) }
        show(rows)
        save()
        reload()
    }
}
