import Testing
@testable import VMHostWebSocket

/// The worker's inbox: sessions served in turn (a flooding page delays a healthy one by one of its
/// messages at most), and the room of each session and of the worker.
@Suite struct InboxTests {
    final class Page: Sendable {
        let name: String
        init(_ name: String) { self.name = name }
    }

    static let flooder = (id: 1, page: Page("flooder"))
    static let healthy = (id: 2, page: Page("healthy"))

    /// A message whose first byte tells it apart.
    static func message(_ tag: Character, bytes: Int = 1) -> [UInt8] {
        [UInt8(tag.asciiValue!)] + [UInt8](repeating: 0x20, count: max(0, bytes - 1))
    }

    /// Takes the next message, handles it at once, and says whose it was and its tag.
    static func serve(_ inbox: Inbox<Page, [UInt8]>, ids: [String: Int]) -> String? {
        guard let (page, bytes, _) = inbox.next() else { return nil }
        inbox.handled(ids[page.name]!, byteCount: bytes.count)
        return "\(page.name.first!)\(Character(UnicodeScalar(bytes[0])))"
    }

    static let ids = ["flooder": 1, "healthy": 2, "a": 3, "b": 4, "c": 5]

    @Test func sessionsAreServedOneMessageEachInTurn() {
        let inbox = Inbox<Page, [UInt8]>()
        let (a, b, c) = (Page("a"), Page("b"), Page("c"))
        for tag in ["1", "2", "3"] as [Character] { _ = inbox.append(3, a, Self.message(tag)) }
        for tag in ["1", "2"] as [Character] { _ = inbox.append(4, b, Self.message(tag)) }
        _ = inbox.append(5, c, Self.message("1"))
        var order: [String] = []
        while let served = Self.serve(inbox, ids: Self.ids) { order.append(served) }
        #expect(order == ["a1", "b1", "c1", "a2", "b2", "a3"])
    }

    @Test func aMessageArrivingDuringAFloodersTurnComesBeforeTheFloodersNext() {
        let inbox = Inbox<Page, [UInt8]>()
        for tag in ["1", "2", "3"] as [Character] { _ = inbox.append(Self.flooder.id, Self.flooder.page, Self.message(tag, bytes: 4096)) }
        // The flooder's first message is being handled when the healthy page's arrives.
        let first = inbox.next()
        #expect(first?.receiver === Self.flooder.page)
        _ = inbox.append(Self.healthy.id, Self.healthy.page, Self.message("p"))
        inbox.handled(Self.flooder.id, byteCount: 4096)
        var order: [String] = []
        while let served = Self.serve(inbox, ids: Self.ids) { order.append(served) }
        #expect(order == ["hp", "f2", "f3"])
    }

    /// A flooder that always has more (it appends one each time one of its messages is taken):
    /// whenever the healthy page's message arrives, at most one message of the flooder is handled
    /// before it (the one being handled then).
    @Test(arguments: 0..<12)
    func aHealthyMessageWaitsForOneTurnOfTheFlooderAtMost(arrivesAfter: Int) {
        let inbox = Inbox<Page, [UInt8]>()
        var sent = 0
        func flood() {
            sent += 1
            _ = inbox.append(Self.flooder.id, Self.flooder.page, Self.message("f", bytes: 4 * 1024 * 1024))
        }
        for _ in 0..<4 { flood() }
        var taken = 0, flooderAfterArrival = 0, arrived = false, healthyServed = false
        while !healthyServed, let (page, bytes, _) = inbox.next() {
            if page === Self.healthy.page {
                healthyServed = true
            } else if arrived {
                flooderAfterArrival += 1
            }
            if taken == arrivesAfter {
                // Arrives while this message is handled.
                _ = inbox.append(Self.healthy.id, Self.healthy.page, Self.message("p"))
                arrived = true
            }
            taken += 1
            inbox.handled(page === Self.healthy.page ? Self.healthy.id : Self.flooder.id, byteCount: bytes.count)
            if page === Self.flooder.page { flood() }
        }
        #expect(healthyServed)
        // The one handled when it arrived is counted before the arrival: none after it.
        #expect(flooderAfterArrival == 0)
    }

    @Test func lastListedTellsTheEndOfATurnOfEverySession() {
        let inbox = Inbox<Page, [UInt8]>()
        _ = inbox.append(3, Page("a"), Self.message("1"))
        _ = inbox.append(4, Page("b"), Self.message("1"))
        #expect(inbox.next()?.lastListed == false)
        #expect(inbox.next()?.lastListed == true)
        #expect(inbox.next() == nil)
    }

    @Test func thePumpIsPostedOnceUntilItFindsTheInboxEmpty() {
        let inbox = Inbox<Page, [UInt8]>()
        let page = Page("a")
        #expect(inbox.append(3, page, Self.message("1")))
        #expect(!inbox.append(3, page, Self.message("2")))
        #expect(inbox.next() != nil)
        #expect(!inbox.append(4, Page("b"), Self.message("1")))
        #expect(inbox.next() != nil)
        #expect(inbox.next() != nil)
        #expect(inbox.next() == nil)
        #expect(inbox.append(3, page, Self.message("3")))
    }

