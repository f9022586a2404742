import Backend
import VMHost

extension MenuSubGroupViewModel {
    /// `load`: replaces the rows with the server's list. On failure nothing is applied: the error
    /// propagates to the runtime, which emits it once on `error`.
    ///
    /// A delete confirmed while the load was in flight may postdate the list the server answered:
    /// its row is left out rather than put back.
    func fetch() async throws {
        deletedDuringLoad = []
        let fetched = try await api.groups(menuUid: menuUid)
        try Task.checkCancellation()
        let deleted = deletedDuringLoad
        hasLoaded = true
        show(fetched.filter { !deleted.contains($0.id) })
        isStale = false
        save()
    }

    /// `delete`: deletes on the server, then drops the row locally instead of reloading: the server
    /// answered that exactly this group is gone, and a reload would cost a request and could fail.
    func remove(_ groupId: String) async throws {
        try await api.deleteGroup(menuUid: menuUid, groupId: groupId)
        try Task.checkCancellation()
        deletedDuringLoad.insert(groupId)
        // Removed in place: the change costs the row, not the list.
        rows.removeAll { $0.id == groupId }
        $groups.removeAll { $0.id == groupId }
        isEmpty = hasLoaded && groups.isEmpty
        save()
    }

    /// Saves the rows shown to the cache, if any: called once the server confirmed them.
    func save() {
        cache?.saveGroups(rows, menuUid: menuUid)
    }

    /// The row with `groupId`, or a refusal (-32602) naming `params.value.groupId`.
    func row(_ groupId: String) throws(InputError) -> MenuGroup {
        guard let row = groups.first(where: { $0.id == groupId }) else {
            let known = groups.map(\.id).joined(separator: ", ")
            throw .refused("groupId", "no group \"\(groupId)\" in the list (groups: \(known.isEmpty ? "none" : known))")
        }
        return row
    }

    /// Shows `rows` as the server sent them: `groups` has the demo data's names in the locale.
    func show(_ rows: [MenuGroup]) {
        self.rows = rows
        let locale = context.locale
        groups = rows.map { MenuGroup(id: $0.id, name: DemoCatalog.name($0.name, in: locale), dishCount: $0.dishCount) }
        isEmpty = hasLoaded && rows.isEmpty
    }
}
