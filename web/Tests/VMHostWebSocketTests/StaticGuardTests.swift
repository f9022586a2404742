import Foundation
import Hummingbird
import Testing
@testable import VMHostWebSocket

/// The paths no file may have (traversal, encoded traversal, hidden files, control characters,
/// malformed escapes), and the files that lead out of the static folder through links.
@Suite struct StaticGuardTests {
    typealias Guard = StaticGuard<BasicRequestContext>

    static func refusal(_ path: String, root: String? = nil) -> Int? {
        Guard.refusal(path: path[...], root: root)?.code
    }

    @Test(arguments: ["/", "/index.html", "/web/demo/", "/web/demo/app.js", "/a%20b.txt", "/%E6%BC%A2.html", "/a.b/c",
                      "/a..b", "/a/b..", "/%252e%252e/x", "//", "/a//b"])
    func anOrdinaryPathPasses(path: String) {
        #expect(Self.refusal(path) == nil, "\(path)")
    }

    @Test(arguments: [
        "/..", "/../etc/passwd", "/a/../../etc/passwd", "/web/..", "/.", "/./a", "/...", "/a/.../b",
        "/.env", "/.git/config", "/sub/.hidden", "/..\\etc",
        "/%2e%2e/etc/passwd", "/%2E%2E/etc/passwd", "/%2e./x", "/.%2e/x", "/%2eenv", "/sub/%2Ehidden",
        "/..%2fetc%2fpasswd", "/a%2f..%2f..%2fetc", "/%2F..%2Fetc",
    ])
    func aSegmentStartingWithADotIsRefused404DecodedOrNot(path: String) {
        #expect(Self.refusal(path) == 404, "\(path)")
    }

    @Test(arguments: [
        "/a%00.js", "/index.html%00.js", "/%00", "/a%01", "/a%0a", "/a%0D%0Aheader", "/a%1f", "/a%1F", "/a%7f", "/a%7F",
        "/a\u{0}.js", "/a\u{7F}", "/a\t",
    ])
    func aControlCharacterDecodedOrRawIsRefused400(path: String) {
        #expect(Self.refusal(path) == 400, "\(path)")
    }

    @Test(arguments: ["/a%", "/a%2", "/a%zz", "/a%g0", "/a%0g", "/%%30", "/a%2", "/%"])
    func aMalformedEscapeIsRefused400(path: String) {
        #expect(Self.refusal(path) == 400, "\(path)")
    }

    @Test func everyControlCharacterAndNoOtherIsRefused() {
        for byte in 0...0xFF {
            let path = "/a" + String(format: "%%%02X", byte) + "b"
            let expected: Int? =
                switch byte {
                case 0..<0x20, 0x7F: 400
                default: nil  // "/a/b", "/a.b", "/a%b", bytes that are no UTF-8 alone: file names
                }
            #expect(Self.refusal(path) == expected, "\(path)")
        }
    }

    // MARK: Links

    /// A static folder, and beside it what it must not reach:
    ///
    ///     base/root/file.txt, base/root/inside -> file.txt, base/root/out -> ../secret.txt,
    ///     base/root/outdir -> .., base/root/sub/index.html -> ../../secret.txt, base/root/abs -> /etc,
    ///     base/root/dangling -> ../missing, base/rootevil/secret.txt, base/root/near -> ../rootevil/secret.txt,
    ///     base/secret.txt
    final class Folder {
        let base: URL
        let root: String

        init() throws {
            base = FileManager.default.temporaryDirectory.appendingPathComponent("static-guard-\(UUID().uuidString)")
            let manager = FileManager.default
            let root = base.appendingPathComponent("root")
            try manager.createDirectory(at: root.appendingPathComponent("sub"), withIntermediateDirectories: true)
            try manager.createDirectory(at: root.appendingPathComponent("plain"), withIntermediateDirectories: true)
            try manager.createDirectory(at: base.appendingPathComponent("rootevil"), withIntermediateDirectories: true)
            try Data("secret".utf8).write(to: base.appendingPathComponent("secret.txt"))
            try Data("near".utf8).write(to: base.appendingPathComponent("rootevil/secret.txt"))
            try Data("file".utf8).write(to: root.appendingPathComponent("file.txt"))
            try Data("index".utf8).write(to: root.appendingPathComponent("plain/index.html"))
            let links = [
                ("inside", "file.txt"), ("out", "../secret.txt"), ("outdir", ".."), ("sub/index.html", "../../secret.txt"),
                ("abs", "/etc"), ("dangling", "../missing"), ("near", "../rootevil/secret.txt"), ("loop", "loop"),
            ]
            for (name, target) in links {
                try manager.createSymbolicLink(atPath: root.appendingPathComponent(name).path, withDestinationPath: target)
            }
            // A root given through a link of its own is followed once, at start.
            try manager.createSymbolicLink(atPath: base.appendingPathComponent("linked-root").path, withDestinationPath: "root")
            self.root = try #require(Guard.resolved(base.appendingPathComponent("linked-root").path))
        }

        deinit { try? FileManager.default.removeItem(at: base) }
    }

    @Test func filesAndLinksInsideTheFolderPass() throws {
        let folder = try Folder()
        // outdir/root/file.txt leads out and back in: the file is the folder's own.
        for path in ["/", "/file.txt", "/inside", "/plain/", "/plain", "/plain/index.html", "/missing.txt", "/dangling", "/loop",
                     "/outdir/root/file.txt"] {
            #expect(Self.refusal(path, root: folder.root) == nil, "\(path)")
        }
    }

    @Test func aLinkLeadingOutOfTheFolderIsRefused404() throws {
        let folder = try Folder()
        for path in [
            "/out", "/outdir", "/outdir/secret.txt", "/abs", "/abs/passwd",
            "/sub", "/sub/", "/sub/index.html", "/near",
            "/%6Fut", "/o%75t",  // encoded
        ] {
            #expect(Self.refusal(path, root: folder.root) == 404, "\(path)")
        }
    }

    @Test func anAbsolutePathStaysUnderTheFolder() throws {
        let folder = try Folder()
        // The file server serves the root's own /etc/passwd, which does not exist: nothing to refuse,
        // and nothing outside is reached.
        for path in ["//etc/passwd", "///etc/passwd", "/%2Fetc%2Fpasswd", "/%2F%2Fetc/passwd"] {
            #expect(Self.refusal(path, root: folder.root) == nil, "\(path)")
            #expect(Guard.isInside(root: folder.root, path: Array(path.removingPercentEncoding!.utf8)))
        }
        #expect(Guard.isInside(root: folder.root, path: Array("/file.txt".utf8)))
    }

    @Test func theFolderMustBeTheWholeNameNotAPrefix() throws {
        let folder = try Folder()
        // base/rootevil starts with base/root: still outside.
        #expect(!Guard.isInside(root: folder.root, path: Array("/near".utf8)))
        #expect(Guard.resolved(folder.root + "/near")?.hasPrefix(folder.root) == true)
    }

    @Test func withoutAFolderOnlyThePathIsChecked() {
        #expect(Self.refusal("/out", root: nil) == nil)
        #expect(Self.refusal("/../out", root: nil) == 404)
    }
}
