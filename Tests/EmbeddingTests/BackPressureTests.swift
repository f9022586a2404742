#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization
import Testing
@testable import VMHost
@_spi(Transport) import VMHostEventLoop

/// Hosts of one process never wait on each other's input (issue: a writer to one host ran another
/// host's backlog for seconds), and the input a host holds is bounded as stdio's read-ahead is.
@Suite struct BackPressureTests {
    /// The threads that delivered a host's messages: the threads that ran its input.
    final class Deliveries: Sendable {
        private let state = Mutex<(threads: [UInt], count: Int)>(([], 0))
        private let signal = AsyncSignal()

        func delivered() {
            let me = UInt(pthread_self())
            state.withLock {
                $0.threads.append(me)
                $0.count += 1
            }
            signal.signal()
        }

        var threads: [UInt] { state.withLock { $0.threads } }

        func until(_ count: Int) async -> Bool? {
            await signal.until("\(count) messages", sourceLocation: #_sourceLocation) { state.withLock { $0.count >= count ? true : nil } }
        }
    }

    @Test func aWriterNeverRunsInputQueuedForAnotherHost() async throws {
        let flooded = Deliveries()
        let other = try EmbeddedHost(probeServer, onMessage: { _ in flooded.delivered() })
        let pings = 200
        let writer = await withCheckedContinuation { (done: CheckedContinuation<UInt?, Never>) in
            startThread {
                let me = UInt(pthread_self())
                // The other host's input is written while this thread holds the loop (a borrowed
                // turn), so it is queued; then this thread hands the loop back.
                let deadline = EventLoop.monotonicNanoseconds() + 10_000_000_000
                var held: Bool?
                while held == nil, EventLoop.monotonicNanoseconds() < deadline {
                    held = EventLoop.shared.runHere {
                        for id in 0..<pings { _ = try? other.send(message: request(id, "ping")) }
                        return true
                    }
                    if held == nil { sched_yield() }
                }
                done.resume(returning: held == true ? me : nil)
            }
        }
        let me = try #require(writer, "the loop was never idle")
        #expect(await flooded.until(pings) == true)
        let ranByWriter = flooded.threads.filter { $0 == me }.count
        #expect(ranByWriter == 0, "the writing thread ran \(ranByWriter) of the other host's messages")
        #expect(await other.close() == 0)
    }

    @Test func queuedInputIsBoundedAndAWriterWaitsForItsOwnHostAlone() async {
        let queue = QueuedInput(limit: 100)
        #expect(queue.reserve(60, canWait: false))
        #expect(queue.reserve(40, canWait: false))
        // At the bound: the host thread is refused, a thread waits.
        #expect(!queue.reserve(1, canWait: false))
        let taken = await withCheckedContinuation { (done: CheckedContinuation<Bool, Never>) in
            startThread { done.resume(returning: queue.reserve(50, canWait: true)) }
            // Released by the host's own handling of its queue.
            queue.release(60)
        }
        #expect(taken)
        #expect(queue.bytes == 90)
        queue.release(90)
        // A single write larger than the bound is taken once nothing is queued.
        #expect(queue.reserve(500, canWait: false))
        #expect(!queue.reserve(1, canWait: false))
        queue.release(500)
        #expect(queue.bytes == 0)
    }
}