    // MARK: Room

    static let small = Inbox<Page, [UInt8]>.Limits(sessionMessages: 3, sessionBytes: 100, workerBytes: 250)

    @Test func aSessionHasRoomBelowItsCountOfMessagesAndNotAtIt() {
        let inbox = Inbox<Page, [UInt8]>(limits: Self.small)
        let page = Page("a")
        _ = inbox.append(3, page, Self.message("1"))
        _ = inbox.append(3, page, Self.message("2"))
        #expect(inbox.hasRoom(3))
        _ = inbox.append(3, page, Self.message("3"))
        #expect(!inbox.hasRoom(3))
        inbox.handled(3, byteCount: 1)
        #expect(inbox.hasRoom(3))
    }

    @Test func aSessionHasRoomBelowItsBytesAndNotAtThem() {
        let inbox = Inbox<Page, [UInt8]>(limits: Self.small)
        let page = Page("a")
        _ = inbox.append(3, page, Self.message("1", bytes: 99))
        #expect(inbox.hasRoom(3))
        _ = inbox.append(3, page, Self.message("2", bytes: 1))
        #expect(!inbox.hasRoom(3))
        #expect(inbox.waiting(3) == (messages: 2, bytes: 100))
        inbox.handled(3, byteCount: 1)
        #expect(inbox.hasRoom(3))
    }

    @Test func theLargestMessageIsReadAloneAndThenTheReaderWaits() {
        let inbox = Inbox<Page, [UInt8]>(limits: Self.small)
        // A session with nothing waiting always reads on, whatever the message's size.
        #expect(inbox.hasRoom(3))
        _ = inbox.append(3, Page("a"), Self.message("1", bytes: 1000))
        #expect(!inbox.hasRoom(3))
    }

    @Test func theWorkersBytesHoldBackEverySessionWithAMessageWaitingButNotAnIdleOne() {
        let inbox = Inbox<Page, [UInt8]>(limits: Self.small)
        _ = inbox.append(3, Page("a"), Self.message("1", bytes: 90))
        _ = inbox.append(4, Page("b"), Self.message("1", bytes: 90))
        #expect(inbox.hasRoom(3) && inbox.hasRoom(4))
        _ = inbox.append(5, Page("c"), Self.message("1", bytes: 70))
        // 250 bytes waiting: at the worker's bound.
        #expect(inbox.waiting() == (messages: 3, bytes: 250))
        #expect(!inbox.hasRoom(3) && !inbox.hasRoom(4) && !inbox.hasRoom(5))
        // A session with nothing waiting reads its message.
        #expect(inbox.hasRoom(6))
        inbox.handled(5, byteCount: 70)
        #expect(inbox.hasRoom(3) && inbox.hasRoom(4) && inbox.hasRoom(5))
    }

    @Test func aWaitingReaderGoesOnWhenItsMessageIsHandled() async {
        let inbox = Inbox<Page, [UInt8]>(limits: Self.small)
        _ = inbox.append(3, Page("a"), Self.message("1", bytes: 1000))
        let reader = Task { await inbox.waitForRoom(3) }
        #expect(await Self.readersWaiting(inbox, 1))
        inbox.handled(3, byteCount: 1000)
        await reader.value
        #expect(inbox.waitingReaders == 0)
    }

    @Test func readersWaitingForTheWorkersRoomGoOnWhenItComesBack() async {
        let inbox = Inbox<Page, [UInt8]>(limits: Self.small)
        let (a, b) = (Page("a"), Page("b"))
        _ = inbox.append(3, a, Self.message("1", bytes: 50))
        _ = inbox.append(3, a, Self.message("2", bytes: 10))
        _ = inbox.append(4, b, Self.message("1", bytes: 200))
        // a: its own room, not the worker's; b: its own message is over its bytes.
        let readers = [Task { await inbox.waitForRoom(3) }, Task { await inbox.waitForRoom(4) }]
        #expect(await Self.readersWaiting(inbox, 2))
        // b's message handled: the worker has room again, and a goes on too.
        inbox.handled(4, byteCount: 200)
        for reader in readers { await reader.value }
        #expect(inbox.waitingReaders == 0)
    }

    @Test func aClosedSessionsMessagesAreDroppedAndItsReaderGoesOn() async {
        let inbox = Inbox<Page, [UInt8]>(limits: Self.small)
        let (a, b) = (Page("a"), Page("b"))
        _ = inbox.append(3, a, Self.message("1", bytes: 200))
        _ = inbox.append(4, b, Self.message("1"))
        let reader = Task { await inbox.waitForRoom(3) }
        #expect(await Self.readersWaiting(inbox, 1))
        inbox.remove(3)
        await reader.value
        #expect(inbox.waiting() == (messages: 1, bytes: 1))
        #expect(inbox.next()?.receiver === b)
        #expect(inbox.next() == nil)
        // Counting a message of a session gone changes nothing.
        inbox.handled(3, byteCount: 200)
        #expect(inbox.waiting() == (messages: 1, bytes: 1))
    }

