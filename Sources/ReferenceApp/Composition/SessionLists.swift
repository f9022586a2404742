import Backend
import StateStore
import VMHost

/// The ``ListCache`` of one session (the stdio host's, or one connection's): the lists saved in the
/// state directory by the session's current login, under its ``AppSession/loginID``.
///
/// Logged out, nothing is shown and nothing is saved. A login sees only what it saved itself: not
/// another connection's, not an earlier login's of the same user. Nothing is cached here: every
/// read goes to the database, so a login's lists deleted by any process are gone for all.
@HostActor
final class SessionLists: ListCache {
    private let state: StoredState
    private let session: AppSession
    private let holder: any LoginHolder

    init(state: StoredState, session: AppSession, holder: any LoginHolder) {
        self.state = state
        self.session = session
        self.holder = holder
    }

    func savedProducts(pageSize: Int) -> SavedProductPages? {
        guard let login = session.loginID else { return nil }
        return state.savedProducts(login: login, pageSize: pageSize)
    }

    func saveProducts(_ pages: SavedProductPages, pageSize: Int) {
        guard let login = session.loginID else { return }
        state.saveList(pages.json, key: StoredState.productsKey(login: login, pageSize: pageSize), login: login, holder: holder)
    }

    func savedGroups(menuUid: String) -> [MenuGroup]? {
        guard let login = session.loginID else { return nil }
        return state.savedGroups(login: login, menuUid: menuUid)
    }

    func saveGroups(_ groups: [MenuGroup], menuUid: String) {
        guard let login = session.loginID, menuUid.utf8.count <= StoredState.maxMenuUidBytes else { return }
        state.saveList(.array(groups.map(\.json)), key: StoredState.groupsKey(login: login, menuUid: menuUid), login: login, holder: holder)
    }
}
