#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The bytes of a file a host reads at start (a recording it replays), bounded: only a regular
/// file is read, opened non-blocking and then checked, so a FIFO or a device is refused without
/// waiting on it (a read that blocks would hold the host thread, every embedded host's, at start).
package enum RegularFile {
    /// Why a file was not read.
    package enum Failure: Error {
        /// It could not be opened or read: the system's reason.
        case unreadable(String)
        /// It is no regular file.
        case notRegular
        /// It holds more than the limit.
        case tooLarge
    }

    /// The bytes of the regular file at `path`, at most `limit` of them.
    package static func contents(of path: String, limit: Int) throws(Failure) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw .unreadable(String(cString: strerror(errno))) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { throw .notRegular }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .unreadable(String(cString: strerror(errno)))
            }
            if count == 0 { return bytes }
            guard bytes.count <= limit - count else { throw .tooLarge }
            bytes.append(contentsOf: chunk[..<count])
        }
    }
}
