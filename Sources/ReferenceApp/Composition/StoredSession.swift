import Backend
import Logging
import StateStore
import VMHost

/// The session kept in the state directory (`--state-dir`): the token and the username, written
/// together in one transaction, deleted together when the session ends.
///
/// A failed read or write is logged (naming the file and the operation, never the token); the
/// session then holds for the life of the process only.
@HostActor
final class StoredSession: SessionStorage {
    static let tokenKey = "session.token"
    static let usernameKey = "session.username"

    let store: StateStore
    let logger: Logger

    init(store: StateStore, logger: Logger) {
        self.store = store
        self.logger = logger
    }

    func loadSession() -> (token: String, username: String?)? {
        do throws(StateStoreError) {
            guard let token = try store.value(Self.tokenKey) else { return nil }
            return (token, try store.value(Self.usernameKey))
        } catch {
            logger.warning("the stored session could not be read: \(error.message)")
            return nil
        }
    }

    func saveSession(token: String, username: String?) {
        do throws(StateStoreError) {
            try store.write([(Self.tokenKey, token), (Self.usernameKey, username)])
        } catch {
            logger.warning("the session could not be stored: \(error.message)")
        }
    }

    func deleteSession() {
        do throws(StateStoreError) {
            try store.write([(Self.tokenKey, nil), (Self.usernameKey, nil)])
        } catch {
            logger.warning("the stored session could not be deleted: \(error.message)")
        }
    }
}
