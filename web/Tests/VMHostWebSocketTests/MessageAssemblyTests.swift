import NIOWebSocket
import Testing
@testable import VMHostWebSocket

/// Joining the frames of a message: at and one past the size limit, whole and a byte per frame,
/// UTF-8 split across frames, and every order of frames RFC 6455 forbids.
@Suite struct MessageAssemblyTests {
    enum Seen: Equatable {
        case incomplete
        case text([UInt8])
        case refused(WebSocketErrorCode)
    }

    static func seen(_ outcome: MessageAssembly.Outcome) -> Seen {
        switch outcome {
        case .incomplete: .incomplete
        case .text(let bytes): .text(bytes)
        case .refused(let code, _): .refused(code)
        }
    }

    /// Adds the frames (the first text, the others continuations, the last with fin); the outcome
    /// of each.
    static func feed(_ parts: [[UInt8]], maxBytes: Int) -> [Seen] {
        var assembly = MessageAssembly(maxBytes: maxBytes)
        return parts.enumerated().map { index, part in
            seen(assembly.add(index == 0 ? .text : .continuation, fin: index == parts.count - 1, data: part))
        }
    }

    static let limit = 64

    @Test func aMessageOfExactlyTheLimitIsServedAndOneByteMoreIsRefusedWith1009() {
        let atLimit = [UInt8](repeating: 0x61, count: Self.limit)
        #expect(Self.feed([atLimit], maxBytes: Self.limit) == [.text(atLimit)])
        #expect(Self.feed([atLimit + [0x61]], maxBytes: Self.limit) == [.refused(.messageTooLarge)])
    }

    @Test func byteByByteTheLimitHoldsAcrossFrames() {
        let atLimit = [UInt8](repeating: 0x62, count: Self.limit)
        let dripped = atLimit.map { [$0] }
        #expect(Self.feed(dripped, maxBytes: Self.limit) == Array(repeating: .incomplete, count: Self.limit - 1) + [.text(atLimit)])
        // One more byte: refused at the frame that passes the limit, not before.
        let over = Self.feed(dripped + [[0x62]], maxBytes: Self.limit)
        #expect(over == Array(repeating: .incomplete, count: Self.limit) + [.refused(.messageTooLarge)])
    }

    /// 62 bytes, with characters of two, three and four bytes.
    static let mixed = Array("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"} é 漢 😀 padding!!".utf8)

    @Test(arguments: 0...62)
    func twoFramesCutAnywhereJoinToTheMessage(cut: Int) {
        let message = Self.mixed
        // Whatever the cut, a character split over two frames included, the message is whole.
        let outcome = Self.feed([Array(message[..<cut]), Array(message[cut...])], maxBytes: Self.limit)
        #expect(outcome == [.incomplete, .text(message)])
    }

    @Test func aMessageOfMultibyteCharactersAByteAFrameIsWhole() {
        let outcome = Self.feed(Self.mixed.map { [$0] }, maxBytes: Self.limit)
        #expect(outcome.last == .text(Self.mixed))
        #expect(outcome.count == Self.mixed.count)
    }

    @Test func emptyTextFramesMakeAnEmptyMessage() {
        #expect(Self.feed([[]], maxBytes: Self.limit) == [.text([])])
        #expect(Self.feed([[], [], []], maxBytes: Self.limit) == [.incomplete, .incomplete, .text([])])
    }

    @Test(arguments: [
        [0xFF],  // never in UTF-8
        [0xC0, 0xAF],  // an overlong '/'
        [0xE0, 0x80, 0xAF],  // an overlong '/' in three bytes
        [0xED, 0xA0, 0x80],  // a surrogate
        [0xF4, 0x90, 0x80, 0x80],  // past U+10FFFF
        [0x61, 0xE6, 0xBC],  // a character cut short at the end of the message
        [0x80],  // a continuation byte alone
    ] as [[UInt8]])
    func textThatIsNotUTF8IsRefusedWith1007WholeOrByteByByte(bytes: [UInt8]) {
        #expect(Self.feed([bytes], maxBytes: Self.limit) == [.refused(.dataInconsistentWithMessage)])
        let dripped = Self.feed(bytes.map { [$0] }, maxBytes: Self.limit)
        #expect(dripped.last == .refused(.dataInconsistentWithMessage))
        #expect(dripped.dropLast().allSatisfy { $0 == .incomplete })
    }

    @Test func aBinaryMessageIsRefusedWith1003() {
        var assembly = MessageAssembly(maxBytes: Self.limit)
        #expect(Self.seen(assembly.add(.binary, fin: true, data: [1, 2])) == .refused(.unacceptableData))
    }

    @Test func aContinuationWithNothingToContinueIsRefusedWith1002() {
        var assembly = MessageAssembly(maxBytes: Self.limit)
        #expect(Self.seen(assembly.add(.continuation, fin: true, data: [0x61])) == .refused(.protocolError))
        // Nor after a message that ended.
        var after = MessageAssembly(maxBytes: Self.limit)
        #expect(Self.seen(after.add(.text, fin: true, data: [0x61])) == .text([0x61]))
        #expect(Self.seen(after.add(.continuation, fin: false, data: [0x61])) == .refused(.protocolError))
    }

    @Test func aNewMessageBeforeTheLastEndedIsRefusedWith1002() {
        for kind in [MessageAssembly.Kind.text, .binary] {
            var assembly = MessageAssembly(maxBytes: Self.limit)
            #expect(Self.seen(assembly.add(.text, fin: false, data: [0x61])) == .incomplete)
            #expect(Self.seen(assembly.add(kind, fin: true, data: [0x61])) == .refused(.protocolError))
        }
    }

    @Test func messagesFollowingEachOtherStartAfresh() {
        var assembly = MessageAssembly(maxBytes: 4)
        #expect(Self.seen(assembly.add(.text, fin: false, data: [0x61, 0x62])) == .incomplete)
        #expect(Self.seen(assembly.add(.continuation, fin: true, data: [0x63, 0x64])) == .text([0x61, 0x62, 0x63, 0x64]))
        // The next message's limit counts from its own first byte.
        #expect(Self.seen(assembly.add(.text, fin: true, data: [0x65, 0x66, 0x67, 0x68])) == .text([0x65, 0x66, 0x67, 0x68]))
    }

    @Test func aLimitOfZeroRefusesAnyByte() {
        #expect(Self.feed([[]], maxBytes: 0) == [.text([])])
        #expect(Self.feed([[0x61]], maxBytes: 0) == [.refused(.messageTooLarge)])
    }
}
