import Backend
import HTTPBackend
import Logging
import StateStore
import VMHost

/// What the app keeps in the state directory (`--state-dir`), over one ``StateStore``:
///
/// - the session (``SessionStorage``): the token and the username, written together, deleted
///   together (with every saved list) when the session ends;
/// - the device id (``deviceID()``), made once and sent by every later run; a session's end
///   leaves it (a device is not a session);
/// - the last good data of each list (``ListCache``): the first pages of each product list (by page
///   size) and the groups of each menu, at most ``maxLists`` lists of at most ``maxListBytes``
///   each, the least recently saved forgotten first;
/// - the SMS countdowns (``CooldownStorage``): each waiting phone's deadline in wall-clock time.
///
/// Each write is one transaction of the store (atomic and durable). A failed read or write is
/// logged (naming the file and the operation, never a token); the app then goes on without it. A
/// saved value that cannot be read (damaged, out of shape, too large) is treated as absent and
/// logged by its key only.
@HostActor
public final class StoredState {
    static let tokenKey = "session.token"
    static let usernameKey = "session.username"
    static let deviceKey = "device.id"
    static let cooldownsKey = "login.smsCooldowns"
    /// The keys of the saved lists, most recently saved first (a JSON array of strings).
    static let listIndexKey = "lists.index"
    static let listPrefix = "lists."

    /// The most lists kept: saving one more forgets the least recently saved.
    public static let maxLists = 16
    /// The largest saved list, in bytes of JSON: a larger one is not saved (and not read).
    public static let maxListBytes = 1024 * 1024
    /// The longest menu id whose groups are saved (a key names it).
    public static let maxMenuUidBytes = 256

    let store: StateStore
    let logger: Logger

    public init(store: StateStore, logger: Logger) {
        self.store = store
        self.logger = logger
    }

    /// The device id of this state directory: the stored one, or a new random UUID stored now. A
    /// stored value that is no UUID is replaced (and logged).
    public func deviceID() -> String {
        do throws(StateStoreError) {
            if let stored = try store.value(Self.deviceKey) {
                if DeviceID.isValid(stored) { return stored }
                logger.warning("the stored device id is no UUID; a new one replaces it")
            }
        } catch {
            logger.warning("the stored device id could not be read: \(error.message)")
        }
        let made = DeviceID.random()
        write([(Self.deviceKey, made)], "the device id could not be stored")
        return made
    }

    /// Writes `changes` in one transaction, logging `failure` with the store's reason if it fails.
    func write(_ changes: [(key: String, value: String?)], _ failure: String) {
        do throws(StateStoreError) {
            try store.write(changes)
        } catch {
            logger.warning("\(failure): \(error.message)")
        }
    }

    /// The value under `key` parsed as JSON, or nil (absent, unreadable, larger than `maxBytes`: the
    /// last two logged by key).
    func savedJSON(_ key: String, maxBytes: Int) -> JSON? {
        let text: String?
        do throws(StateStoreError) {
            text = try store.value(key)
        } catch {
            logger.warning("the saved '\(key)' could not be read: \(error.message)")
            return nil
        }
        guard let text else { return nil }
        guard text.utf8.count <= maxBytes else {
            logger.warning("the saved '\(key)' is larger than \(maxBytes) bytes; ignored")
            return nil
        }
        do {
            return try JSON.parse(text)
        } catch {
            logger.warning("the saved '\(key)' is not JSON; ignored")
            return nil
        }
    }
}

// MARK: The session

extension StoredState: SessionStorage {
    public func loadSession() -> (token: String, username: String?)? {
        do throws(StateStoreError) {
            guard let token = try store.value(Self.tokenKey) else { return nil }
            return (token, try store.value(Self.usernameKey))
        } catch {
            logger.warning("the stored session could not be read: \(error.message)")
            return nil
        }
    }

    public func saveSession(token: String, username: String?) {
        write([(Self.tokenKey, token), (Self.usernameKey, username)], "the session could not be stored")
    }