    @Test func aSessionClosedDuringItsTurnIsNotListedAgain() {
        let inbox = Inbox<Page, [UInt8]>()
        let (a, b) = (Page("a"), Page("b"))
        _ = inbox.append(3, a, Self.message("1"))
        _ = inbox.append(3, a, Self.message("2"))
        _ = inbox.append(4, b, Self.message("1"))
        #expect(inbox.next()?.receiver === a)
        inbox.remove(3)
        #expect(inbox.next()?.receiver === b)
        #expect(inbox.next() == nil)
    }

    // MARK: Parsing

    static let parsing = Inbox<Page, [UInt8]>.Limits(sessionMessages: 3, sessionBytes: 100, workerBytes: 250, parsedAloneBytes: 10)

    @Test func aSmallMessageIsParsedAtOnceWhateverTheWorkerHolds() async {
        let inbox = Inbox<Page, [UInt8]>(limits: Self.parsing)
        _ = inbox.append(3, Page("a"), Self.message("1", bytes: 250))
        await inbox.reserveToParse(4, Page("b"), textBytes: 10)
        #expect(inbox.waiting() == (messages: 1, bytes: 250))
    }

    /// A large message is parsed once the worker has room, with the bytes its parse may make
    /// reserved until it is queued: then it counts for its own size.
    @Test func aLargeMessageIsParsedOnceTheWorkerHasRoomWithItsBytesReserved() async {
        let inbox = Inbox<Page, [UInt8]>(limits: Self.parsing)
        let (a, b) = (Page("a"), Page("b"))
        _ = inbox.append(3, a, Self.message("1", bytes: 250))
        let parser = Task { await inbox.reserveToParse(4, b, textBytes: 11) }
        #expect(await Self.parsersWaiting(inbox, 1))
        #expect(inbox.next()?.receiver === a)
        inbox.handled(3, byteCount: 250)
        await parser.value
        let reserved = Inbox<Page, [UInt8]>.parseReservation(textBytes: 11)
        #expect(reserved == 132)
        #expect(inbox.waiting() == (messages: 0, bytes: reserved))
        // While it parses, a second large message waits: the first one's reservation counts.
        _ = inbox.append(5, Page("c"), Self.message("1", bytes: 120))
        let second = Task { await inbox.reserveToParse(6, Page("d"), textBytes: 11) }
        #expect(await Self.parsersWaiting(inbox, 1))
        // Queued, the first counts for what it holds: the reservation is given back.
        _ = inbox.append(4, b, Self.message("2", bytes: 11))
        await second.value
        #expect(inbox.waiting() == (messages: 2, bytes: 11 + 120 + reserved))
    }

    @Test func aClosedSessionGivesBackItsReservationAndItsMessages() async {
        let inbox = Inbox<Page, [UInt8]>(limits: Self.parsing)
        let (a, b) = (Page("a"), Page("b"))
        _ = inbox.append(3, a, Self.message("1", bytes: 10))
        await inbox.reserveToParse(3, a, textBytes: 20)
        #expect(inbox.waiting() == (messages: 1, bytes: 10 + 240))
        let parser = Task { await inbox.reserveToParse(4, b, textBytes: 20) }
        #expect(await Self.parsersWaiting(inbox, 1))
        #expect(inbox.remove(3) == [Self.message("1", bytes: 10)])
        await parser.value
        #expect(inbox.waiting() == (messages: 0, bytes: 240))
        // A parser of a session closed while it waits goes on, and reserves nothing.
        _ = inbox.append(7, Page("d"), Self.message("1", bytes: 10))
        let closing = Task { await inbox.reserveToParse(5, Page("c"), textBytes: 20) }
        #expect(await Self.parsersWaiting(inbox, 1))
        inbox.remove(5)
        await closing.value
        #expect(inbox.waitingParsers == 0)
        #expect(inbox.waiting() == (messages: 1, bytes: 250))
    }

    /// Lets other tasks run until `count` parsers wait (a bounded number of turns, no clock).
    static func parsersWaiting(_ inbox: Inbox<Page, [UInt8]>, _ count: Int) async -> Bool {
        for _ in 0..<100_000 {
            if inbox.waitingParsers == count { return true }
            await Task.yield()
        }
        Issue.record("\(count) parser(s) never waited: \(inbox.waitingParsers) did")
        return false
    }

    /// Lets other tasks run until `count` readers wait (a bounded number of turns, no clock).
    static func readersWaiting(_ inbox: Inbox<Page, [UInt8]>, _ count: Int) async -> Bool {
        for _ in 0..<100_000 {
            if inbox.waitingReaders == count { return true }
            await Task.yield()
        }
        Issue.record("\(count) reader(s) never waited: \(inbox.waitingReaders) did")
        return false
    }
}
