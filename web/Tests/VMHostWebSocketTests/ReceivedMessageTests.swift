import Testing
@_spi(Transport) import VMHostJSONRPC
@testable import VMHostWebSocket

/// A message parsed by its session's reader counts, while it waits for the host thread, for the
/// memory its parse holds, not only for its text.
@Suite struct ReceivedMessageTests {
    static func numbers(_ count: Int, head: String = #"{"jsonrpc":"2.0","method":"flood","params":["#, tail: String = "]}") -> [UInt8] {
        Array((head + Array(repeating: "1", count: count).joined(separator: ",") + tail).utf8)
    }

    @Test func anArrayOfNumbersCountsForItsTreeNotItsText() {
        let text = Self.numbers(100_000)
        let message = ReceivedMessage(text, parsing: ParsedFrame.Parsing(keptArrayMembers: 1000))
        // A slot per number, two bytes of text per number.
        #expect(message.inboxBytes >= 100_000 * 16)
        #expect(message.inboxBytes >= 10 * text.count)
    }

    @Test func aBatchRefusedUnbuiltAndATextThatIsNoJSONCountForTheirText() {
        let parsing = ParsedFrame.Parsing(keptArrayMembers: 1000)
        let batch = Self.numbers(2_000, head: "[", tail: "]")
        #expect(ReceivedMessage(batch, parsing: parsing).inboxBytes == batch.count)
        let broken = Array("[1,2".utf8)
        #expect(ReceivedMessage(broken, parsing: parsing).inboxBytes == broken.count)
    }
}
