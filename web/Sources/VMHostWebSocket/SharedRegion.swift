#if WebSocket
#if canImport(Glibc)
import Glibc
#endif

/// Memory shared by the processes of one server, the supervisor and its workers (``WorkerPool``):
/// a POSIX shared-memory object, unlinked as soon as it is made (nothing is left anywhere once
/// the processes are gone), mapped by each process, with a process-shared mutex at its start.
///
/// The mutex is robust: a worker that dies holding it (killed) does not leave it held; the next
/// holder is told (``withLock(_:)``'s `recovered`), and what it reads may then be half-written: a
/// reader checks every value it takes from the region, as it would data from outside.
public final class SharedRegion: @unchecked Sendable {
    /// The descriptor of the shared object (passed to a worker as it is started).
    public let descriptor: Int32
    /// The bytes after the lock.
    public let count: Int
    private let base: UnsafeMutableRawPointer

    /// Bytes before the data: the mutex, padded to a cache line.
    static let headerBytes = 64

    /// A new region of `count` bytes, all zero.
    public static func create(count: Int) throws(WorkerError) -> SharedRegion {
        precondition(count >= 0 && MemoryLayout<pthread_mutex_t>.size <= headerBytes)
        var random = SystemRandomNumberGenerator()
        var descriptor: Int32 = -1
        for _ in 0..<8 {
            let name = "/vmhost-web-\(getpid())-\(random.next() as UInt64)"
            descriptor = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            if descriptor >= 0 {
                shm_unlink(name)
                break
            }
            guard errno == EEXIST else { break }
        }
        guard descriptor >= 0 else { throw WorkerError("cannot make shared memory: \(WorkerError.errnoText())") }
        let size = headerBytes + count
        guard ftruncate(descriptor, off_t(size)) == 0 else {
            let text = WorkerError.errnoText()
            close(descriptor)
            throw WorkerError("cannot size shared memory: \(text)")
        }
        let region = try map(descriptor: descriptor, count: count)
        var attributes = pthread_mutexattr_t()
        pthread_mutexattr_init(&attributes)
        pthread_mutexattr_setpshared(&attributes, Int32(PTHREAD_PROCESS_SHARED))
        pthread_mutexattr_setrobust(&attributes, Int32(PTHREAD_MUTEX_ROBUST))
        pthread_mutex_init(region.mutex, &attributes)
        pthread_mutexattr_destroy(&attributes)
        return region
    }

    /// The region of `descriptor` (made by ``create(count:)`` in the supervisor), which must hold
    /// `count` bytes after the lock.
    public static func attach(descriptor: Int32, count: Int) throws(WorkerError) -> SharedRegion {
        var status = stat()
        guard fstat(descriptor, &status) == 0, status.st_mode & S_IFMT == S_IFREG, Int(status.st_size) == headerBytes + count
        else { throw WorkerError("descriptor \(descriptor) is not the server's shared memory") }
        return try map(descriptor: descriptor, count: count)
    }

    private static func map(descriptor: Int32, count: Int) throws(WorkerError) -> SharedRegion {
        let size = headerBytes + count
        guard let pointer = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_SHARED, descriptor, 0), pointer != MAP_FAILED else {
            throw WorkerError("cannot map shared memory: \(WorkerError.errnoText())")
        }
        return SharedRegion(descriptor: descriptor, base: pointer, count: count)
    }

    private init(descriptor: Int32, base: UnsafeMutableRawPointer, count: Int) {
        self.descriptor = descriptor
        self.base = base
        self.count = count
    }

    private var mutex: UnsafeMutablePointer<pthread_mutex_t> {
        base.assumingMemoryBound(to: pthread_mutex_t.self)
    }

    /// Runs `body` with the data, under the lock. `recovered` is true when the last holder died
    /// holding the lock: what it was writing may be half-written. Nil when the lock cannot be
    /// taken (it never fails once recovered; a failure is reported as nothing shared).
    public func withLock<T>(_ body: (_ data: UnsafeMutableRawBufferPointer, _ recovered: Bool) -> T) -> T? {
        let result = pthread_mutex_lock(mutex)
        let recovered = result == EOWNERDEAD
        if recovered { pthread_mutex_consistent(mutex) } else if result != 0 { return nil }
        defer { pthread_mutex_unlock(mutex) }
        return body(UnsafeMutableRawBufferPointer(start: base + Self.headerBytes, count: count), recovered)
    }
}

/// Why the supervisor or a worker could not do what it had to.
public struct WorkerError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }

    static func errnoText(_ code: Int32 = errno) -> String { String(cString: strerror(code)) }
}
#endif
