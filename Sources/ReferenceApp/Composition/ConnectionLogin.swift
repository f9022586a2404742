import Backend
import StateStore
import VMHost

/// The ``SessionStorage`` of one connection of `vmhost-web`: its login lasts as long as the
/// connection's session, and what the login saved in the state directory is its own and goes with
/// it: when a logout ends it (the logout waits for the deletion, and fails if it cannot be made),
/// when another login of the connection replaces it, and when the session ends.
///
/// When the server keeps sessions for its restart (`vmhost-web --session-dir`,
/// ``ServerEnvironment/restartGrace``), the login itself (token, username) is stored under its
/// random id (`connections.<id>.…`), so that such a session comes back logged in: the session's
/// file names the login by its id only (``SessionViewModel``'s restoration), and the token stays in
/// this private store. A session kept for a restart leaves it stored, marked with the wall time of
/// the stop (``keepForRestart()``); the session that takes it back removes the mark; any other end
/// deletes it, and so does the next start of the app once the grace period of the mark has passed
/// (``sweepKept(in:grace:)``): a session that never came back leaves nothing behind.
///
/// Which login the connection holds is known to this process only (another process never serves
/// this connection), so it is kept here, and changed in the order of the writes: a list save asked
/// before a logout is written (and then deleted) before the logout's deletion, one asked after it
/// is not made.
@HostActor
final class ConnectionLogin: SessionStorage, LoginHolder {
    private let state: StoredState
    /// The login of the connection, as far as the writes made so far go.
    private var held: String?
    /// Set when the server stops and keeps the session for its restart: the login stays stored.
    private var kept = false
    /// Whether the server may keep the session for a restart: only then is the login stored.
    private let storesLogin: Bool

    init(state: StoredState, storesLogin: Bool) {
        self.state = state
        self.storesLogin = storesLogin
    }

    static let keyPrefix = "connections."
    static func tokenKey(_ loginID: String) -> String { "connections.\(loginID).token" }
    static func usernameKey(_ loginID: String) -> String { "connections.\(loginID).username" }
    /// When (wall time, whole milliseconds since the Unix epoch) the server stopped and kept the
    /// login's session for its restart.
    static func keptKey(_ loginID: String) -> String { "connections.\(loginID).kept" }

    /// Deletes the stored login `loginID` and its lists in `transaction`.
    static func delete(_ loginID: String, in state: StoredState, _ transaction: StateTransaction) throws(StateStoreError) {
        try state.deleteLists(of: loginID, transaction)
        try transaction.set(tokenKey(loginID), nil)
        try transaction.set(usernameKey(loginID), nil)
        try transaction.set(keptKey(loginID), nil)
    }

    /// Deletes the logins kept for a restart more than `grace` ago (their sessions can no longer
    /// come back), at the app's start. A mark out of shape counts as passed.
    static func sweepKept(in state: StoredState, grace: Duration) {
        let now = state.clock.wallTime
        state.writer.submit("deleting the logins of sessions that did not come back after a restart") {
            (transaction) throws(StateStoreError) in
            var swept = 0
            for key in try state.store.keys(prefix: keyPrefix) where key.hasSuffix(".kept") {
                let loginID = String(key.dropFirst(keyPrefix.count).dropLast(".kept".count))
                let kept = try transaction.value(key).flatMap { Int64($0) }.map { Duration.milliseconds($0) }
                guard kept.map({ now - $0 > grace }) ?? true else { continue }
                if LoginID.isValid(loginID) { try delete(loginID, in: state, transaction) } else { try transaction.set(key, nil) }
                swept += 1
            }
            if swept > 0 { state.logger.info("deleted \(swept) stored login(s) of sessions that did not come back after a restart") }
        }
    }

    isolated deinit {
        // The connection closed: its login ended with it, unless kept for a restart.
        guard let held, !kept else { return }
        let state = state
        let pending = state.writer.submit("deleting the lists of a closed connection's login") { (transaction) throws(StateStoreError) in
            try Self.delete(held, in: state, transaction)
        }
        HostActor.startTask {
            if case .success = await state.writer.outcome(of: pending) {
                state.logger.debug("the lists of a closed connection's login were deleted")
            }
        }
    }

    func loadSession() -> StoredLogin? { nil }

    /// The login `loginID` stored by a session that the server kept for its restart; it is this
    /// connection's now.
    func loadLogin(_ loginID: String) -> StoredLogin? {
        guard held == nil, LoginID.isValid(loginID) else { return nil }
        do throws(StateStoreError) {
            guard let token = try state.store.value(Self.tokenKey(loginID)) else { return nil }
            held = loginID
            // Taken back: no longer swept as a login whose session did not come back.
            state.writer.submit("taking back a login kept for a restart") { (transaction) throws(StateStoreError) in
                try transaction.set(Self.keptKey(loginID), nil)
            }
            return StoredLogin(token: token, username: try state.store.value(Self.usernameKey(loginID)), loginID: loginID)
        } catch {
            state.logger.warning("a connection's stored login could not be read: \(error.message)")
            return nil
        }
    }

    /// The server stops and keeps the session for its restart: the login stays stored, marked
    /// with the time of the stop.
    func keepForRestart() {
        guard let held, storesLogin, !kept else { return }
        kept = true
        let now = state.clock.wallTime
        state.writer.submit("marking a login kept for a restart") { (transaction) throws(StateStoreError) in
            try transaction.set(Self.keptKey(held), String(now.milliseconds))
        }
    }

    /// Stores the login (the login waits for it) and holds it; deletes what the replaced one
    /// saved, without failing the login if that cannot be done (it is logged).
    func saveSession(_ login: StoredLogin) async throws(SessionStorageError) {
        if storesLogin {
            try await state.written("storing a connection's login") { (transaction) throws(StateStoreError) in
                try transaction.set(Self.tokenKey(login.loginID), login.token)
                try transaction.set(Self.usernameKey(login.loginID), login.username)
            }
        }
        guard let replaced = held, replaced != login.loginID else {
            held = login.loginID
            return
        }
        held = login.loginID
        state.writer.submit("deleting a replaced login") { [state] (transaction) throws(StateStoreError) in
            try Self.delete(replaced, in: state, transaction)
        }
    }

    func deleteSession(_ loginID: String) async throws(SessionStorageError) {
        try await state.written("deleting a connection's login") { [weak self, state] (transaction) throws(StateStoreError) in
            try Self.delete(loginID, in: state, transaction)
            if self?.held == loginID { self?.held = nil }
        }
    }

    func holds(_ loginID: String, in transaction: StateTransaction) throws(StateStoreError) -> Bool {
        held == loginID
    }
}
