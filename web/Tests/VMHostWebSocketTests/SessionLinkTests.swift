import NIOCore
import NIOEmbedded
import NIOWebSocket
import Testing
@testable import VMHostWebSocket

/// Who writes a session's output to its connection (``SessionLink``): the host thread itself,
/// handing each turn's frames to the event loop, as long as the socket takes them; a writer task,
/// started for the purpose, while it does not and for the close, which goes on while it is woken
/// and then gives the writing back. Frames reach the connection in the order they were taken,
/// whoever wrote them.
@Suite struct SessionLinkTests {
    /// The text of each frame written to `channel` so far.
    static func written(_ channel: EmbeddedChannel) throws -> [String] {
        channel.embeddedEventLoop.run()
        var texts: [String] = []
        while let frame = try channel.readOutbound(as: WebSocketFrame.self) {
            #expect(frame.opcode == .text && frame.fin)
            texts.append(String(buffer: frame.data))
        }
        return texts
    }

    static func bytes(_ texts: String...) -> [[UInt8]] { texts.map { Array($0.utf8) } }
    static func texts(_ bodies: [[UInt8]]) -> [String] { bodies.map { String(decoding: $0, as: UTF8.self) } }

    /// What the host queued, taken all at once as a session's queue gives it.
    final class Queued: @unchecked Sendable {
        var bodies: [[UInt8]] = []
        func add(_ texts: String...) { bodies += texts.map { Array($0.utf8) } }
        func take() -> [[UInt8]]? {
            guard !bodies.isEmpty else { return nil }
            defer { bodies = [] }
            return bodies
        }
    }

    /// `link.writeOrWake` of what `queued` holds: whether a writer is to be started.
    static func wakes(_ link: SessionLink, direct: Bool, _ queued: Queued, seen: Queued? = nil) -> Bool {
        guard let seen else { return link.writeOrWake(direct: direct, take: queued.take, observe: nil) }
        return link.writeOrWake(direct: direct, take: queued.take, observe: { body in seen.bodies.append(body) })
    }

    @Test func theHostThreadWritesEachTurnsOutputInOneTask() throws {
        let channel = EmbeddedChannel()
        let link = SessionLink(channel: channel)
        let queued = Queued(), seen = Queued()
        queued.add("1", "2")
        #expect(!Self.wakes(link, direct: true, queued, seen: seen))
        // Seen as taken, before the event loop wrote them.
        #expect(Self.texts(seen.bodies) == ["1", "2"])
        #expect(queued.bodies.isEmpty)
        #expect(try Self.written(channel) == ["1", "2"])
        // A control frame is handed over at once.
        link.sendControl(Array("ack".utf8))
        #expect(try Self.written(channel) == ["ack"])
    }

    @Test func aFullSocketOrAnEndStartsAWriterWhichGivesTheWritingBack() throws {
        let channel = EmbeddedChannel()
        let link = SessionLink(channel: channel)
        let queued = Queued()
        queued.add("1")
        channel.isWritable = false
        // The socket cannot take more: a writer is to be started; nothing is taken.
        #expect(Self.wakes(link, direct: true, queued))
        #expect(queued.bodies.count == 1)
        _ = link.writerRound()
        // While it runs: control frames and output are the writer's, and it is not started again.
        channel.isWritable = true
        link.sendControl(Array("ack".utf8))
        queued.add("2")
        #expect(!Self.wakes(link, direct: true, queued))
        #expect(try Self.written(channel) == [])
        // Woken while it wrote: it goes on, writing the control frame first.
        #expect(!link.writerRoundDone())
        #expect(Self.texts(link.writerRound().first) == ["ack"])
        #expect(queued.take() != nil)
        #expect(link.writerRoundDone())
        // The host thread writes again.
        queued.add("3")
        #expect(!Self.wakes(link, direct: true, queued))
        #expect(try Self.written(channel) == ["3"])
        // A session that ended: a writer writes the rest and closes.
        queued.add("4")
        #expect(Self.wakes(link, direct: false, queued))
        #expect(try Self.written(channel) == [])
    }

    @Test func aResumedPageGetsItsSessionFrameThenWhatItMissedThenWhatIsNew() throws {
        let channel = EmbeddedChannel()
        let link = SessionLink(channel: channel, replay: Self.bytes("r1", "r2"))
        link.sendControl(Array("session".utf8))
        let queued = Queued()
        queued.add("new")
        #expect(!Self.wakes(link, direct: true, queued))
        #expect(try Self.written(channel) == ["session", "r1", "r2", "new"])
    }

    @Test func whatWasHandedOverIsWrittenAndNothingAfterTheLinkWasLeft() async throws {
        let channel = EmbeddedChannel()
        let link = SessionLink(channel: channel)
        let queued = Queued()
        queued.add("1")
        #expect(!Self.wakes(link, direct: true, queued))
        // Handed to the event loop before the link was left: written before hummingbird's close.
        link.leave()
        queued.add("2")
        #expect(!Self.wakes(link, direct: true, queued))
        link.sendControl(Array("ack".utf8))
        #expect(try Self.written(channel) == ["1"])
        // Its reader does not wait for a close.
        await link.closeWritten()
    }
}
