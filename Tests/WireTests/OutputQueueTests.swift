import Synchronization
import Testing
@_spi(Transport) @testable import VMHostWire

/// A mergeable message for tests: name → latest value.
private struct Values: MergeableMessage, Equatable {
    var values: [String: Int]
    mutating func merge(_ newer: Values) { values.merge(newer.values) { $1 } }
    func encode() -> [UInt8] { Array(values.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",").utf8) }
}

private final class StartCount: Sendable {
    let value = Atomic<Int>(0)
}

private func texts(_ bodies: [[UInt8]]) -> [String] { bodies.map { String(decoding: $0, as: UTF8.self) } }

@Suite("Output queue")
struct OutputQueueTests {
    @Test func whileTheWriterKeepsUpNothingMerges() {
        let queue = OutputQueue<Values>()
        queue.push(merging: Values(values: ["a": 1]), key: 1)
        queue.push(merging: Values(values: ["a": 2]), key: 1)
        #expect(texts(queue.takeAll()) == ["a=1", "a=2"])
    }

    @Test func pendingChangesOfAKeyMergeLatestWins() {
        let queue = OutputQueue<Values>()
        queue.setStalled(true)
        for i in 0..<100_000 { queue.push(merging: Values(values: ["count": i]), key: 1) }
        queue.push(merging: Values(values: ["other": 1]), key: 2)
        #expect(queue.pendingCount == 2)
        #expect(texts(queue.takeAll()) == ["count=99999", "other=1"])
    }

    @Test func anEventSealsPendingChangesSoOrderIsKept() {
        let queue = OutputQueue<Values>()
        queue.setStalled(true)
        queue.push(merging: Values(values: ["a": 1]), key: 1)
        queue.push(Array("event".utf8), key: 1)
        queue.push(merging: Values(values: ["a": 2]), key: 1)
        queue.push(merging: Values(values: ["a": 3, "b": 1]), key: 1)
        #expect(texts(queue.takeAll()) == ["a=1", "event", "a=3,b=1"])
    }

    @Test func repliesDoNotSealChangesButKeepTheirPlace() {
        let queue = OutputQueue<Values>()
        queue.setStalled(true)
        queue.push(merging: Values(values: ["a": 1]), key: 1)
        queue.push(Array("reply".utf8))
        queue.push(merging: Values(values: ["a": 2]), key: 1)
        // The newer value joins the waiting change, written before the reply: never older state after it.
        #expect(texts(queue.takeAll()) == ["a=2", "reply"])
    }

    @Test func aPauseHoldsWhatFollowsItMergesItAndKeepsWhatCameBefore() {
        let queue = OutputQueue<Values>()
        queue.push(merging: Values(values: ["a": 1]), key: 1)
        queue.push(Array("pause reply".utf8))
        queue.pause()
        queue.push(merging: Values(values: ["a": 2]), key: 1)  // never merges into a=1, pushed before
        queue.push(Array("reply 1".utf8))
        queue.push(merging: Values(values: ["a": 3, "b": 1]), key: 1)
        queue.push(Array("reply 2".utf8))
        #expect(texts(queue.takeAll()) == ["a=1", "pause reply"])
        #expect(queue.takeAll().isEmpty)
        #expect(queue.takeForProducer() == nil)
        queue.resume()
        queue.push(Array("resume reply".utf8))
        #expect(texts(queue.takeAll()) == ["a=3,b=1", "reply 1", "reply 2", "resume reply"])
        // Not stalled any more: nothing merges.
        queue.push(merging: Values(values: ["a": 4]), key: 1)
        queue.push(merging: Values(values: ["a": 5]), key: 1)
        #expect(texts(queue.takeAll()) == ["a=4", "a=5"])
    }

