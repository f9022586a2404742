#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import VMHostEventLoop

/// What the app keeps between runs with `--state-dir DIR`: the session (token, username), the
/// device id, and the last good data of each list, as text values under keys, in one SQLite
/// database `DIR/state.sqlite3`.
///
/// - Writes are atomic and durable: each ``write(_:)`` is one transaction, committed in WAL mode
///   with `synchronous=FULL`, so a process killed at any moment leaves either the old or the new
///   values, never a broken file.
/// - The directory is created with mode 0700 and the database with mode 0600 (SQLite gives its
///   journal files the database's mode): a token stored there is the user's alone.
/// - Values are never logged and never quoted in errors. A deleted value (a token at logout) leaves
///   no copy in the files: deleted rows are overwritten (`secure_delete`), and after a deletion the
///   write-ahead log is checkpointed into the database and truncated.
///
/// Without `--state-dir` no store exists and nothing is written anywhere.
///
/// - Important: Isolated to the host actor. Writes are small (a token, a page of a list) and run
///   on the host thread; a commit waits for the disk.
@HostActor
public final class StateStore {
    /// The database file.
    public let path: String
    private let library: SQLiteLibrary
    private var database: OpaquePointer?

    /// The file name of the database inside the state directory.
    public nonisolated static let fileName = "state.sqlite3"

