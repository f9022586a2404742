import Backend
import StateStore
import VMHost

/// Whoever decides whether a login is still open when its list is written: the stored session
/// (the stdio host: the database says), or a connection's login (`vmhost-web`: its process says).
@HostActor
protocol LoginHolder: AnyObject {
    /// Whether `loginID` is the login held, read inside the transaction that writes for it.
    func holds(_ loginID: String, in transaction: StateTransaction) throws(StateStoreError) -> Bool
}

/// The saved lists, each under the login that fetched it: `lists.<login id>.products.pageSize=N`
/// and `lists.<login id>.groups.menuUid=M`. A login's lists are read by that login only and
/// deleted with it; one index (``listIndexKey``) keeps every login's keys, most recently saved
/// first, so that at most ``maxLists`` are kept in all.
extension StoredState {
    static func loginPrefix(_ loginID: String) -> String { listPrefix + loginID + "." }
    static func productsKey(login: String, pageSize: Int) -> String { loginPrefix(login) + "products.pageSize=\(pageSize)" }
    static func groupsKey(login: String, menuUid: String) -> String { loginPrefix(login) + "groups.menuUid=" + menuUid }

    func savedProducts(login: String, pageSize: Int) -> SavedProductPages? {
        let key = Self.productsKey(login: login, pageSize: pageSize)
        guard let json = savedJSON(key, maxBytes: Self.maxListBytes) else { return nil }
        do throws(BackendError) {
            return try SavedProductPages(json: json)
        } catch {
            logger.warning("the saved '\(key)' is out of shape (\(error.detail)); ignored")
            return nil
        }
    }

    func savedGroups(login: String, menuUid: String) -> [MenuGroup]? {
        guard menuUid.utf8.count <= Self.maxMenuUidBytes else { return nil }
        let key = Self.groupsKey(login: login, menuUid: menuUid)
        guard let json = savedJSON(key, maxBytes: Self.maxListBytes) else { return nil }
        do throws(BackendError) {
            return try MenuGroup.savedList(json: json)
        } catch {
            logger.warning("the saved '\(key)' is out of shape (\(error.detail)); ignored")
            return nil
        }
    }

    /// Saves `list` under `key` for the login `loginID` and moves the key to the front of the
    /// index, forgetting the lists past ``maxLists``: one transaction, made only if `holder` still
    /// holds the login when its turn comes (a save asked before a logout and written after it would
    /// outlive the login).
    func saveList(_ list: JSON, key: String, login loginID: String, holder: any LoginHolder) {
        let bytes = list.serialized()
        guard bytes.count <= Self.maxListBytes else {
            logger.notice("the list '\(key)' is larger than \(Self.maxListBytes) bytes; not saved")
            return
        }
        let value = String(decoding: bytes, as: UTF8.self)
        writer.submit("saving the list '\(key)'") { [self] (transaction) throws(StateStoreError) in
            guard try holder.holds(loginID, in: transaction) else { return }
            var index = try listIndex(transaction).filter { $0 != key }
            index.insert(key, at: 0)
            let forgotten = index.dropFirst(Self.maxLists)
            index.removeLast(forgotten.count)
            try transaction.set(key, value)
            for key in forgotten { try transaction.set(key, nil) }
            try transaction.set(Self.listIndexKey, Self.indexText(index))
        }
    }

    /// Deletes every list of the login `loginID` (and its keys from the index).
    func deleteLists(of loginID: String, _ transaction: StateTransaction) throws(StateStoreError) {
        let keys = try transaction.keys(prefix: Self.loginPrefix(loginID))
        for key in keys { try transaction.set(key, nil) }
        try removeFromIndex(Set(keys), transaction)
    }

    /// Writes the index without `keys` (when it held any).
    func removeFromIndex(_ keys: Set<String>, _ transaction: StateTransaction) throws(StateStoreError) {
        let index = try listIndex(transaction)
        let kept = index.filter { !keys.contains($0) }
        if kept.count != index.count { try transaction.set(Self.listIndexKey, kept.isEmpty ? nil : Self.indexText(kept)) }
    }

    /// The index as read in `transaction`: the keys of saved lists, most recent first (a damaged
    /// index counts as empty; the lists it lost are forgotten as others are saved).
    private func listIndex(_ transaction: StateTransaction) throws(StateStoreError) -> [String] {
        let json = parsed(try transaction.value(Self.listIndexKey), key: Self.listIndexKey, maxBytes: Self.maxListBytes)
        return json?.arrayValue?.compactMap(\.stringValue).filter { $0.hasPrefix(Self.listPrefix) && $0 != Self.listIndexKey } ?? []
    }

    private static func indexText(_ keys: [String]) -> String {
        String(decoding: JSON.array(keys.map { .string($0) }).serialized(), as: UTF8.self)
    }
}
