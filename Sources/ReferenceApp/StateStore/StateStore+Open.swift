#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Opening a state directory: what the store uses, refuses and sets aside.
///
/// - The directory is created (0700) when missing, and must be a directory of the user running the
///   host that neither its group nor others may write: in another one, someone else could replace
///   the database under the host.
/// - `state.sqlite3` (and its `-wal`, `-shm`, `-journal` files) must be regular files of that user:
///   a symbolic link, dangling or not, is refused, never followed.
/// - A file the store did not make is refused and left exactly as it is (no mode change, no table
///   added, no WAL switch): an SQLite database of another application (another `application_id`),
///   an SQLite file without the store's one `state` table, a file that is no SQLite database.
/// - A file the store made (its `application_id`, or the one `state` table of a database made
///   before the store wrote one) that SQLite finds damaged is set aside, renamed
///   `state.sqlite3.damaged-<UTC time>` with its log, and a new database starts, with a warning.
///   So is a file that is no SQLite database but has the mode the store gives its database (0600):
///   one of its own, damaged beyond recognition.
extension StateStore {
    /// The database made by a host before the application id was written: its one table, as created.
    static let legacyTable = "CREATE TABLE state (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL)"
    /// The files SQLite keeps beside the database.
    static let companions = ["-wal", "-shm", "-journal"]

    /// What the file at ``path`` turned out to be.
    private enum Found {
        case absent
        /// Empty, or a database of the store: `check` when it held data worth an integrity check.
        case ours(FileIdentity, check: Bool)
        case foreign(String)
        case damaged(String, FileIdentity)
    }

    /// The device and inode of a file: whether the path still names the file examined.
    private struct FileIdentity: Equatable {
        var device: UInt64
        var inode: UInt64

        init(_ info: stat) {
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
        }
    }

    /// Opens the database in `directory` (see the extension's notes), setting aside at most one
    /// damaged file.
    func open(directory: String) throws(StateStoreError) {
        try Self.makeDirectory(directory)
        try Self.checkDirectory(directory)
        var setAside = false
        // Each pass either returns, throws, or changes what the next one finds (a file created,
        // a damaged one set aside); a few cover another process doing the same at the same time.
        for _ in 0..<6 {
            try checkCompanions()
            switch try inspect() {
            case .absent:
                try setAsideCompanions()
                try create()
            case .foreign(let reason):
                throw StateStoreError(
                    "\(path): \(reason); vmhost uses only a database it made and leaves this file as it is: move it away or choose another --state-dir")
            case .damaged(let reason, let identity):
                guard !setAside else { throw StateStoreError("\(path): \(reason), again after setting a damaged one aside") }
                try setAsideDamaged(reason, identity)
                setAside = true
            case .ours(let identity, let check):
                do throws(StateStoreError) {
                    try tightenMode()
                    try setUp(checking: check)
                    return
                } catch where error.isDamaged && !setAside {
                    closeDatabase()
                    try setAsideDamaged("is damaged (\(error.message))", identity)
                    setAside = true
                } catch {
                    closeDatabase()
                    throw StateStoreError("\(path): not a usable state database (\(error.message))", isBusy: error.isBusy)
                }
            }
        }
        throw StateStoreError("\(path): kept changing while it was opened; try again")
    }

    // MARK: The directory

    private static func makeDirectory(_ directory: String) throws(StateStoreError) {
        // Each missing component is created 0700; an existing one is checked below.
        var prefix = directory.hasPrefix("/") ? "/" : ""
        for component in directory.split(separator: "/") {
            prefix += component
            if mkdir(prefix, 0o700) != 0, errno != EEXIST {
                throw StateStoreError("--state-dir \(directory): cannot create \(prefix) (\(errnoText()))")
            }
            prefix += "/"
        }
    }

    private static func checkDirectory(_ directory: String) throws(StateStoreError) {
        var info = stat()
        guard stat(directory, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
            throw StateStoreError("--state-dir \(directory): not a directory")
        }
        guard info.st_uid == geteuid() else {
            throw StateStoreError(
                "--state-dir \(directory): belongs to another user (uid \(info.st_uid)); vmhost keeps a login only in a directory of the user running it (uid \(geteuid()))")
        }
        let mode = info.st_mode & 0o7777
        guard mode & 0o022 == 0 else {
            throw StateStoreError(
                "--state-dir \(directory): its group or others may write it (mode \(octal(mode))), so they could replace the database; make it private (chmod 700) or choose another directory")
        }
    }

    // MARK: The file

