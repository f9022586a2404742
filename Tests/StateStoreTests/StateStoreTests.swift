#if canImport(Glibc)
import Glibc
#endif
import StateStore
import Testing
@_spi(Transport) import VMHostEventLoop

/// The state store: values survive reopening, writes are all-or-nothing, the files are the
/// user's alone; what it refuses (a link, a file it did not make, an unsafe directory) is left as
/// it is and named, and a damaged database of its own is set aside.
@Suite
@HostActor
struct StateStoreTests {
    let directory: String

    init() {
        var template = Array("/tmp/vmhost-state-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        directory = String(cString: made!) + "/nested/state"
    }

    @Test func aValueWrittenIsReadBackAfterReopening() throws {
        do {
            let store = try StateStore(directory: directory)
            #expect(try store.value("session.token") == nil)
            try store.write([("session.token", "T-1"), ("session.username", "13800138000")])
        }
        let reopened = try StateStore(directory: directory)
        #expect(try reopened.value("session.token") == "T-1")
        #expect(try reopened.value("session.username") == "13800138000")
    }

    @Test func nilDeletesAKeyAndLaterWritesReplaceEarlierOnes() throws {
        let store = try StateStore(directory: directory)
        try store.set("k", "one")
        try store.set("k", "two")
        #expect(try store.value("k") == "two")
        try store.write([("k", nil), ("other", "x")])
        #expect(try store.value("k") == nil)
        #expect(try store.value("other") == "x")
    }

    @Test func textOfAnyKindRoundTrips() throws {
        let store = try StateStore(directory: directory)
        let text = "新品 \u{0} \"quoted\" 'single'; DROP TABLE state; --\n" + String(repeating: "x", count: 100_000)
        try store.set("list", text)
        #expect(try store.value("list") == text)
        try store.set("empty", "")
        #expect(try store.value("empty") == "")
    }

    @Test func theDirectoryIs0700AndTheDatabase0600() throws {
        let store = try StateStore(directory: directory)
        try store.set("session.token", "T-1")
        var info = stat()
        #expect(stat(directory, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o700)
        #expect(stat(store.path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        #expect(stat(store.path + "-wal", &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
    }

    var path: String { directory + "/" + StateStore.fileName }

    /// The bytes, mode and links of a file, to check that nothing changed it.
    func snapshot(_ path: String) -> [UInt8]? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return nil }
        let fd = open(path, O_RDONLY)
        defer { if fd >= 0 { close(fd) } }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        if fd >= 0, !bytes.isEmpty { _ = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) } }
        return bytes + Array("mode \(info.st_mode) links \(info.st_nlink)".utf8)
    }

    func writeFile(_ path: String, _ text: String, mode: mode_t) {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode)
        _ = Array(text.utf8).withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        fchmod(fd, mode)
        close(fd)
    }

    func refusal(_ expected: String) -> (any Error) -> Bool {
        { error in
            guard let message = (error as? StateStoreError)?.message else { return false }
            return message.contains(expected)
        }
    }

    @Test func aFileThatIsNoDatabaseAndNotItsModeIsRefusedByNameAndLeftAlone() throws {
        _ = try StateStore(directory: directory)
        unlink(path)
        unlink(path + "-wal")
        unlink(path + "-shm")
        writeFile(path, "this is not a database, it is a long enough line of text to be read as a header", mode: 0o644)
        let before = snapshot(path)
        #expect(throws: StateStoreError.self) { _ = try StateStore(directory: directory) }
        #expect {
            _ = try StateStore(directory: directory)
        } throws: { error in
            (error as? StateStoreError)?.message.contains(path + ": is no SQLite database") == true
        }
        #expect(snapshot(path) == before)
        #expect(access(path + "-wal", F_OK) != 0)
    }

    @Test(arguments: [true, false])
    func aSymbolicLinkIsRefusedAndNothingIsMadeThroughIt(dangling: Bool) throws {
        _ = try StateStore(directory: directory)
        unlink(path)
        unlink(path + "-wal")
        unlink(path + "-shm")
        let target = directory + "/../elsewhere"
        if !dangling { writeFile(target, "someone else's file", mode: 0o644) }
        symlink(target, path)
        let before = snapshot(target)
        #expect(performing: { _ = try StateStore(directory: directory) }, throws: refusal(path + ": is a symbolic link"))
        #expect(snapshot(target) == before)
        if dangling { #expect(access(target, F_OK) != 0) }
    }

    @Test func aLinkedJournalFileIsRefusedToo() throws {
        _ = try StateStore(directory: directory)
        unlink(path + "-wal")
        symlink(directory + "/../elsewhere", path + "-wal")
        #expect(performing: { _ = try StateStore(directory: directory) }, throws: refusal(path + "-wal: is a symbolic link"))
        #expect(access(directory + "/../elsewhere", F_OK) != 0)
    }

    @Test(arguments: [0o777, 0o770, 0o702])
    func aDirectoryOthersMayWriteIsRefused(mode: Int) throws {
        _ = try StateStore(directory: directory)
        chmod(directory, mode_t(mode))
        #expect(performing: { _ = try StateStore(directory: directory) }, throws: refusal("its group or others may write it"))
        var info = stat()
        stat(directory, &info)
        #expect(Int(info.st_mode & 0o777) == mode)
    }

    @Test func aDirectoryOfAnotherUserIsRefused() throws {
        // Only a superuser can give a directory away.
        guard geteuid() == 0 else { return }
        _ = try StateStore(directory: directory)
        chown(directory, 65534, 65534)
        #expect(performing: { _ = try StateStore(directory: directory) }, throws: refusal("belongs to another user (uid 65534)"))
    }

    @Test func aDamagedDatabaseIsSetAsideAndANewOneStarts() throws {
        do {
            let store = try StateStore(directory: directory)
            try store.set("session.token", "T-1")
            try store.set("k", String(repeating: "x", count: 20_000))
        }
        // Pages past the header overwritten: SQLite's check finds it.
        let fd = open(path, O_WRONLY)
        let garbage = [UInt8](repeating: 0xA5, count: 8192)
        _ = garbage.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, 4096) }
        close(fd)
        let damaged = snapshot(path)
        var warnings: [String] = []
        let store = try StateStore(directory: directory, warn: { warnings.append($0) })
        #expect(try store.value("session.token") == nil)
        try store.set("k", "v")
        #expect(warnings.count == 1)
        let warning = try #require(warnings.first)
        #expect(warning.contains(path + ": is damaged") && warning.contains("set aside as " + path + ".damaged-"))
        let word = try #require(warning.split(separator: " ").first { $0.hasPrefix(path + ".damaged-") })
        let aside = String(word.filter { $0 != "," })
        #expect(snapshot(aside) == damaged)
    }

    @Test func aFileOfItsModeThatIsNoDatabaseIsTakenForItsOwnDamagedOne() throws {
        _ = try StateStore(directory: directory)
        unlink(path + "-wal")
        unlink(path + "-shm")
        writeFile(path, String(repeating: "\u{0}garbage", count: 100), mode: 0o600)
        var warnings: [String] = []
        let store = try StateStore(directory: directory, warn: { warnings.append($0) })
        try store.set("k", "v")
        #expect(warnings.count == 1 && warnings[0].contains("is no SQLite database; set aside as"))
    }

    @Test func severalStoresOpenOnOneDirectoryShareIt() throws {
        // Each opened while the others are open, as hosts on one directory are.
        let stores = try (0..<4).map { _ in try StateStore(directory: directory) }
        for (number, store) in stores.enumerated() { try store.set("k\(number)", "v") }
        #expect(try stores[0].keys(prefix: "k") == ["k0", "k1", "k2", "k3"])
    }

    @Test func aTransactionReadsAndWritesAsOneAndABusyOneSaysSo() throws {
        let store = try StateStore(directory: directory, busyTimeout: .milliseconds(10))
        let other = try StateStore(directory: directory, busyTimeout: .milliseconds(10))
        try store.set("count", "1")
        try store.transaction { (transaction) throws(StateStoreError) in
            let count = Int(try transaction.value("count") ?? "0") ?? 0
            // Another connection cannot write in between.
            #expect(throws: StateStoreError.self) { try other.set("count", "100") }
            do throws(StateStoreError) {
                try other.set("count", "100")
            } catch {
                #expect(error.isBusy)
            }
            try transaction.set("count", String(count + 1))
        }
        #expect(try other.value("count") == "2")
    }

    @Test func aPathThatIsAFileIsNoDirectory() throws {
        _ = try StateStore(directory: directory)
        let file = directory + "/" + StateStore.fileName
        #expect(throws: StateStoreError.self) { _ = try StateStore(directory: file) }
    }
}
