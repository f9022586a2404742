import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import NIOWebSocket
import Testing
@_spi(Transport) import VMHostJSONRPC
@testable import VMHostWebSocket

/// A session's messages read on its connection's event loop (``FrameReader``): queued for the host
/// thread in the order the page sent them, held (with the channel's next read) while the session
/// is not open or has no room, control frames passed on to hummingbird's reader only after the
/// messages before them, and frames the protocol refuses ending the session with their close code.
@Suite struct FrameReaderTests {
    /// A session, as a reader sees it: the pumps it asked for, its refusals.
    final class Page: FrameReceiver {
        let pumps = NIOLockedValueBox(0)
        /// Whether a pump runs here (the host thread idle) or is posted to it.
        let pumpHere = NIOLockedValueBox(false)
        let refusals = NIOLockedValueBox<[(WebSocketErrorCode, String)]>([])

        func pumpInbox() -> Bool {
            pumps.withLockedValue { $0 += 1 }
            return pumpHere.withLockedValue { $0 }
        }

        func refuse(_ code: WebSocketErrorCode, _ reason: String) {
            refusals.withLockedValue { $0.append((code, reason)) }
        }
    }

    /// Counts the reads that reach the socket (placed before the reader, toward the head).
    final class ReadCounter: ChannelOutboundHandler {
        typealias OutboundIn = NIOAny
        var reads = 0
        func read(context: ChannelHandlerContext) {
            reads += 1
            context.read()
        }
    }

    struct Fixture {
        let channel = EmbeddedChannel()
        let counter = ReadCounter()
        let reader: FrameReader<Page>
        let inbox: Inbox<Page, ReceivedMessage>
        let page = Page()
        var seen: Page { page }
        let link: SessionLink

        init(limits: Inbox<Page, ReceivedMessage>.Limits = .init(), maxMessageBytes: Int = 1024) throws {
            reader = FrameReader(eventLoop: channel.eventLoop, maxMessageBytes: maxMessageBytes)
            inbox = Inbox(limits: limits)
            link = SessionLink(channel: channel)
            try channel.pipeline.syncOperations.addHandler(counter)
            try channel.pipeline.syncOperations.addHandler(reader)
        }

        func start() {
            reader.handle.start(
                FrameReader.Target(
                    id: 1, receiver: page, parsing: ParsedFrame.Parsing(keptArrayMembers: 1000), inbox: inbox, link: link,
                    resumption: nil))
            channel.embeddedEventLoop.run()
        }

        func send(_ frame: WebSocketFrame) throws {
            try channel.writeInbound(frame)
        }

        func text(_ text: String, fin: Bool = true, opcode: WebSocketOpcode = .text) throws {
            try send(WebSocketFrame(fin: fin, opcode: opcode, data: channel.allocator.buffer(string: text)))
        }

        /// The methods of the messages queued so far (told apart by their sizes: each method a
        /// letter repeated, as many times as its place in the alphabet), taken and counted handled.
        func handled() -> [String] {
            var methods: [String] = []
            while let (_, message, _) = inbox.next() {
                let length = message.frame.byteCount - FrameReaderTests.request("").utf8.count
                let letters = Array("abcdefghijklmnopqrstuvwxyz")
                methods.append(length >= 1 && length <= letters.count ? String(repeating: letters[length - 1], count: length) : "")
                inbox.handled(1, byteCount: message.inboxBytes)
            }
            channel.embeddedEventLoop.run()
            return methods
        }

        /// The control frames passed on to hummingbird's reader so far.
        func passedOn() throws -> [WebSocketOpcode] {
            var opcodes: [WebSocketOpcode] = []
            while let frame = try channel.readInbound(as: WebSocketFrame.self) { opcodes.append(frame.opcode) }
            return opcodes
        }

        func reads() -> Int {
            channel.read()
            return counter.reads
        }
    }