    /// The same pushes, taken whole and taken one at a time, give the same messages in the same
    /// order, and `more` says whether another may be taken now.
    @Test func takingOneAtATimeMatchesTakingAll() {
        func fill(_ queue: OutputQueue<Values>) {
            queue.setStalled(true)
            queue.push(merging: Values(values: ["a": 1]), key: 1)
            queue.push(merging: Values(values: ["b": 1]), key: 2)
            queue.push(Array("event".utf8), key: 1)
            queue.push(merging: Values(values: ["a": 2]), key: 1)
            queue.push(Array("reply".utf8))
            queue.push(merging: Values(values: ["b": 2]), key: 2)
            queue.drop(key: 1)
            queue.pause()
            queue.push(merging: Values(values: ["c": 1]), key: 3)
        }
        let whole = OutputQueue<Values>(), single = OutputQueue<Values>()
        fill(whole)
        fill(single)
        var taken: [String] = []
        var mores: [Bool] = []
        while let (body, more) = single.takeFirst() {
            taken.append(String(decoding: body, as: UTF8.self))
            mores.append(more)
        }
        #expect(taken == texts(whole.takeAll()))
        // b=2 merged into the waiting b=1; a=2 was dropped with its key; c=1 is held by the pause.
        #expect(taken == ["a=1", "b=2", "event", "reply"])
        #expect(mores == [true, true, true, false])
        // A change taken is no longer waiting: a newer one of its key queues behind it; the pause
        // holds the rest until it ends.
        whole.resume()
        single.resume()
        single.push(merging: Values(values: ["b": 3]), key: 2)
        whole.push(merging: Values(values: ["b": 3]), key: 2)
        taken = []
        while let (body, _) = single.takeFirst() { taken.append(String(decoding: body, as: UTF8.self)) }
        #expect(taken == texts(whole.takeAll()))
        #expect(taken == ["c=1", "b=3"])
        #expect(single.pendingCount == 0 && single.pendingPlainBytes == 0)
    }

    @Test func closingEndsAPause() {
        let queue = OutputQueue<Values>()
        queue.pause()
        queue.push(Array("held".utf8))
        queue.close()
        #expect(texts(queue.takeAll()) == ["held"])
    }

    /// Written by its producer, a queue starts its taker thread only when it is first needed: at
    /// the first hand-off of a full output, or at the close; once.
    @Test func theTakerIsStartedByTheFirstHandOffOrTheCloseOnly() {
        for end in ["hand-off", "close"] {
            let queue = OutputQueue<Values>()
            let starts = StartCount()
            queue.writeOnProducerThread { starts.value.add(1, ordering: .relaxed) }
            queue.push(Array("one".utf8))
            #expect(texts(queue.takeForProducer() ?? []) == ["one"])
            queue.push(merging: Values(values: ["n": 1]), key: 1)
            _ = queue.takeForProducer()
            #expect(starts.value.load(ordering: .relaxed) == 0, "started before \(end)")
            if end == "hand-off" { queue.handOff(Array("rest".utf8)) }
            queue.close()
            queue.close()
            #expect(starts.value.load(ordering: .relaxed) == 1, "\(end)")
        }
    }

    @Test func writersTakeABacklogInSlicesInOrder() {
        let queue = OutputQueue<Values>()
        queue.writeOnProducerThread()
        let body = [UInt8](repeating: UInt8(ascii: "x"), count: 1000)
        queue.setStalled(true)
        for i in 0..<3000 {
            queue.push(Array("\(i):".utf8) + body)
            if i % 100 == 0 { queue.push(merging: Values(values: ["n": i]), key: 1) }
        }
        queue.setStalled(false)
        var seen: [String] = []
        var slices = 0
        while let slice = queue.takeForProducer() {
            slices += 1
            #expect(slice.reduce(0) { $0 + $1.count } <= 256 * 1024 + 1010)
            seen += texts(slice).map { $0.hasPrefix("n=") ? $0 : String($0.prefix { $0 != ":" }) }
        }
        #expect(slices >= 11)
        #expect(seen.filter { !$0.hasPrefix("n=") } == (0..<3000).map(String.init))
        // The changes of one key merged while stalled: one, latest, where the first one was queued.
        #expect(seen.filter { $0.hasPrefix("n=") } == ["n=2900"])
        #expect(queue.pendingCount == 0 && queue.pendingPlainBytes == 0)
    }

    @Test func eventsAreNeverDropped() {
        let queue = OutputQueue<Values>()
        queue.setStalled(true)
        for i in 0..<1000 {
            queue.push(merging: Values(values: ["a": i]), key: 1)
            queue.push(Array("e\(i)".utf8), key: 1)
        }
        let taken = texts(queue.takeAll())
        #expect(taken.count == 2000)
        #expect(taken.filter { $0.hasPrefix("e") } == (0..<1000).map { "e\($0)" })
    }

    @Test func closedQueuesStillHandOverWhatTheyHold() {
        let queue = OutputQueue<Values>()
        queue.push(Array("x".utf8))
        queue.close()
        queue.push(Array("late".utf8))
        #expect(queue.waitAndTakeAll().map(texts) == ["x"])
        #expect(queue.waitAndTakeAll() == nil)
    }
}
