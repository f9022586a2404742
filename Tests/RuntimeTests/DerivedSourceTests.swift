@_spi(Transport) import VMHostEventLoop
import Testing
@testable import VMHostRuntime

/// A derivation's sources are what its last computation read, whatever order, repeats or number
/// of reads it made: a source read in the same order is kept as it is, one no longer read stops
/// recomputing it, and one read for the first time starts.
@Suite("Derived sources")
@HostActor
struct DerivedSourceTests {
    /// A derivation that reads the properties `plan` names, in its order, counting computations.
    @HostActor
    final class Reading {
        let node = DerivedNode()
        var plan: [Property<Int>]
        var computations = 0

        init(_ plan: [Property<Int>]) {
            self.plan = plan
            node.recompute = { [unowned self] in compute() }
            compute()
        }

        func compute() {
            computations += 1
            _ = node.track { plan.reduce(0) { $0 + $1.value } }
        }
    }

    @Test func theSourcesAreWhatTheLastComputationRead() {
        let a = Property(0), b = Property(0), c = Property(0)
        let reading = Reading([a, b])
        #expect(reading.computations == 1)
        a.value = 1
        c.value = 1
        #expect(reading.computations == 2, "a source recomputes, a property never read does not")

        // Another order, with a repeat: the same two sources.
        reading.plan = [b, a, b]
        b.value = 1
        a.value = 2
        c.value = 2
        #expect(reading.computations == 4)

        // Fewer: `a` recomputes once more (it was read last time), then is no longer a source.
        reading.plan = [b]
        a.value = 3
        a.value = 4
        #expect(reading.computations == 5)
        b.value = 2
        #expect(reading.computations == 6)

        // More: `c`, read after the others, becomes one.
        reading.plan = [b, c]
        b.value = 3
        c.value = 3
        a.value = 5
        #expect(reading.computations == 8)

        // One skipped, one new in its place.
        reading.plan = [a, c]
        b.value = 4
        #expect(reading.computations == 9, "b was still a source of the last computation")
        b.value = 5
        a.value = 6
        c.value = 4
        #expect(reading.computations == 11)

        reading.node.stop()
        a.value = 7
        c.value = 5
        #expect(reading.computations == 11, "a stopped derivation has no sources")
    }
}
