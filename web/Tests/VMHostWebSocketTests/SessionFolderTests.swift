import Foundation
import Testing
@testable import VMHostWebSocket
@_spi(Transport) import VMHostWire

/// `--session-dir`: the files that keep a session's screens for a restart, their names (a hash of
/// the token, never the token), single use by rename, privacy, bounds, and files that are not
/// a session's.
@Suite struct SessionFolderTests {
    /// A private folder of its own, removed at the end of `body`.
    static func withFolder(_ body: (SessionFolder, String) throws -> Void) throws {
        let path = NSTemporaryDirectory() + "vmhost-sessions-\(UUID().uuidString)/kept"
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let folder = try SessionFolder.prepare(path).get()
        try body(folder, path)
    }

    static func kept(_ screens: JSON = ["viewModels": [["vm": "login", "kind": "Login", "inputs": [["username", "13800138000"]]]]]) -> [UInt8] {
        KeptSession(origin: "http://127.0.0.1:8787", received: 7, screens: screens).serialized()
    }

    @Test func theHashIsSHA256() {
        #expect(SHA256.hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(
            SHA256.hex(String(repeating: "a", count: 1000))
                == "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3")
    }

    @Test func aSessionIsKeptUnderTheHashOfItsTokenAndTakenOnce() throws {
        try Self.withFolder { folder, path in
            let token = Resumption.makeToken(worker: 1), next = Resumption.makeToken(worker: 1)
            let name = SessionFolder.name(of: token)
            #expect(folder.write(Self.kept(), as: name) == nil)
            let files = try FileManager.default.contentsOfDirectory(atPath: path)
            #expect(files == [name])
            // The token is nowhere: not in the name, not in the file.
            #expect(!name.contains(token.split(separator: ".")[1]))
            let text = try String(contentsOfFile: "\(path)/\(name)", encoding: .utf8)
            #expect(!text.contains(token))
            let attributes = try FileManager.default.attributesOfItem(atPath: "\(path)/\(name)")
            #expect((attributes[.posixPermissions] as? Int) == 0o600)
            let folderAttributes = try FileManager.default.attributesOfItem(atPath: path)
            #expect((folderAttributes[.posixPermissions] as? Int) == 0o700)

            let taken = try #require(folder.take(name, renamingTo: SessionFolder.name(of: next)))
            let session = try KeptSession.parse(try taken.get()).get()
            #expect(session.origin == "http://127.0.0.1:8787" && session.received == 7)
            #expect(session.screens["viewModels"]?.arrayValue?.count == 1)
            // Single use: the same token finds nothing any more; the next one does.
            #expect(folder.take(name, renamingTo: SessionFolder.name(of: Resumption.makeToken(worker: 1))) == nil)
            #expect(try FileManager.default.contentsOfDirectory(atPath: path) == [SessionFolder.name(of: next)])
            folder.remove(SessionFolder.name(of: next))
            #expect(try FileManager.default.contentsOfDirectory(atPath: path).isEmpty)
        }
    }

    @Test func aFileThatIsNotASessionsIsRefusedAndRemoved() throws {
        try Self.withFolder { folder, path in
            for (index, content) in ["not json", "[1]", #"{"version":2,"received":0,"screens":{}}"#, #"{"version":1,"received":-1,"screens":{}}"#,
                                     #"{"version":1,"received":9223372036854775807,"screens":{}}"#,
                                     #"{"version":1,"received":0,"screens":[]}"#, #"{"version":1,"received":0,"origin":7,"screens":{}}"#].enumerated() {
                let name = SessionFolder.name(of: "t\(index)")
                _ = FileManager.default.createFile(atPath: "\(path)/\(name)", contents: Data(content.utf8), attributes: [.posixPermissions: 0o600])
                let taken = try #require(folder.take(name, renamingTo: name + ".next"))
                let bytes = try taken.get()
                guard case .failure = KeptSession.parse(bytes) else {
                    Issue.record("\(content) was read as a session")
                    continue
                }
            }
            // A file open to others, a file too large, a folder in its place: refused, never read.
            let open = SessionFolder.name(of: "open")
            _ = FileManager.default.createFile(atPath: "\(path)/\(open)", contents: Self.kept().data, attributes: [.posixPermissions: 0o644])
            #expect(throws: SessionFolder.Refusal.self) { try folder.take(open, renamingTo: "x")?.get() }
            let large = SessionFolder.name(of: "large")
            _ = FileManager.default.createFile(
                atPath: "\(path)/\(large)", contents: Data(count: SessionFolder.maxFileBytes + 1), attributes: [.posixPermissions: 0o600])
            #expect(throws: SessionFolder.Refusal.self) { try folder.take(large, renamingTo: "y")?.get() }
            let directory = SessionFolder.name(of: "directory")
            try FileManager.default.createDirectory(atPath: "\(path)/\(directory)", withIntermediateDirectories: false)
            #expect(throws: SessionFolder.Refusal.self) { try folder.take(directory, renamingTo: "z")?.get() }
        }
    }

    @Test func aFolderOpenToOthersIsRefused() throws {
        let path = NSTemporaryDirectory() + "vmhost-sessions-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: path) }
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        guard case .failure(let refusal) = SessionFolder.prepare(path) else {
            Issue.record("a folder open to others was taken")
            return
        }
        #expect(refusal.description.contains("chmod 700"))
        _ = FileManager.default.createFile(atPath: path + "/file", contents: nil)
        guard case .failure = SessionFolder.prepare(path + "/file") else {
            Issue.record("a file was taken as the folder")
            return
        }
    }

    @Test func theSweepRemovesWhatNoPageCanResumeAndHalfWrittenFiles() throws {
        try Self.withFolder { folder, path in
            let fresh = SessionFolder.name(of: "fresh"), old = SessionFolder.name(of: "old")
            #expect(folder.write(Self.kept(), as: fresh) == nil)
            #expect(folder.write(Self.kept(), as: old) == nil)
            _ = FileManager.default.createFile(atPath: "\(path)/.tmp-\(fresh)", contents: Data("{".utf8))
            _ = FileManager.default.createFile(atPath: "\(path)/other.txt", contents: Data("not ours".utf8))
            try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -3600)], ofItemAtPath: "\(path)/\(old)")
            #expect(folder.sweep(olderThan: .seconds(30)) == 2)
            #expect(try FileManager.default.contentsOfDirectory(atPath: path).sorted() == [fresh, "other.txt"].sorted())
        }
    }

    @Test func aRestoredLogIsAResyncThatGoesOnFromThePagesCount() {
        var log = ResumeLog(maxBytes: 100, restoredAt: 41, received: 12)
        #expect(log.frames(after: 41) == [] && log.overflowed && log.receivedCount == 12)
        log.resynced()
        #expect(log.append([1]) == 42)
    }
}

extension Array where Element == UInt8 {
    var data: Data { Data(self) }
}
