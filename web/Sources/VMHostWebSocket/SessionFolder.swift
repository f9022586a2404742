#if WebSocket
#if canImport(Glibc)
import Glibc
#endif
@_spi(Transport) import VMHostWire

/// `--session-dir`: the folder where each resumable session keeps what makes its screens again
/// after the server restarted (protocol/SPEC.md §12, "After a restart").
///
/// One file per session, named by the SHA-256 of the token that resumes it now (64 hex digits,
/// `.session`): the token itself is never on disk. A file is rewritten whole as the session
/// changes (written beside as `.tmp-…`, then renamed over), so a reader sees the old file or the
/// new one, never half of one. Resuming takes the file by renaming it to the hash of the next
/// token: of two connections presenting the same token, in one process or in two, one rename
/// succeeds and the other finds nothing (single use).
///
/// The folder is made 0700 and must be the user's, with no access for its group or others; each
/// file is made 0600. A file of the folder that is not one of these, or that does not read, is
/// never a reason to stop: the session it would be is not restored, and a line on stderr says why.
struct SessionFolder: Sendable {
    let path: String
    /// The most bytes of one session's file (§10): a session whose screens pass it is not kept.
    static let maxFileBytes = 256 * 1024

    /// The folder at `path`, made when missing and checked.
    static func prepare(_ path: String) -> Result<SessionFolder, Refusal> {
        guard !path.isEmpty else { return .failure(Refusal("--session-dir must not be empty")) }
        var prefix = path.hasPrefix("/") ? "/" : ""
        for component in path.split(separator: "/") {
            prefix += component
            if mkdir(prefix, 0o700) != 0, errno != EEXIST {
                return .failure(Refusal("--session-dir \(path): cannot create \(prefix) (\(errnoText()))"))
            }
            prefix += "/"
        }
        var info = stat()
        guard lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
            return .failure(Refusal("--session-dir \(path): not a directory"))
        }
        guard info.st_uid == geteuid() else {
            return .failure(Refusal("--session-dir \(path): belongs to another user (uid \(info.st_uid)), not to the user running the server (uid \(geteuid()))"))
        }
        guard info.st_mode & 0o077 == 0 else {
            return .failure(Refusal(
                "--session-dir \(path): its group or others may use it (mode \(String(info.st_mode & 0o7777, radix: 8))); what a page typed is kept there: make it private (chmod 700)"))
        }
        return .success(SessionFolder(path: path))
    }

    struct Refusal: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// The file name of the session resumed by `token`.
    static func name(of token: String) -> String { SHA256.hex(token) + ".session" }

    /// Writes `bytes` as the file `name`, whole or not at all; the reason when it could not.
    func write(_ bytes: [UInt8], as name: String) -> String? {
        let temporary = "\(path)/.tmp-\(name)"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return "cannot create \(temporary) (\(Self.errnoText()))" }
        var written = 0
        while written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else {
                let reason = Self.errnoText()
                close(fd)
                unlink(temporary)
                return "cannot write \(temporary) (\(reason))"
            }
            written += count
        }
        close(fd)
        guard Glibc.rename(temporary, "\(path)/\(name)") == 0 else {
            let reason = Self.errnoText()
            unlink(temporary)
            return "cannot rename \(temporary) (\(reason))"
        }
        return nil
    }

    /// Takes the file `name` for the session's next token, `next`: renamed, then read. Nil when
    /// there is none (never was, taken already, or removed); `.failure` when it is there and
    /// cannot be read as a session's (it is removed, so that it is never tried again).
    func take(_ name: String, renamingTo next: String) -> Result<[UInt8], Refusal>? {
        let target = "\(path)/\(next)"
        guard Glibc.rename("\(path)/\(name)", target) == 0 else { return nil }
        let read = Self.read(target)
        if case .failure = read { unlink(target) }
        return read
    }

    /// Removes the file `name`, if there.
    func remove(_ name: String) {
        unlink("\(path)/\(name)")
    }

    /// Renames the file `name` to `next` (the token changed); false when it is not there.
    func rename(_ name: String, to next: String) -> Bool {
        Glibc.rename("\(path)/\(name)", "\(path)/\(next)") == 0
    }

    /// The bytes of the regular file at `path`, at most ``maxFileBytes``, made by this user with
    /// no access for others.
    static func read(_ path: String) -> Result<[UInt8], Refusal> {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { return .failure(Refusal("\(path): cannot be opened (\(errnoText()))")) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return .failure(Refusal("\(path): not a regular file")) }
        guard info.st_uid == geteuid(), info.st_mode & 0o077 == 0 else {
            return .failure(Refusal("\(path): not a file of the server's (another owner, or open to others)"))
        }
        guard info.st_size <= maxFileBytes else { return .failure(Refusal("\(path): larger than \(maxFileBytes) bytes")) }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var done = 0
        while done < bytes.count {
            let count = bytes[done...].withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return .failure(Refusal("\(path): cannot be read (\(errnoText()))")) }
            done += count
        }
        return .success(bytes)
    }

    /// Removes the files of sessions whose pages had their grace period to come back and did not
    /// (last written more than `grace` ago, on the wall clock), and what a write left half done.
    /// The number removed.
    func sweep(olderThan grace: Duration) -> Int {
        guard let directory = opendir(path) else { return 0 }
        defer { closedir(directory) }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let graceSeconds = Int(grace.components.seconds) + 1
        var removed = 0
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            guard name.hasSuffix(".session") || name.hasPrefix(".tmp-") else { continue }
            var info = stat()
            guard lstat("\(path)/\(name)", &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
            if name.hasPrefix(".tmp-") || now.tv_sec - info.st_mtim.tv_sec > graceSeconds {
                if unlink("\(path)/\(name)") == 0 { removed += 1 }
            }
        }
        return removed
    }

    static func errnoText() -> String { String(cString: strerror(errno)) }
}

/// What a session's file holds (JSON): `{"version": 1, "origin": …, "received": M, "screens": …}`,
/// the screens as ``Host/screens()`` makes them, M the count of the page's frames received.
struct KeptSession {
    static let version: Int64 = 1
    /// The largest count of frames a kept session or its page may state (2^62): counting on from
    /// it cannot overflow.
    static let maxCount = 1 << 62
    var origin: String?
    var received: Int
    var screens: JSON

    func serialized() -> [UInt8] {
        var object = JSONObject()
        object.append("version", .int(Self.version))
        object.append("origin", origin.map { .string($0) } ?? .null)
        object.append("received", .int(Int64(received)))
        object.append("screens", screens)
        return JSON.object(object).serialized()
    }

    /// Reads what ``serialized()`` wrote; the reason when it is not that.
    static func parse(_ bytes: [UInt8]) -> Result<KeptSession, SessionFolder.Refusal> {
        guard let json = try? JSON.parse(bytes), case .object(let object) = json else {
            return .failure(.init("not a JSON object"))
        }
        guard object["version"]?.intValue == version else { return .failure(.init("not a session file of version \(version)")) }
        guard let count = object["received"]?.intValue, let received = Int(exactly: count), (0...maxCount).contains(received) else {
            return .failure(.init("no count of frames received"))
        }
        guard let screens = object["screens"], case .object = screens else { return .failure(.init("no screens")) }
        let origin: String?
        switch object["origin"] {
        case .string(let text)?: origin = text
        case .null?, nil: origin = nil
        default: return .failure(.init("an origin that is not a string"))
        }
        return .success(KeptSession(origin: origin, received: received, screens: screens))
    }
}
#endif