    /// Opens (creating when missing) the store in `directory`.
    public init(directory: String) throws(StateStoreError) {
        let library: SQLiteLibrary
        switch SQLiteLibrary.shared {
        case .success(let loaded): library = loaded
        case .failure(let error): throw error
        }
        self.library = library
        guard !directory.isEmpty else { throw StateStoreError("--state-dir: the directory name is empty") }
        try Self.makeDirectory(directory)
        path = directory.hasSuffix("/") ? directory + Self.fileName : directory + "/" + Self.fileName
        // Created here with mode 0600 before SQLite opens it, so it never exists with wider rights.
        let fd = Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw StateStoreError("\(path): cannot be created or opened (\(Self.errnoText()))") }
        _ = fchmod(fd, 0o600)
        close(fd)
        var handle: OpaquePointer?
        let status = library.open(
            path, &handle, SQLiteLibrary.openReadWrite | SQLiteLibrary.openCreate | SQLiteLibrary.openFullMutex, nil)
        guard status == SQLiteLibrary.ok, let handle else {
            if let handle { _ = library.close(handle) }
            throw StateStoreError("\(path): cannot be opened as a database (SQLite status \(status))")
        }
        database = handle
        do throws(StateStoreError) {
            try execute("PRAGMA journal_mode=WAL")
            try execute("PRAGMA synchronous=FULL")
            // Deleted values are overwritten, not left in free pages (see ``write(_:)``).
            try execute("PRAGMA secure_delete=ON")
            try execute("CREATE TABLE IF NOT EXISTS state (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL)")
        } catch {
            _ = library.close(handle)
            database = nil
            throw StateStoreError("\(path): not a usable state database (\(error.message))")
        }
    }

    isolated deinit {
        if let database { _ = library.close(database) }
    }

    /// The value stored under `key`, or nil.
    public func value(_ key: String) throws(StateStoreError) -> String? {
        let statement = try prepare("SELECT value FROM state WHERE key = ?1")
        defer { _ = library.finalize(statement) }
        try bind(statement, 1, key)
        let status = library.step(statement)
        if status == SQLiteLibrary.done { return nil }
        guard status == SQLiteLibrary.row else { throw failure("reading '\(key)'", status) }
        return text(statement, column: 0)
    }

    /// The text of `column` in the current row of `statement`.
    private func text(_ statement: OpaquePointer, column: Int32) -> String {
        guard let text = library.columnText(statement, column) else { return "" }
        let count = Int(library.columnBytes(statement, column))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    /// The keys that start with `prefix`, in key order.
    public func keys(prefix: String) throws(StateStoreError) -> [String] {
        let statement = try prepare("SELECT key FROM state WHERE instr(key, ?1) = 1 ORDER BY key")
        defer { _ = library.finalize(statement) }
        try bind(statement, 1, prefix)
        var keys: [String] = []
        while true {
            let status = library.step(statement)
            if status == SQLiteLibrary.done { return keys }
            guard status == SQLiteLibrary.row else { throw failure("listing the keys '\(prefix)…'", status) }
            keys.append(text(statement, column: 0))
        }
    }

    /// Writes `changes` in one transaction: a value replaces the key's value, nil deletes the key.
    /// Either every change is stored or none is.
    public func write(_ changes: [(key: String, value: String?)]) throws(StateStoreError) {
        try execute("BEGIN IMMEDIATE")
        do throws(StateStoreError) {
            for change in changes {
                if let value = change.value {
                    let statement = try prepare("INSERT OR REPLACE INTO state (key, value) VALUES (?1, ?2)")
                    defer { _ = library.finalize(statement) }
                    try bind(statement, 1, change.key)
                    try bind(statement, 2, value)
                    let status = library.step(statement)
                    guard status == SQLiteLibrary.done else { throw failure("writing '\(change.key)'", status) }
                } else {
                    let statement = try prepare("DELETE FROM state WHERE key = ?1")
                    defer { _ = library.finalize(statement) }
                    try bind(statement, 1, change.key)
                    let status = library.step(statement)
                    guard status == SQLiteLibrary.done else { throw failure("deleting '\(change.key)'", status) }
                }
            }
            try execute("COMMIT")
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
        if changes.contains(where: { $0.value == nil }) {
            // The log still holds the pages as they were before the deletion: fold it into the
            // (overwritten) database and empty it.
            try execute("PRAGMA wal_checkpoint(TRUNCATE)")
        }
    }

    /// Writes one value (nil deletes the key).
    public func set(_ key: String, _ value: String?) throws(StateStoreError) {
        try write([(key, value)])
    }

    // MARK: SQLite

    private func execute(_ sql: String) throws(StateStoreError) {
        let statement = try prepare(sql)
        defer { _ = library.finalize(statement) }
        var status = library.step(statement)
        while status == SQLiteLibrary.row { status = library.step(statement) }
        guard status == SQLiteLibrary.done else { throw failure(sql, status) }
    }

    private func prepare(_ sql: String) throws(StateStoreError) -> OpaquePointer {
        guard let database else { throw StateStoreError("\(path): the store is closed") }
        var statement: OpaquePointer?
        let status = library.prepare(database, sql, -1, &statement, nil)
        guard status == SQLiteLibrary.ok, let statement else { throw failure(sql, status) }
        return statement
    }

    private func bind(_ statement: OpaquePointer, _ index: Int32, _ text: String) throws(StateStoreError) {
        var text = text
        let status = text.withUTF8 { bytes -> Int32 in
            // Bound by its length, so a NUL inside the text is kept; SQLite copies it.
            guard let count = Int32(exactly: bytes.count) else { return -1 }
            let start = UnsafeRawPointer(bytes.baseAddress ?? UnsafePointer(bitPattern: 1)!).assumingMemoryBound(to: CChar.self)
            return library.bindText(statement, index, start, count, SQLiteLibrary.transient)
        }
        guard status != -1 else { throw StateStoreError("\(path): a value of over 2 GiB cannot be stored") }
        guard status == SQLiteLibrary.ok else { throw failure("binding a value", status) }
    }

    /// An error naming the operation and SQLite's own message (which quotes no stored value).
    private func failure(_ operation: String, _ status: Int32) -> StateStoreError {
        var detail = "status \(status)"
        if let database, let message = library.errorMessage(database) { detail += ": " + String(cString: message) }
        return StateStoreError("\(path): \(operation) failed (\(detail))")
    }

    private static func makeDirectory(_ directory: String) throws(StateStoreError) {
        // Each missing component is created 0700; an existing directory is used as it is.
        var prefix = directory.hasPrefix("/") ? "/" : ""
        for component in directory.split(separator: "/") {
            prefix += component
            if mkdir(prefix, 0o700) != 0, errno != EEXIST {
                throw StateStoreError("--state-dir \(directory): cannot create \(prefix) (\(errnoText()))")
            }
            prefix += "/"
        }
        var info = stat()
        guard stat(directory, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
            throw StateStoreError("--state-dir \(directory): not a directory")
        }
    }

    private nonisolated static func errnoText() -> String { String(cString: strerror(errno)) }
}
