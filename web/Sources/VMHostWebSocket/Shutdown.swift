#if WebSocket
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization
@_spi(Transport) import VMHost
@_spi(Transport) import VMHostEventLoop

/// SIGTERM and SIGINT (protocol/SPEC.md §7, §12): the first stops the server, which ends every
/// session (each writes what it owes its page and closes with 1001) and exits 0 once none is
/// left, or a second after the signal whatever its peers do (a page that never answers the
/// close, a bare connection, half a request); a second signal exits at once.
///
/// Any thread may take the signal: its handler only writes the signal's number to a pipe, which a
/// thread of its own reads.
///
/// A worker (``WorkerPool``) takes its first signal only: its supervisor forwards the signal it
/// got, and one sent to the whole process group reaches the worker too; ending the worker at once
/// on the second, and so closing its sessions without their 1001, is the supervisor's to decide
/// (at its own second signal it sends the workers SIGUSR1, which ends a worker at once as a second
/// signal ends a server alone: what `beforeExit` owes is written, a recording's end, the trace).
enum ServerShutdown {
    /// How long the sessions have to close after the first signal.
    static let grace: Int32 = 1000

    /// Installs the handlers; `stop` runs (on the reading thread) at the first signal, `beforeExit`
    /// once before the process ends. `escalate`: a second signal ends the process at once.
    static func install(
        escalate: Bool = true, stop: @escaping @Sendable () -> Void, beforeExit: @escaping @Sendable () -> Void
    ) {
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { return }
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFL, fcntl(fds[1], F_GETFL) | O_NONBLOCK)
        signalPipe = fds[1]
        self.beforeExit.withLock { $0 = beforeExit }
        signal(SIGTERM, onSignal)
        signal(SIGINT, onSignal)
        // A worker's "exit at once", from its supervisor.
        if !escalate { signal(SIGUSR1, onSignal) }
        let readEnd = fds[0]
        startThread {
            var number: UInt8 = 0
            while read(readEnd, &number, 1) < 0 && errno == EINTR {}
            if Int32(number) == SIGUSR1 { exitNow() }
            stop()
            // The second signal (when it ends the process), or the end of the grace.
            let deadline = SupervisorClock.nanoseconds() + UInt64(grace) * 1_000_000
            while true {
                let now = SupervisorClock.nanoseconds()
                guard now < deadline else { break }
                var next = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
                let ready = poll(&next, 1, Int32((deadline - now + 999_999) / 1_000_000))
                if ready > 0 {
                    while read(readEnd, &number, 1) < 0 && errno == EINTR {}
                    if escalate || Int32(number) == SIGUSR1 { break }
                }
            }
            exitNow()
        }
    }

    nonisolated(unsafe) private static var signalPipe: Int32 = -1
    private static let beforeExit = Mutex<(@Sendable () -> Void)?>(nil)
    private static let exiting = Atomic<Bool>(false)

    private static let onSignal: @convention(c) (Int32) -> Void = { number in
        var byte = UInt8(truncatingIfNeeded: number)
        _ = write(signalPipe, &byte, 1)
    }

    /// Ends the process with status 0 (once, from whichever thread comes first).
    static func exitNow() {
        guard !exiting.exchange(true, ordering: .acquiringAndReleasing) else { return }
        beforeExit.withLock { $0 }?()
        StderrLogHandler.flush()
        _exit(0)
    }
}
#endif