    private func inspect() throws(StateStoreError) -> Found {
        var info = stat()
        if lstat(path, &info) != 0 {
            if errno == ENOENT { return .absent }
            throw StateStoreError("\(path): cannot be examined (\(Self.errnoText()))")
        }
        if let refusal = Self.refusal(of: info) { return .foreign(refusal) }
        let identity = FileIdentity(info)
        // Empty: made by the store (or a host starting beside this one) and not yet written.
        if info.st_size == 0 { return .ours(identity, check: false) }
        let mode = info.st_mode & 0o7777
        let header = try readHeader()
        let magic = Array("SQLite format 3\0".utf8)
        guard header.count == 100, header.starts(with: magic) else {
            // The store makes its file 0600: a file of that mode is taken for its own, damaged.
            return mode == 0o600 ? .damaged("is no SQLite database", identity) : .foreign("is no SQLite database")
        }
        let applicationID = header[68..<72].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
        if applicationID == UInt32(bitPattern: Self.applicationID) { return .ours(identity, check: true) }
        guard applicationID == 0 else {
            return .foreign("is the SQLite database of another application (application id \(applicationID))")
        }
        // A database made before the application id was written was in WAL mode (bytes 18 and 19
        // are 2) and held the one `state` table.
        guard header[18] == 2, header[19] == 2 else { return .foreign("is an SQLite database vmhost did not make") }
        switch try legacySchema() {
        case true?: return .ours(identity, check: true)
        case false?: return .foreign("is an SQLite database vmhost did not make (its tables are not vmhost's)")
        case nil: return mode == 0o600 ? .damaged("is damaged", identity) : .foreign("is an unreadable SQLite database")
        }
    }

    /// Why a file found at a path of the store is refused, or nil: a symbolic link, not a regular
    /// file, or another user's.
    private static func refusal(of info: stat) -> String? {
        switch info.st_mode & S_IFMT {
        case S_IFLNK: return "is a symbolic link"
        case S_IFREG: break
        default: return "is not a regular file"
        }
        guard info.st_uid == geteuid() else { return "belongs to another user (uid \(info.st_uid))" }
        return nil
    }

    /// The journal files must be what the database must be; a symbolic link there would have
    /// SQLite write through it.
    private func checkCompanions() throws(StateStoreError) {
        for suffix in Self.companions {
            var info = stat()
            guard lstat(path + suffix, &info) == 0 else { continue }
            if let refusal = Self.refusal(of: info) {
                throw StateStoreError("\(path + suffix): \(refusal); vmhost leaves it as it is: move it away or choose another --state-dir")
            }
        }
    }

