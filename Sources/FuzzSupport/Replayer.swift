#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
@_spi(Transport) import VMHostEventLoop

/// The build without libFuzzer: runs a fuzz target's check once over each input file, so its
/// corpus (and any crash file) is checked by a plain `swift build` too.
@HostActor
enum Replayer {
    /// Replays every file named, and every regular file in every directory named; the exit status.
    static func run(name: String, arguments: [String], check: (UnsafeRawBufferPointer) -> Void) -> Int32 {
        guard !arguments.isEmpty, !arguments.contains(where: { $0.hasPrefix("-") }) else {
            say("usage: \(name) FILE|DIR...  (replays inputs; build with -DFUZZING and -sanitize=fuzzer to fuzz)")
            return 2
        }
        var replayed = 0
        for path in arguments {
            let files = isDirectory(path) ? entries(of: path).map { path + "/" + $0 } : [path]
            for file in files.sorted() {
                guard let bytes = contents(of: file) else {
                    say("\(name): cannot read \(file)")
                    return 1
                }
                bytes.withUnsafeBytes { check($0) }
                replayed += 1
            }
        }
        say("\(name): \(replayed) inputs replayed, every invariant held")
        return 0
    }

    private static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    private static func entries(of directory: String) -> [String] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
            }
            var info = stat()
            if !name.hasPrefix("."), stat(directory + "/" + name, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG {
                names.append(name)
            }
        }
        return names
    }

    private static func contents(of path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 { return nil }
            if n == 0 { return bytes }
            bytes.append(contentsOf: chunk[..<n])
        }
    }

    private static func say(_ line: String) {
        var text = Array((line + "\n").utf8)
        _ = write(2, &text, text.count)
    }
}
