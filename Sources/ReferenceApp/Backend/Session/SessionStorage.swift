import VMHost

/// Where a session's login is kept, and what the login saved is deleted with it (the app's state
/// directory).
///
/// A storage holds at most one login at a time (the one of its ``AppSession``): storing a login
/// replaces the one held, deleting what that one saved. Implementations retry while the database
/// is busy, report their own failures in the logs (never with the token), and throw only when the
/// login could not be stored or deleted in the end.
@HostActor
public protocol SessionStorage: AnyObject {
    /// The stored login, if any (read once, when the session is made).
    func loadSession() -> StoredLogin?
    /// Stores `login`, replacing the login held (whose saved data is deleted), in one atomic write.
    func saveSession(_ login: StoredLogin) async throws(SessionStorageError)
    /// Deletes the login `loginID` and what it saved, in one atomic write; a login not held (another
    /// replaced it) leaves the held one as it is.
    func deleteSession(_ loginID: String) async throws(SessionStorageError)
    /// The login `loginID`, kept for a restart of the server, if this storage holds it.
    func loadLogin(_ loginID: String) -> StoredLogin?
    /// The server stops and keeps the session's screens for its restart: the login held stays
    /// stored when the session goes.
    func keepForRestart()
}

extension SessionStorage {
    /// None.
    public func loadLogin(_ loginID: String) -> StoredLogin? { nil }
    /// Nothing to do.
    public func keepForRestart() {}
}

/// A login as a ``SessionStorage`` keeps it.
///
/// - Important: The token is a secret: `description` hides it.
public struct StoredLogin: Sendable, Hashable, CustomStringConvertible {
    public var token: String
    public var username: String?
    /// The random id naming what this login saved (``AppSession/loginID``).
    public var loginID: String

    public init(token: String, username: String?, loginID: String) {
        self.token = token
        self.username = username
        self.loginID = loginID
    }

    public var description: String { "StoredLogin(token: ***, username: \(username ?? "nil"), loginID: \(loginID))" }
}

/// Why a ``SessionStorage`` could not store or delete a login.
public struct SessionStorageError: Error, Sendable, CustomStringConvertible {
    /// What failed, for developers: names the file and the operation, never a value.
    public var message: String
    /// True when the database stayed locked by another process until the deadline.
    public var isBusy: Bool

    public init(_ message: String, isBusy: Bool) {
        self.message = message
        self.isBusy = isBusy
    }

    public var description: String { message }

    /// The error a login or logout fails with: `timeout` when the database stayed locked (the user
    /// may try again), otherwise `business` with code `"state"` and the generic message; the
    /// detail says what could not be done and why.
    public func domainError(doing what: String) -> BackendError {
        let detail = "\(what): \(message)"
        if isBusy { return .timeout(detail) }
        return BackendError(kind: .business, code: .string("state"), detail: detail)
    }
}

/// The random ids of logins.
public enum LoginID {
    /// A new random id: 32 lowercase hex digits (128 bits from the system's generator).
    public static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in
            let hex = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
    }

    /// Whether `text` has the form of an id made by ``random()`` (a stored one is checked before use).
    public static func isValid(_ text: String) -> Bool {
        text.utf8.count == 32 && text.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }
    }
}
