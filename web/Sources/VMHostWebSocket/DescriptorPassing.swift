#if WebSocket
#if canImport(Glibc)
import Glibc
#endif

/// The messages between the supervisor and a worker (``WorkerPool``, ``WorkerLink``), over a
/// `SOCK_SEQPACKET` socket pair: each message is one byte, and the supervisor's carry a connection
/// (`SCM_RIGHTS`).
enum DescriptorPassing {
    /// Supervisor → worker, with a connection: serve it.
    static let serve: UInt8 = 0x53  // "S"
    /// Supervisor → worker, with a connection: answer it 503 and close it (over the caps, or stopping).
    static let refuse: UInt8 = 0x52  // "R"
    /// Worker → supervisor: ready to serve.
    static let ready: UInt8 = 0x4F  // "O"

    /// Bytes of the control data that carries one descriptor: `CMSG_SPACE(sizeof(int))`.
    private static let headerBytes = (MemoryLayout<cmsghdr>.size + MemoryLayout<Int>.size - 1) & ~(MemoryLayout<Int>.size - 1)
    private static let controlBytes = headerBytes + ((MemoryLayout<Int32>.size + MemoryLayout<Int>.size - 1) & ~(MemoryLayout<Int>.size - 1))

    /// Sends `byte`, with `descriptor` when given, without waiting: false when the socket cannot
    /// take it now (`errno` says why: `EAGAIN` when the worker's queue is full, `EPIPE` when it is gone).
    static func send(_ byte: UInt8, descriptor: Int32?, over socket: Int32) -> Bool {
        var data = byte
        return withUnsafeMutablePointer(to: &data) { pointer -> Bool in
            var vector = iovec(iov_base: UnsafeMutableRawPointer(pointer), iov_len: 1)
            return withUnsafeMutablePointer(to: &vector) { vectorPointer -> Bool in
                var message = msghdr()
                message.msg_iov = vectorPointer
                message.msg_iovlen = 1
                let control = UnsafeMutableRawPointer.allocate(byteCount: controlBytes, alignment: MemoryLayout<Int>.alignment)
                defer { control.deallocate() }
                control.initializeMemory(as: UInt8.self, repeating: 0, count: controlBytes)
                if let descriptor {
                    let header = control.bindMemory(to: cmsghdr.self, capacity: 1)
                    header.pointee.cmsg_len = headerBytes + MemoryLayout<Int32>.size
                    header.pointee.cmsg_level = SOL_SOCKET
                    header.pointee.cmsg_type = Int32(SCM_RIGHTS)
                    (control + headerBytes).storeBytes(of: descriptor, as: Int32.self)
                    message.msg_control = control
                    message.msg_controllen = controlBytes
                }
                while true {
                    let sent = sendmsg(socket, &message, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
                    if sent == 1 { return true }
                    if sent < 0 && errno == EINTR { continue }
                    return false
                }
            }
        }
    }

    enum Received {
        /// A message, with the descriptor it carried (nil: none).
        case message(UInt8, Int32?)
        /// The other end is closed (the process is gone).
        case closed
        /// The socket has nothing now (non-blocking), or failed.
        case nothing
    }

    /// Receives one message; blocks unless the socket is non-blocking. Descriptors received are
    /// close-on-exec; one that came with a message not of one byte, or with others, is closed.
    static func receive(over socket: Int32) -> Received {
        var data: UInt8 = 0
        return withUnsafeMutablePointer(to: &data) { pointer -> Received in
            var vector = iovec(iov_base: UnsafeMutableRawPointer(pointer), iov_len: 1)
            return withUnsafeMutablePointer(to: &vector) { vectorPointer -> Received in
                // Room for a few descriptors: more than one is refused, not left open.
                let room = controlBytes * 4
                let control = UnsafeMutableRawPointer.allocate(byteCount: room, alignment: MemoryLayout<Int>.alignment)
                defer { control.deallocate() }
                control.initializeMemory(as: UInt8.self, repeating: 0, count: room)
                var message = msghdr()
                message.msg_iov = vectorPointer
                message.msg_iovlen = 1
                message.msg_control = control
                message.msg_controllen = room
                var received: Int
                repeat {
                    received = recvmsg(socket, &message, Int32(MSG_CMSG_CLOEXEC))
                } while received < 0 && errno == EINTR
                if received == 0 { return .closed }
                if received < 0 { return errno == EAGAIN || errno == EWOULDBLOCK ? .nothing : .closed }
                let descriptors = Self.descriptors(in: control, length: min(Int(message.msg_controllen), room))
                guard received == 1, descriptors.count <= 1, message.msg_flags & Int32(MSG_CTRUNC) == 0 else {
                    for descriptor in descriptors { close(descriptor) }
                    return .nothing
                }
                return .message(pointer.pointee, descriptors.first)
            }
        }
    }

    /// The descriptors of every `SCM_RIGHTS` header in `length` bytes of control data.
    private static func descriptors(in control: UnsafeMutableRawPointer, length: Int) -> [Int32] {
        var descriptors: [Int32] = []
        var offset = 0
        while offset + headerBytes <= length {
            let header = (control + offset).load(as: cmsghdr.self)
            let size = Int(header.cmsg_len)
            guard size >= headerBytes, offset + size <= length else { break }
            if header.cmsg_level == SOL_SOCKET, header.cmsg_type == Int32(SCM_RIGHTS) {
                var at = offset + headerBytes
                while at + MemoryLayout<Int32>.size <= offset + size {
                    descriptors.append((control + at).loadUnaligned(as: Int32.self))
                    at += MemoryLayout<Int32>.size
                }
            }
            offset += (size + MemoryLayout<Int>.size - 1) & ~(MemoryLayout<Int>.size - 1)
        }
        return descriptors
    }
}
#endif