    /// Deletes the token, the username and every saved list (fetched with that session's token, so
    /// the next user never sees them), in one transaction. The device id and the SMS countdowns stay.
    public func deleteSession() {
        var changes: [(key: String, value: String?)] = [(Self.tokenKey, nil), (Self.usernameKey, nil), (Self.listIndexKey, nil)]
        do throws(StateStoreError) {
            changes += try store.keys(prefix: Self.listPrefix).map { (key: $0, value: String?.none) }
        } catch {
            logger.warning("the saved lists could not be listed: \(error.message)")
        }
        write(changes, "the stored session could not be deleted")
    }
}

// MARK: The lists

extension StoredState: ListCache {
    static func productsKey(pageSize: Int) -> String { listPrefix + "products.pageSize=\(pageSize)" }
    static func groupsKey(menuUid: String) -> String { listPrefix + "groups.menuUid=" + menuUid }

    public func savedProducts(pageSize: Int) -> SavedProductPages? {
        let key = Self.productsKey(pageSize: pageSize)
        guard let json = savedJSON(key, maxBytes: Self.maxListBytes) else { return nil }
        do throws(BackendError) {
            return try SavedProductPages(json: json)
        } catch {
            logger.warning("the saved '\(key)' is out of shape (\(error.detail)); ignored")
            return nil
        }
    }

    public func saveProducts(_ pages: SavedProductPages, pageSize: Int) {
        saveList(pages.json, key: Self.productsKey(pageSize: pageSize))
    }

    public func savedGroups(menuUid: String) -> [MenuGroup]? {
        guard menuUid.utf8.count <= Self.maxMenuUidBytes else { return nil }
        let key = Self.groupsKey(menuUid: menuUid)
        guard let json = savedJSON(key, maxBytes: Self.maxListBytes) else { return nil }
        do throws(BackendError) {
            return try MenuGroup.savedList(json: json)
        } catch {
            logger.warning("the saved '\(key)' is out of shape (\(error.detail)); ignored")
            return nil
        }
    }

    public func saveGroups(_ groups: [MenuGroup], menuUid: String) {
        guard menuUid.utf8.count <= Self.maxMenuUidBytes else { return }
        saveList(.array(groups.map(\.json)), key: Self.groupsKey(menuUid: menuUid))
    }

    /// Saves `list` under `key` and moves the key to the front of the index, forgetting the lists
    /// past ``maxLists``: one transaction.
    func saveList(_ list: JSON, key: String) {
        let bytes = list.serialized()
        guard bytes.count <= Self.maxListBytes else {
            logger.notice("the list '\(key)' is larger than \(Self.maxListBytes) bytes; not saved")
            return
        }
        var index = savedJSON(Self.listIndexKey, maxBytes: Self.maxListBytes)?.arrayValue?.compactMap(\.stringValue)
            .filter { $0.hasPrefix(Self.listPrefix) && $0 != key } ?? []
        index.insert(key, at: 0)
        let forgotten = index.dropFirst(Self.maxLists)
        index.removeLast(forgotten.count)
        var changes: [(key: String, value: String?)] = [
            (key, String(decoding: bytes, as: UTF8.self)),
            (Self.listIndexKey, String(decoding: JSON.array(index.map { .string($0) }).serialized(), as: UTF8.self)),
        ]
        changes += forgotten.map { (key: $0, value: String?.none) }
        write(changes, "the list '\(key)' could not be saved")
    }
}

// MARK: The SMS countdowns

extension StoredState: CooldownStorage {
    /// `{phone: deadline in whole milliseconds since the Unix epoch}`; a member out of shape is
    /// left out.
    public func savedCooldowns() -> [String: Duration] {
        guard let json = savedJSON(Self.cooldownsKey, maxBytes: 64 * 1024) else { return [:] }
        guard case .object(let members) = json else {
            logger.warning("the saved '\(Self.cooldownsKey)' is out of shape; ignored")
            return [:]
        }
        var deadlines: [String: Duration] = [:]
        for member in members {
            guard let milliseconds = member.value.intValue, milliseconds >= 0 else { continue }
            deadlines[member.key] = .milliseconds(milliseconds)
        }
        return deadlines
    }

    public func saveCooldowns(_ deadlines: [String: Duration]) {
        let members = JSONObject(deadlines.sorted { $0.key < $1.key }.map { ($0.key, JSON.int($0.value.milliseconds)) })
        let text = String(decoding: JSON.object(members).serialized(), as: UTF8.self)
        write([(Self.cooldownsKey, text)], "the SMS countdowns could not be stored")
    }
}
