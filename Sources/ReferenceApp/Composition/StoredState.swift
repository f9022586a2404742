import Backend
import HTTPBackend
import Logging
import StateStore
import VMHost

/// What the app keeps in the state directory (`--state-dir`), over one ``StateStore``:
///
/// - the session of the stdio host (``SessionStorage``): the token, the username and the login's
///   random id, written together, deleted together (with the login's lists);
/// - the device id (``deviceID()``), made once and sent by every later run; a session's end
///   leaves it (a device is not a session);
/// - the last good data of each list, per login (``SessionLists``): what a login fetched is shown
///   to that login only, and deleted when it ends; at most ``maxLists`` lists of at most
///   ``maxListBytes`` each, the least recently saved forgotten first;
/// - the SMS countdowns (``CooldownStorage``): each waiting phone's deadline in wall-clock time.
///
/// Several hosts may share the directory: every write goes through one ``StateWriter`` (in order,
/// retried while another process holds the lock) and reads what it changes inside its transaction,
/// so no host's write undoes another's. The database is the truth: nothing read is cached.
///
/// A failed read is logged (naming the file and the operation, never a token) and the app goes on
/// without the value; a write that fails in the end is logged as a warning, and a login or logout
/// waiting for it fails. A saved value that cannot be read (damaged, out of shape, too large) is
/// treated as absent and logged by its key only.
@HostActor
public final class StoredState {
    static let tokenKey = "session.token"
    static let usernameKey = "session.username"
    static let loginKey = "session.login"
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
    /// How long the work of a start (reading the session, the device id) waits for other hosts.
    static let startupTimeout: Duration = .seconds(10)

    let store: StateStore
    let logger: Logger
    let clock: any HostClock
    let writer: StateWriter

    /// The state kept in `store`; failures are logged to `logger`; retries and wall-clock times are
    /// on `clock`. Lists saved by a version that kept them for no login are deleted now.
    public init(store: StateStore, logger: Logger, clock: any HostClock) {
        self.store = store
        self.logger = logger
        self.clock = clock
        writer = StateWriter(store: store, clock: clock, logger: logger)
        upgrade()
    }

    /// Opens the state directory `directory`: what opening set aside is logged as a warning.
    public static func open(directory: String, logger: Logger, clock: any HostClock) throws(StateStoreError) -> StoredState {
        StoredState(store: try StateStore(directory: directory, warn: { logger.warning("\($0)") }), logger: logger, clock: clock)
    }

    /// Runs `body` in one transaction now, waiting up to ``startupTimeout`` for other hosts: for
    /// the work of a start, before the host serves anyone.
    func atStart<T>(_ body: (StateTransaction) throws(StateStoreError) -> T) throws(StateStoreError) -> T {
        let busyTimeout = store.busyTimeout
        store.busyTimeout = Self.startupTimeout
        defer { store.busyTimeout = busyTimeout }
        return try store.transaction(body)
    }

    /// The device id of this state directory: the stored one, or a new random UUID stored now (in
    /// one transaction, so that hosts starting together agree on one). A stored value that is no
    /// UUID is replaced (and logged).
    public func deviceID() -> String {
        let made = DeviceID.random()
        do throws(StateStoreError) {
            return try atStart { (transaction) throws(StateStoreError) in
                if let stored = try transaction.value(Self.deviceKey) {
                    if DeviceID.isValid(stored) { return stored }
                    logger.warning("the stored device id is no UUID; a new one replaces it")
                }
                try transaction.set(Self.deviceKey, made)
                return made
            }
        } catch {
            logger.warning("the device id could not be read or stored (this run sends a new one): \(error.message)")
            return made
        }
    }

    /// Lists saved before they belonged to a login were fetched by whoever used the directory
    /// last: they are deleted. A stored session without a login id gets one.
    private func upgrade() {
        do throws(StateStoreError) {
            try atStart { (transaction) throws(StateStoreError) in
                let unowned = try transaction.keys(prefix: Self.listPrefix + "products.")
                    + transaction.keys(prefix: Self.listPrefix + "groups.")
                if !unowned.isEmpty {
                    for key in unowned { try transaction.set(key, nil) }
                    try removeFromIndex(Set(unowned), transaction)
                }
                if try transaction.value(Self.tokenKey) != nil,
                   !LoginID.isValid(try transaction.value(Self.loginKey) ?? "") {
                    try transaction.set(Self.loginKey, LoginID.random())
                }
            }
        } catch {
            logger.warning("the state directory could not be brought up to date: \(error.message)")
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
        return parsed(text, key: key, maxBytes: maxBytes)
    }

    /// `text`, the value under `key`, parsed as JSON; nil when absent, too large or no JSON (logged).
    func parsed(_ text: String?, key: String, maxBytes: Int) -> JSON? {
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

    /// Writes with `body` through the writer and waits for the outcome: a failure is a
    /// ``SessionStorageError`` naming what could not be done.
    func written(
        _ what: String, _ body: @escaping @HostActor (StateTransaction) throws(StateStoreError) -> Void
    ) async throws(SessionStorageError) {
        let pending = writer.submit(what, body)
        if case .failure(let error) = await writer.outcome(of: pending) {
            throw SessionStorageError(error.message, isBusy: error.isBusy)
        }
    }
}

// MARK: The session of the stdio host

extension StoredState: SessionStorage, LoginHolder {
    public func loadSession() -> StoredLogin? {
        do throws(StateStoreError) {
            guard let token = try store.value(Self.tokenKey) else { return nil }
            guard let login = try store.value(Self.loginKey), LoginID.isValid(login) else {
                logger.warning("the stored session has no login id; it is not restored")
                return nil
            }
            return StoredLogin(token: token, username: try store.value(Self.usernameKey), loginID: login)
        } catch {
            logger.warning("the stored session could not be read: \(error.message)")
            return nil
        }
    }

    /// Stores the login, replacing the stored one (whichever host stored it) and deleting that
    /// one's lists, in one transaction.
    public func saveSession(_ login: StoredLogin) async throws(SessionStorageError) {
        try await written("storing the session") { [self] (transaction) throws(StateStoreError) in
            if let replaced = try transaction.value(Self.loginKey), replaced != login.loginID {
                try deleteLists(of: replaced, transaction)
            }
            try transaction.set(Self.tokenKey, login.token)
            try transaction.set(Self.usernameKey, login.username)
            try transaction.set(Self.loginKey, login.loginID)
        }
    }

    /// Deletes the login's lists and, when it is the stored session still (no other host logged in
    /// since), the token, the username and the id, in one transaction. The device id and the SMS
    /// countdowns stay.
    public func deleteSession(_ loginID: String) async throws(SessionStorageError) {
        try await written("deleting the stored login") { [self] (transaction) throws(StateStoreError) in
            try deleteLists(of: loginID, transaction)
            if try transaction.value(Self.loginKey) == loginID {
                try transaction.set(Self.tokenKey, nil)
                try transaction.set(Self.usernameKey, nil)
                try transaction.set(Self.loginKey, nil)
            }
        }
    }

    /// The stored session is the directory's truth: a login another host replaced or ended saves
    /// nothing more, whatever this host still holds in memory.
    func holds(_ loginID: String, in transaction: StateTransaction) throws(StateStoreError) -> Bool {
        try transaction.value(Self.loginKey) == loginID
    }
}
