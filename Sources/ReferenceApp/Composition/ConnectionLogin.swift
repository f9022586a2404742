import Backend
import StateStore
import VMHost

/// The ``SessionStorage`` of one connection of `vmhost-web`: its login is never stored (it lasts
/// as long as the connection), but what the login saved in the state directory is its own and
/// goes with it: when a logout ends it (the logout waits for the deletion, and fails if it cannot
/// be made), when another login of the connection replaces it, and when the connection closes.
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

    init(state: StoredState) { self.state = state }

    isolated deinit {
        // The connection closed: its login ended with it.
        guard let held else { return }
        let state = state
        let pending = state.writer.submit("deleting the lists of a closed connection's login") { (transaction) throws(StateStoreError) in
            try state.deleteLists(of: held, transaction)
        }
        HostActor.startTask {
            if case .success = await state.writer.outcome(of: pending) {
                state.logger.debug("the lists of a closed connection's login were deleted")
            }
        }
    }

    func loadSession() -> StoredLogin? { nil }

    /// Holds the new login at once (saves of the replaced one are no longer made) and deletes what
    /// the replaced one saved, without failing the login if that cannot be done (it is logged).
    func saveSession(_ login: StoredLogin) async throws(SessionStorageError) {
        guard let replaced = held, replaced != login.loginID else {
            held = login.loginID
            return
        }
        held = login.loginID
        state.writer.submit("deleting the lists of a replaced login") { [state] (transaction) throws(StateStoreError) in
            try state.deleteLists(of: replaced, transaction)
        }
    }

    func deleteSession(_ loginID: String) async throws(SessionStorageError) {
        try await state.written("deleting the lists of a login") { [weak self, state] (transaction) throws(StateStoreError) in
            try state.deleteLists(of: loginID, transaction)
            if self?.held == loginID { self?.held = nil }
        }
    }

    func holds(_ loginID: String, in transaction: StateTransaction) throws(StateStoreError) -> Bool {
        held == loginID
    }
}
