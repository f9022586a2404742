/// Why the state store could not be opened, read or written. The message names the file or the
/// operation, never a stored value (tokens are stored there).
public struct StateStoreError: Error, Sendable, CustomStringConvertible {
    public var message: String
    /// True when another connection (another host on the same directory) held the database's lock
    /// past the busy timeout: the same operation may succeed when tried again.
    public var isBusy: Bool
    /// True when SQLite found the file damaged or no database at all.
    var isDamaged: Bool

    public init(_ message: String, isBusy: Bool = false) {
        self.message = message
        self.isBusy = isBusy
        isDamaged = false
    }

    init(_ message: String, status: Int32) {
        self.message = message
        // Extended codes (e.g. SQLITE_BUSY_SNAPSHOT) keep the primary code in the low byte.
        let primary = status & 0xFF
        isBusy = primary == SQLiteLibrary.busy || primary == SQLiteLibrary.locked
        isDamaged = primary == SQLiteLibrary.corrupt || primary == SQLiteLibrary.notADatabase
    }

    public var description: String { message }
}