    /// The first 100 bytes (SQLite's header), read without following a link.
    private func readHeader() throws(StateStoreError) -> [UInt8] {
        let fd = Glibc.open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw StateStoreError("\(path): cannot be read (\(Self.errnoText()))") }
        defer { close(fd) }
        var header = [UInt8](repeating: 0, count: 100)
        var count = 0
        while count < header.count {
            let read = header.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + count, $0.count - count) }
            if read < 0, errno == EINTR { continue }
            guard read > 0 else { break }
            count += read
        }
        return Array(header[..<count])
    }

    /// Opens the file as the store's database with `flags` (read-only or read-write), never
    /// following a link, with the busy timeout set; `failure` says what could not be done.
    private func openDatabase(flags: Int32, failure: String) throws(StateStoreError) {
        var handle: OpaquePointer?
        let status = library.open(path, &handle, flags | SQLiteLibrary.openNoFollow | SQLiteLibrary.openFullMutex, nil)
        guard status == SQLiteLibrary.ok, let handle else {
            if let handle { _ = library.close(handle) }
            throw StateStoreError("\(path): \(failure) (SQLite status \(status))", status: status)
        }
        database = handle
        applyBusyTimeout()
    }

    /// Whether the database holds exactly the table of a database made by an earlier host; nil when
    /// SQLite cannot read it. Read-only: nothing of the file changes.
    private func legacySchema() throws(StateStoreError) -> Bool? {
        try openDatabase(flags: SQLiteLibrary.openReadOnly, failure: "cannot be opened")
        defer { closeDatabase() }
        let statement: OpaquePointer
        do throws(StateStoreError) {
            statement = try prepare("SELECT type, name, sql FROM sqlite_master")
        } catch where error.isDamaged {
            return nil
        }
        defer { _ = library.finalize(statement) }
        var sawTable = false
        while true {
            let status = library.step(statement)
            if status == SQLiteLibrary.done { return sawTable }
            guard status == SQLiteLibrary.row else {
                let error = failure("reading its tables", status)
                if error.isDamaged { return nil }
                throw error
            }
            let row = (text(statement, column: 0), text(statement, column: 1), text(statement, column: 2))
            switch row {
            case ("table", "state", Self.legacyTable): sawTable = true
            case ("index", "sqlite_autoindex_state_1", ""): break
            default: return false
            }
        }
    }

    /// Creates the database file, mode 0600, before SQLite opens it: it never exists with wider
    /// rights. Another process creating it first is no failure (the next pass opens that one).
    private func create() throws(StateStoreError) {
        let fd = Glibc.open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            if errno == EEXIST { return }
            throw StateStoreError("\(path): cannot be created (\(Self.errnoText()))")
        }
        // The umask may have narrowed it further; never wider.
        _ = fchmod(fd, 0o600)
        close(fd)
    }

    /// A database of the store whose mode was widened is narrowed back to 0600 (with a warning).
    private func tightenMode() throws(StateStoreError) {
        for suffix in [""] + Self.companions {
            let fd = Glibc.open(path + suffix, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            var info = stat()
            guard fstat(fd, &info) == 0 else { continue }
            let mode = info.st_mode & 0o7777
            guard mode != 0o600, (info.st_mode & S_IFMT) == S_IFREG, info.st_uid == geteuid() else { continue }
            guard fchmod(fd, 0o600) == 0 else {
                throw StateStoreError("\(path + suffix): mode \(Self.octal(mode)) cannot be narrowed to 0600 (\(Self.errnoText()))")
            }
            warn("\(path + suffix): was mode \(Self.octal(mode)); narrowed to 0600 (a login is kept there)")
        }
    }

    /// Opens the database read-write (never following a link) and makes it the store's: its
    /// application id, its table, WAL mode. With `checking`, SQLite first checks that it is intact.
    private func setUp(checking: Bool) throws(StateStoreError) {
        try openDatabase(flags: SQLiteLibrary.openReadWrite, failure: "cannot be opened as a database")
        if checking, let verdict = try execute("PRAGMA quick_check"), verdict != "ok" {
            throw StateStoreError("SQLite's check found: \(verdict.prefix(200))", status: SQLiteLibrary.corrupt)
        }
        // In one transaction: another host opening the file meanwhile sees it empty or whole.
        try execute("BEGIN IMMEDIATE")
        do throws(StateStoreError) {
            try execute("PRAGMA application_id = \(Self.applicationID)")
            try execute("CREATE TABLE IF NOT EXISTS state (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL)")
            try execute("COMMIT")
        } catch {
            _ = try? execute("ROLLBACK")
            throw error
        }
        let mode = try execute("PRAGMA journal_mode=WAL")
        guard mode == "wal" else { throw StateStoreError("\(path): cannot be switched to WAL mode (it stays \(mode ?? "unknown"))") }
        try execute("PRAGMA synchronous=FULL")
        // Deleted values are overwritten, not left in free pages (see ``transaction(_:)``).
        try execute("PRAGMA secure_delete=ON")
    }

    func closeDatabase() {
        if let database { _ = library.close(database) }
        database = nil
    }

    // MARK: Setting aside

    /// Renames the damaged database (and its journal files) to `state.sqlite3.damaged-<UTC time>`,
    /// unless another process did already (the path then names another file).
    private func setAsideDamaged(_ reason: String, _ identity: FileIdentity) throws(StateStoreError) {
        var info = stat()
        guard lstat(path, &info) == 0, FileIdentity(info) == identity else { return }
        let name = try asideName()
        guard rename(path, name) == 0 else {
            throw StateStoreError("\(path): \(reason), and cannot be set aside as \(name) (\(Self.errnoText()))")
        }
        for suffix in Self.companions { _ = rename(path + suffix, name + suffix) }
        warn("\(path): \(reason); set aside as \(name), and a new database started (logged out, no saved lists)")
    }

    /// Journal files left without their database (it was deleted by hand) would be read into a
    /// new one: they are set aside too.
    private func setAsideCompanions() throws(StateStoreError) {
        let found = Self.companions.filter { access(path + $0, F_OK) == 0 }
        guard !found.isEmpty else { return }
        let name = try asideName()
        for suffix in found { _ = rename(path + suffix, name + suffix) }
        warn("\(path): journal files without their database were set aside as \(name)\(found.joined(separator: ", "))")
    }

    /// `state.sqlite3.damaged-20260101T000000Z`, with `-2`, `-3`… when taken.
    private func asideName() throws(StateStoreError) -> String {
        var now = time(nil)
        var parts = tm()
        gmtime_r(&now, &parts)
        var buffer = [CChar](repeating: 0, count: 32)
        let length = strftime(&buffer, buffer.count, "%Y%m%dT%H%M%SZ", &parts)
        let stamp = String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let base = path + ".damaged-" + stamp
        for number in 1...100 {
            let name = number == 1 ? base : base + "-\(number)"
            let taken = ([""] + Self.companions).contains { suffix in
                var info = stat()
                return lstat(name + suffix, &info) == 0
            }
            if !taken { return name }
        }
        throw StateStoreError("\(path): no free name to set it aside as \(base)")
    }

    nonisolated static func errnoText() -> String { String(cString: strerror(errno)) }

    nonisolated static func octal(_ mode: mode_t) -> String {
        "0" + String(mode, radix: 8)
    }
}
