import Testing
@testable import VMHostWebSocket

/// What the supervisor counts as a worker's open connections, against `--max-connections`.
@Suite struct SupervisorCountTests {
    @Test func aConnectionHandedOverIsOpenUntilItCloses() {
        #expect(Supervisor.openConnections(passed: 0, closed: 0) == 0)
        #expect(Supervisor.openConnections(passed: 2, closed: 0) == 2)
        #expect(Supervisor.openConnections(passed: 2, closed: 2) == 0)
    }

    /// Two connections handed over, one of them dropped and its session suspended: three whichever
    /// of the suspension (the closed count down by one) and the close (up by one) came first, then
    /// two. Counted before its connection's close, the suspension took the closed count below zero,
    /// which read as no connection at all and let a third page in over a cap of two.
    @Test func aSuspensionCountedBeforeItsConnectionsCloseStillCounts() {
        // The suspension first: the closed count goes 0 → −1 (wrapped), then the close → 0.
        let suspended: UInt64 = 0 &- 1
        #expect(Supervisor.openConnections(passed: 2, closed: suspended) == 3)
        #expect(Supervisor.openConnections(passed: 2, closed: suspended &+ 1) == 2)
        // The close first: 0 → 1, then the suspension → 0.
        #expect(Supervisor.openConnections(passed: 2, closed: 1) == 1)
        #expect(Supervisor.openConnections(passed: 2, closed: 0) == 2)
    }
}
