import Backend
import VMHost

/// The menu sub-group screen (`MenuSubGroup`): the groups of one menu, loaded on appear, with
/// create, rename and delete.
///
/// Input → output:
/// - `load` (command, `latest`): fetches the groups; a resend cancels the fetch in flight.
/// - `create` (trigger): emits `navigate` to a new `MenuEditGroup`.
/// - `rename {groupId}` (trigger): emits `navigate` to a `MenuEditGroup` for that group.
/// - `delete {groupId}` (command, ignore per group): deletes on the server, then drops the row.
/// - `cancel` (trigger): cancels every request of this view-model in flight (the load and deletes).
/// - `groups`, `loading` (any request of this view-model in flight), `isEmpty` (a load finished
///   with no groups), `isStale` (the groups shown were saved by an earlier run), `loadState` and
///   `lastError` (of `load`), `navigate`, `error`.
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

    public let load = Command(.latest) { vm in try await vm.fetch() }
    public let create = Trigger { vm in vm.navigate.emit(EditGroupRoute(menuUid: vm.menuUid, parent: vm.context.handle)) }
    public let rename = Trigger(of: GroupReference.self) { vm, reference throws(InputError) in
        let group = try vm.row(reference.groupId)
        vm.navigate.emit(EditGroupRoute(menuUid: vm.menuUid, parent: vm.context.handle, groupId: group.id, name: group.name))
    }
    public let delete = Command(.ignorePerKey { $0.groupId }, of: GroupReference.self) { vm, reference in
        try await vm.remove(reference.groupId)
    }
    public let cancel = Trigger { vm in
        vm.load.cancelAll()
        vm.delete.cancelAll()
    }

    @Output public internal(set) var groups: [MenuGroup] = []
    @Derived({ $0.context.isBusy }) public var loading: Bool
    @Output public internal(set) var isEmpty = false
    /// True while the groups shown are the ones saved by an earlier run; false once a load of this
    /// view-model succeeded, and always without a cache.
    @Output public internal(set) var isStale = false
    public let loads = Loads(tracking: \.load, emptyWhen: \.groups.isEmpty)
    public let navigate = Event<EditGroupRoute>()

    public let menuUid: String
    let api: any APIClient
    /// Where the groups are saved; nil keeps nothing.
    let cache: (any ListCache)?
    /// Set once a load succeeded: `isEmpty` means "loaded and empty", never "not loaded yet".
    var hasLoaded = false
    /// The rows as the server confirmed them (what the cache keeps); `groups` shows them with the
    /// demo data's names in the view-model's locale (``DemoCatalog/name(_:in:)``).
    var rows: [MenuGroup] = []
    /// The groups deleted since the latest load was sent: its answer may still list them.
    var deletedDuringLoad: Set<String> = []

    /// The kind's factory; `cache`, when given, keeps each menu's groups between runs.
    public static func factory(api: any APIClient, cache: (any ListCache)? = nil) -> ViewModelFactory {
        ViewModelFactory { args in MenuSubGroupViewModel(args: args, api: api, cache: cache) }
    }

    public init(args: Args, api: any APIClient, cache: (any ListCache)? = nil) {
        menuUid = args.menuUid
        self.api = api
        self.cache = cache
        if let saved = cache?.savedGroups(menuUid: menuUid) {
            hasLoaded = true
            isStale = true
            show(saved)
            loads.succeeded()
        }
    }

    /// An editor opened from here saved `group` (created or renamed, as the server answered): it
    /// replaces the row with its id, or is appended, at once; then the list reloads. A failing
    /// reload changes no row, so the saved group stays visible.
    public func applySaved(_ group: MenuGroup) {
        var rows = self.rows
        if let index = rows.firstIndex(where: { $0.id == group.id }) { rows[index] = group } else { rows.append(group) }
        show(rows)
        save()
        load.run()
    }
}
