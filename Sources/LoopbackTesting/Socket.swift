#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The few blocking POSIX socket calls the loopback server needs.
///
/// Plain sockets rather than a server package: the server answers one request per connection on
/// loopback, for tests only, and this keeps the package free of a dependency that would have to
/// be built (and kept building) for the sake of the test suite alone.
package enum Socket {
    package struct Failure: Error, CustomStringConvertible {
        var call: String
        var errno: Int32
        package var description: String { "\(call) failed: \(String(cString: strerror(errno)))" }
    }

    /// A TCP socket listening on 127.0.0.1 at an ephemeral port.
    package static func listenOnLoopback() throws(Failure) -> (fd: Int32, port: UInt16) {
        let fd = try bindLoopback()
        guard listen(fd, 64) == 0 else {
            let error = Failure(call: "listen", errno: errno)
            close(fd)
            throw error
        }
        return (fd, try localPort(fd))
    }

    /// A port on 127.0.0.1 that nothing listens on: bound once and kept bound, never listening, for
    /// the life of the process. Connecting to it is refused, and no other server (of a test running
    /// in parallel) can take the port meanwhile, as it could if the socket were closed.
    package static func unusedLoopbackPort() throws(Failure) -> UInt16 {
        try reservedPort.get()
    }

    private static let reservedPort: Result<UInt16, Failure> = {
        do throws(Failure) {
            let fd = try bindLoopback()
            return .success(try localPort(fd))
        } catch {
            return .failure(error)
        }
    }()

    private static func bindLoopback() throws(Failure) -> Int32 {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw Failure(call: "socket", errno: errno) }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = in_addr_t(0x7f00_0001).bigEndian
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard status == 0 else {
            let error = Failure(call: "bind", errno: errno)
            close(fd)
            throw error
        }
        return fd
    }

    private static func localPort(_ fd: Int32) throws(Failure) -> UInt16 {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let status = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        guard status == 0 else { throw Failure(call: "getsockname", errno: errno) }
        return UInt16(bigEndian: address.sin_port)
    }

    /// Accepts one connection; nil once the listening socket was shut down.
    package static func acceptClient(_ fd: Int32) -> Int32? {
        while true {
            let client = accept(fd, nil, nil)
            if client >= 0 {
                #if canImport(Darwin)
                var yes: Int32 = 1
                setsockopt(client, SOL_SOCKET, SO_NOSIGPIPE, &yes, socklen_t(MemoryLayout<Int32>.size))
                #endif
                return client
            }
            if errno == EINTR || errno == ECONNABORTED { continue }
            return nil
        }
    }

    /// Reads what is available, blocking until something is; an empty result means the peer closed
    /// (or reset) the connection.
    package static func receive(_ fd: Int32, max: Int = 64 * 1024) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: max)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0 { return Array(buffer[..<n]) }
            if n < 0 && errno == EINTR { continue }
            return []
        }
    }

    /// Writes all of `bytes`; false when the peer is gone. Never raises SIGPIPE.
    @discardableResult
    package static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { buffer in
                send(fd, buffer.baseAddress! + offset, buffer.count - offset, noSignal)
            }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { return false }
            offset += n
        }
        return true
    }

    /// Wakes any thread blocked on `fd` (accept, recv): they return at once.
    package static func shutdownBoth(_ fd: Int32) {
        #if canImport(Glibc)
        shutdown(fd, Int32(SHUT_RDWR))
        #else
        shutdown(fd, SHUT_RDWR)
        #endif
    }

    package static func closeSocket(_ fd: Int32) { close(fd) }

    /// Makes closing `fd` reset the connection (RST) instead of ending it in order (FIN).
    package static func resetOnClose(_ fd: Int32) {
        var option = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
    }

    #if canImport(Glibc)
    private static let noSignal = Int32(MSG_NOSIGNAL)
    #else
    private static let noSignal: Int32 = 0  // SO_NOSIGPIPE is set on each accepted socket instead.
    #endif
}
