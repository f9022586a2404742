#if canImport(Glibc)
import Glibc
#endif
import StateStore
import Testing
import VMHostEventLoop

/// The state store: values survive reopening, writes are all-or-nothing, the files are the
/// user's alone, and a file that is no database is refused with a message naming it.
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

    @Test func aFileThatIsNoDatabaseIsRefusedByName() throws {
        _ = try StateStore(directory: directory)
        let path = directory + "/" + StateStore.fileName
        unlink(path + "-wal")
        unlink(path + "-shm")
        let fd = open(path, O_WRONLY | O_TRUNC)
        let garbage = Array("this is not a database, it is a long enough line of text to be read as a header".utf8)
        _ = garbage.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        #expect {
            _ = try StateStore(directory: directory)
        } throws: { error in
            (error as? StateStoreError)?.message.contains(path) == true
        }
    }

    @Test func aPathThatIsAFileIsNoDirectory() throws {
        _ = try StateStore(directory: directory)
        let file = directory + "/" + StateStore.fileName
        #expect(throws: StateStoreError.self) { _ = try StateStore(directory: file) }
    }
}