    static func request(_ method: String) -> String { #"{"jsonrpc":"2.0","id":1,"method":"\#(method)"}"# }

    @Test func framesBeforeTheSessionOpensWaitWithTheNextReadThenGoInOrder() throws {
        let fixture = try Fixture()
        try fixture.text(Self.request("a"))
        let split = Self.request("bb")
        try fixture.text(String(split.prefix(10)), fin: false)
        try fixture.text(String(split.dropFirst(10)), fin: true, opcode: .continuation)
        #expect(fixture.reads() == 0)
        #expect(fixture.handled() == [])
        fixture.start()
        #expect(fixture.seen.pumps.withLockedValue { $0 } == 1)
        #expect(fixture.reads() == 2)  // the one held, and the one asked for now
        #expect(fixture.handled() == ["a", "bb"])
    }

    @Test func aSessionWithoutRoomHoldsItsFramesAndReadsUntilAMessageIsHandled() throws {
        let fixture = try Fixture(limits: .init(sessionMessages: 2))
        fixture.start()
        let readsBefore = fixture.reads()
        for method in ["a", "bb", "ccc"] { try fixture.text(Self.request(method)) }
        try fixture.send(WebSocketFrame(fin: true, opcode: .ping, data: ByteBuffer()))
        try fixture.send(WebSocketFrame(fin: true, opcode: .connectionClose, data: ByteBuffer()))
        // Two queued, the third, the ping and the close held; no read reaches the socket.
        #expect(fixture.inbox.waiting(1).messages == 2)
        #expect(fixture.reads() == readsBefore)
        #expect(try fixture.passedOn() == [])
        let drained = NIOLockedValueBox(false)
        fixture.reader.whenDrained().whenSuccess { drained.withLockedValue { $0 = true } }
        #expect(!drained.withLockedValue { $0 })
        // Handling one makes room for one: the third is queued, the control frames still wait.
        let (_, first, _) = try #require(fixture.inbox.next())
        fixture.inbox.handled(1, byteCount: first.inboxBytes)
        fixture.channel.embeddedEventLoop.run()
        #expect(fixture.inbox.waiting(1).messages == 2)
        #expect(try fixture.passedOn() == [])
        // Handling the next: the control frames go on, after every message before them.
        let (_, second, _) = try #require(fixture.inbox.next())
        fixture.inbox.handled(1, byteCount: second.inboxBytes)
        fixture.channel.embeddedEventLoop.run()
        #expect(try fixture.passedOn() == [.ping, .connectionClose])
        #expect(drained.withLockedValue { $0 })
        #expect(fixture.reads() == readsBefore + 2)  // the one held, and the one asked for now
        #expect(fixture.handled() == ["ccc"])
    }

    @Test func aMessageAnsweredOnTheEventLoopMakesTheNextWaitForItsReplyToBeWritten() throws {
        let fixture = try Fixture()
        fixture.seen.pumpHere.withLockedValue { $0 = true }
        fixture.start()
        let readsBefore = fixture.reads()
        try fixture.text(Self.request("a"))
        try fixture.text(Self.request("bb"))
        // The first was answered here: the second waits for the loop's tasks (the reply's write),
        // and so does the read after the one that brought it.
        #expect(fixture.inbox.waiting(1).messages == 1)
        #expect(fixture.reads() == readsBefore)
        fixture.channel.embeddedEventLoop.run()
        #expect(fixture.inbox.waiting(1).messages == 2)
        #expect(fixture.handled() == ["a", "bb"])
        // With nothing held, a read is made while a reply waits to be written.
        try fixture.text(Self.request("ccc"))
        #expect(fixture.reads() == readsBefore + 2)
        fixture.channel.embeddedEventLoop.run()
        #expect(fixture.handled() == ["ccc"])
    }

    @Test(arguments: [
        (WebSocketFrame(fin: true, opcode: .binary, data: ByteBuffer(bytes: [1])), WebSocketErrorCode.unacceptableData),
        (WebSocketFrame(fin: true, rsv1: true, opcode: .text, data: ByteBuffer(string: "{}")), .protocolError),
        (WebSocketFrame(fin: true, opcode: WebSocketOpcode(encodedWebSocketOpcode: 0x3)!, data: ByteBuffer()), .protocolError),
        (WebSocketFrame(fin: true, opcode: .continuation, data: ByteBuffer(string: "x")), .protocolError),
    ])
    func aRefusedFrameEndsTheSessionAndWhatFollowsIsDropped(frame: WebSocketFrame, code: WebSocketErrorCode) throws {
        let fixture = try Fixture()
        fixture.start()
        try fixture.text(Self.request("a"))
        try fixture.send(frame)
        try fixture.text(Self.request("bb"))
        try fixture.send(WebSocketFrame(fin: true, opcode: .connectionClose, data: ByteBuffer()))
        let refusals = fixture.seen.refusals.withLockedValue { $0 }
        #expect(refusals.map(\.0) == [code])
        #expect(fixture.handled() == ["a"])
        // The page's close still reaches hummingbird's reader.
        #expect(try fixture.passedOn() == [.connectionClose])
    }

    @Test func aMessageOverTheLimitAcrossItsFramesIsRefusedWith1009() throws {
        let fixture = try Fixture(maxMessageBytes: 8)
        fixture.start()
        try fixture.text("12345", fin: false)
        try fixture.text("67890", fin: true, opcode: .continuation)
        #expect(fixture.seen.refusals.withLockedValue { $0.map(\.0) } == [.messageTooLarge])
    }

    @Test func theInputEndingWithNothingHeldDrainsTheReader() throws {
        let fixture = try Fixture()
        fixture.start()
        try fixture.text(Self.request("a"))
        let drained = NIOLockedValueBox(false)
        fixture.reader.whenDrained().whenSuccess { drained.withLockedValue { $0 = true } }
        fixture.channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        #expect(drained.withLockedValue { $0 })
        #expect(fixture.handled() == ["a"])
    }

    @Test func aSessionThatLeftTheLinkGetsNothingMore() throws {
        let fixture = try Fixture()
        fixture.start()
        try fixture.text(Self.request("a"))
        fixture.link.leave()
        try fixture.text(Self.request("bb"))
        #expect(fixture.handled() == ["a"])
    }

    @Test func noSessionOpeningDropsWhatWasHeld() throws {
        let fixture = try Fixture()
        try fixture.text(Self.request("a"))
        #expect(fixture.reads() == 0)
        fixture.reader.handle.discard()
        fixture.channel.embeddedEventLoop.run()
        #expect(fixture.handled() == [])
        // The read held is made: the page's close is still to be read.
        #expect(fixture.counter.reads == 1)
    }

    @Test func aLargeMessageIsParsedOffTheEventLoopAndTheFramesAfterItWait() async throws {
        let channel = NIOAsyncTestingChannel()
        let limits = Inbox<Page, ReceivedMessage>.Limits(parsedAloneBytes: 16)
        let inbox = Inbox<Page, ReceivedMessage>(limits: limits)
        let reader = try await channel.eventLoop.submit {
            let reader = FrameReader<Page>(eventLoop: channel.eventLoop, maxMessageBytes: 1024)
            try channel.pipeline.syncOperations.addHandler(reader)
            return reader.handle
        }.get()
        reader.start(
            FrameReader.Target(
                id: 1, receiver: Page(), parsing: ParsedFrame.Parsing(keptArrayMembers: 1000), inbox: inbox,
                link: SessionLink(channel: channel), resumption: nil))
        await channel.testingEventLoop.run()
        let large = #"{"jsonrpc":"2.0","id":1,"method":"large","params":[1,2,3]}"#, small = #"{"jsonrpc":"2.0","method":"s"}"#
        try await channel.writeInbound(WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(string: large)))
        try await channel.writeInbound(WebSocketFrame(fin: true, opcode: .text, data: ByteBuffer(string: small)))
        // The large one is parsed on a task; the small one waits for it, then follows it.
        let deadline = ContinuousClock.now + .seconds(30)
        while inbox.waiting(1).messages < 2 {
            try #require(ContinuousClock.now < deadline, "the large message was never queued")
            await channel.testingEventLoop.run()
            await Task.yield()
        }
        var sizes: [Int] = []
        while let (_, message, _) = inbox.next() { sizes.append(message.frame.byteCount) }
        #expect(sizes == [large.utf8.count, small.utf8.count])
    }
}
