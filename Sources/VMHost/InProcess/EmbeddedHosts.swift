#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Logging
import Synchronization
@_spi(Transport) import VMHostCore
@_spi(Transport) import VMHostEventLoop
@_spi(Transport) import VMHostJSONRPC
import VMHostRuntime
@_spi(Transport) import VMHostWire

/// The embedded hosts of the process, on the host thread: the ones with output to deliver, the
/// ones waiting for their work to end, and the idle hook that serves both.
@HostActor
enum EmbeddedHosts {
    private static var idleHook: Int?
    private static var open: [ObjectIdentifier: EmbeddedSession] = [:]
    /// Hosts whose queue had a push since the idle hook last delivered (listed by the queue's hook,
    /// on the pushing thread, once each: ``EmbeddedSession/listed``).
    private nonisolated static let withOutput = Mutex<[EmbeddedSession]>([])
    /// Hosts whose input ended, waiting for their requests and commands to end. Read at every idle
    /// turn; each access calls out to nothing while it lasts (the list is copied before hosts are
    /// asked), so it is not checked for exclusivity at run time.
    @exclusivity(unchecked) private static var waiting: [EmbeddedSession] = []

    /// How many embedded hosts are open (not released yet).
    static var count: Int { open.count }

    static func opened(_ session: EmbeddedSession) {
        open[ObjectIdentifier(session)] = session
        guard idleHook == nil else { return }
        idleHook = EventLoop.shared.addIdleHook { idle() }
    }

    nonisolated static func hasOutput(_ session: EmbeddedSession) {
        withOutput.withLock { $0.append(session) }
    }

    /// The hosts listed with output, and an empty list. Nonisolated: a closure made in a host-actor
    /// function and handed to `withLock` would check its isolation at run time, at each call.
    private nonisolated static func takeWithOutput() -> [EmbeddedSession] {
        withOutput.withLock { list in
            defer { list = [] }
            return list
        }
    }

    static func waitsForWork(_ session: EmbeddedSession) {
        waiting.append(session)
    }

    static func released(_ session: EmbeddedSession) {
        open[ObjectIdentifier(session)] = nil
    }

    /// The host thread has run out of work: delivers the output that work made, and ends the hosts
    /// whose input ended once their work is done.
    private static func idle() {
        while true {
            let sessions = takeWithOutput()
            if sessions.isEmpty { break }
            for session in sessions {
                session.listed.store(false, ordering: .relaxed)
                session.deliver()
            }
        }
        if !waiting.isEmpty {
            let sessions = waiting
            waiting = []
            // Ending a host may call back into an app that opens or closes others.
            let still = sessions.filter { !$0.checkWorkDone() }
            waiting = still + waiting
        }
    }
}
