#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import VMHost

/// What the app keeps between runs with `--state-dir DIR`: the session (token, username), the
/// device id, and the last good data of each list, as text values under keys, in one SQLite
/// database `DIR/state.sqlite3`.
///
/// - Writes are atomic and durable: each ``transaction(_:)`` is one SQLite transaction, committed
///   in WAL mode with `synchronous=FULL`, so a process killed at any moment leaves either the old
///   or the new values, never a broken file.
/// - Several processes may use one directory: a statement waits up to ``busyTimeout`` for another
///   one's lock, then fails with ``StateStoreError/isBusy`` so that its caller may try again later
///   (without holding the host thread longer).
/// - The directory is created with mode 0700 and the database with mode 0600 (SQLite gives its
///   journal files the database's mode): a token stored there is the user's alone. What opening
///   refuses, sets aside or checks is in `StateStore+Open.swift`.
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
    let library: SQLiteLibrary
    var database: OpaquePointer?
    /// Told what the store did that its owner should hear of (a damaged database set aside, a
    /// log that could not be emptied): one sentence naming the file, never a value.
    let warn: @HostActor (String) -> Void
    /// True while a deletion's pages may still be in the write-ahead log (a checkpoint failed).
    private var needsCheckpoint = false

    /// How long a statement waits for another connection's lock before failing as busy.
    public var busyTimeout: Duration {
        didSet { applyBusyTimeout() }
    }

    /// The file name of the database inside the state directory.
    public nonisolated static let fileName = "state.sqlite3"
    /// The database's `application_id` (the bytes "vmhs"): how a file this store made is told from
    /// another application's SQLite file.
    public nonisolated static let applicationID: Int32 = 0x766D_6873

    /// Opens (creating when missing) the store in `directory`, waiting up to `openTimeout` for
    /// other processes opening it at the same time; later statements wait up to `busyTimeout`.
    /// `warn` hears what opening set aside and what later fails without failing a write.
    public init(
        directory: String, openTimeout: Duration = .seconds(10), busyTimeout: Duration = .milliseconds(100),
        warn: @escaping @HostActor (String) -> Void = { _ in }
    ) throws(StateStoreError) {
        switch SQLiteLibrary.shared {
        case .success(let loaded): library = loaded
        case .failure(let error): throw error
        }
        guard !directory.isEmpty else { throw StateStoreError("--state-dir: the directory name is empty") }
        path = directory.hasSuffix("/") ? directory + Self.fileName : directory + "/" + Self.fileName
        self.warn = warn
        self.busyTimeout = openTimeout
        try open(directory: directory)
        // Observers do not run for assignments in an initializer.
        self.busyTimeout = busyTimeout
        applyBusyTimeout()
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

    /// Runs `body` in one write transaction: what it reads stays as read until it commits (no other
    /// process writes in between), and either every change it makes is stored or none is (a throw
    /// rolls back). After a deletion the log is emptied (see the type's notes).
    ///
    /// Fails with ``StateStoreError/isBusy`` when another process held the lock past
    /// ``busyTimeout``, before `body` ran.
    public func transaction<T>(_ body: (StateTransaction) throws(StateStoreError) -> T) throws(StateStoreError) -> T {
        try execute("BEGIN IMMEDIATE")
        let transaction = StateTransaction(store: self)
        let result: T
        do throws(StateStoreError) {
            result = try body(transaction)
            try execute("COMMIT")
        } catch {
            _ = try? execute("ROLLBACK")
            throw error
        }
        if transaction.deleted || needsCheckpoint { checkpoint() }
        return result
    }

    /// Writes `changes` in one transaction: a value replaces the key's value, nil deletes the key.
    /// Either every change is stored or none is.
    public func write(_ changes: [(key: String, value: String?)]) throws(StateStoreError) {
        try transaction { (transaction) throws(StateStoreError) in
            for change in changes { try transaction.set(change.key, change.value) }
        }
    }

    /// Writes one value (nil deletes the key).
    public func set(_ key: String, _ value: String?) throws(StateStoreError) {
        try write([(key, value)])
    }

    /// Folds the log into the (overwritten) database and empties it: the log still holds the pages
    /// as they were before a deletion. Another process reading at that moment may keep it from
    /// completing: it is then tried again after the next write, and `warn` hears of it.
    private func checkpoint() {
        do throws(StateStoreError) {
            let statement = try prepare("PRAGMA wal_checkpoint(TRUNCATE)")
            defer { _ = library.finalize(statement) }
            let status = library.step(statement)
            guard status == SQLiteLibrary.row else { throw failure("emptying the log", status) }
            // The first column is 1 when another connection kept the checkpoint from completing.
            needsCheckpoint = text(statement, column: 0) != "0"
            if needsCheckpoint { warn("\(path): the log could not be emptied yet (another process is reading); tried again after the next write") }
        } catch {
            needsCheckpoint = true
            warn("\(error.message); tried again after the next write")
        }
    }

    // MARK: SQLite

    func applyBusyTimeout() {
        guard let database else { return }
        let milliseconds = busyTimeout.components.seconds * 1000 + busyTimeout.components.attoseconds / 1_000_000_000_000_000
        _ = library.busyTimeout(database, Int32(clamping: max(0, milliseconds)))
    }

    /// Runs `sql` to its end; the text of the first column of its first row, if it has rows.
    @discardableResult
    func execute(_ sql: String) throws(StateStoreError) -> String? {
        let statement = try prepare(sql)
        defer { _ = library.finalize(statement) }
        var status = library.step(statement)
        var first: String?
        if status == SQLiteLibrary.row { first = text(statement, column: 0) }
        while status == SQLiteLibrary.row { status = library.step(statement) }
        guard status == SQLiteLibrary.done else { throw failure(sql, status) }
        return first
    }

    func prepare(_ sql: String) throws(StateStoreError) -> OpaquePointer {
        guard let database else { throw StateStoreError("\(path): the store is closed") }
        var statement: OpaquePointer?
        let status = library.prepare(database, sql, -1, &statement, nil)
        guard status == SQLiteLibrary.ok, let statement else { throw failure(sql, status) }
        return statement
    }

    /// The text of `column` in the current row of `statement`.
    func text(_ statement: OpaquePointer, column: Int32) -> String {
        guard let text = library.columnText(statement, column) else { return "" }
        let count = Int(library.columnBytes(statement, column))
        return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
    }

    func bind(_ statement: OpaquePointer, _ index: Int32, _ text: String) throws(StateStoreError) {
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
    func failure(_ operation: String, _ status: Int32) -> StateStoreError {
        var detail = "status \(status)"
        if let database, let message = library.errorMessage(database) { detail += ": " + String(cString: message) }
        if status & 0xFF == SQLiteLibrary.busy || status & 0xFF == SQLiteLibrary.locked {
            detail += "; another process held the database's lock for over \(busyTimeout)"
        }
        return StateStoreError("\(path): \(operation) failed (\(detail))", status: status)
    }
}

/// The reads and writes of one ``StateStore/transaction(_:)``.
@HostActor
public final class StateTransaction {
    private let store: StateStore
    /// Whether a key was deleted (the log is then emptied after the commit).
    fileprivate(set) var deleted = false

    fileprivate init(store: StateStore) { self.store = store }

    /// The value stored under `key`, or nil.
    public func value(_ key: String) throws(StateStoreError) -> String? { try store.value(key) }

    /// The keys that start with `prefix`, in key order.
    public func keys(prefix: String) throws(StateStoreError) -> [String] { try store.keys(prefix: prefix) }

    /// Stores `value` under `key`, replacing the value there; nil deletes the key.
    public func set(_ key: String, _ value: String?) throws(StateStoreError) {
        if let value {
            let statement = try store.prepare("INSERT OR REPLACE INTO state (key, value) VALUES (?1, ?2)")
            defer { _ = store.library.finalize(statement) }
            try store.bind(statement, 1, key)
            try store.bind(statement, 2, value)
            let status = store.library.step(statement)
            guard status == SQLiteLibrary.done else { throw store.failure("writing '\(key)'", status) }
        } else {
            let statement = try store.prepare("DELETE FROM state WHERE key = ?1")
            defer { _ = store.library.finalize(statement) }
            try store.bind(statement, 1, key)
            let status = store.library.step(statement)
            guard status == SQLiteLibrary.done else { throw store.failure("deleting '\(key)'", status) }
            deleted = true
        }
    }
}
