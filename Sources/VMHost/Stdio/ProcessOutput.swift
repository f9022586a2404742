#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writing outside the protocol stream, and the standard descriptors.
enum ProcessOutput {
    /// Writes `text` to stderr (fd 2), directly.
    static func stderr(_ text: String) {
        var bytes = Array(text.utf8)
        _ = write(2, &bytes, bytes.count)
    }

    /// Opens /dev/null on each of fds 0, 1 and 2 that is closed (in that order, so each lands on its
    /// own number) and returns the numbers that were closed.
    static func reopenClosedStandardDescriptors() -> Set<Int32> {
        var closed: Set<Int32> = []
        for fd: Int32 in 0...2 where fcntl(fd, F_GETFD) == -1 && errno == EBADF {
            closed.insert(fd)
        }
        for fd in closed.sorted() {
            let opened = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY)
            if opened >= 0 && opened != fd {
                dup2(opened, fd)
                close(opened)
            }
        }
        return closed
    }
}
