import NIOCore
import Testing
@testable import VMHostWebSocket

/// The check that every frame from a page is masked (RFC 6455 §5.1), made on the raw bytes before
/// the WebSocket decoder: fed whole, glued, a byte at a time and cut at every offset, at each
/// length encoding's bounds, and with payloads that look like headers.
@Suite struct FrameScannerTests {
    /// A frame's header and payload: `length` bytes of `fill`, masked or not.
    static func frame(length: Int, masked: Bool = true, fill: UInt8 = 0x61, opcode: UInt8 = 0x1) -> [UInt8] {
        var bytes: [UInt8] = [0x80 | opcode]
        let mask: UInt8 = masked ? 0x80 : 0
        switch length {
        case ..<126:
            bytes.append(mask | UInt8(length))
        case ..<65536:
            bytes.append(mask | 126)
            bytes += [UInt8(length >> 8), UInt8(length & 0xFF)]
        default:
            bytes.append(mask | 127)
            bytes += (0..<8).reversed().map { UInt8(truncatingIfNeeded: UInt64(length) >> (8 * UInt64($0))) }
        }
        if masked { bytes += [1, 2, 3, 4] }
        return bytes + [UInt8](repeating: fill, count: length)
    }

    /// The violations `scanner` reports when `bytes` are fed in `reads`: (read index, offset).
    static func violations(_ bytes: [UInt8], cutAt cuts: [Int]) -> [(read: Int, offset: Int)] {
        var scanner = FrameScanner()
        var found: [(read: Int, offset: Int)] = []
        let bounds = [0] + cuts + [bytes.count]
        for index in 0..<(bounds.count - 1) {
            let buffer = ByteBuffer(bytes: bytes[bounds[index]..<bounds[index + 1]])
            if let offset = scanner.scan(buffer.readableBytesView) {
                found.append((read: index, offset: offset))
                break
            }
        }
        return found
    }

    /// The lengths where the encoding changes: 7 bits up to 125, 16 bits up to 65,535, then 64.
    static let boundaryLengths = [0, 1, 125, 126, 127, 65535, 65536]

    @Test(arguments: boundaryLengths)
    func maskedFramesOfEveryLengthPassWholeAndByteByByte(length: Int) {
        let bytes = Self.frame(length: length) + Self.frame(length: 3)
        #expect(Self.violations(bytes, cutAt: []).isEmpty)
        // A byte at a time (the long payloads: their headers and edges a byte at a time).
        let cuts = length > 200 ? Array(1..<20) + Array((bytes.count - 20)..<bytes.count) : Array(1..<bytes.count)
        #expect(Self.violations(bytes, cutAt: cuts).isEmpty)
    }

    @Test func gluedMaskedFramesCutAtEveryOffsetPass() {
        let bytes = Self.frame(length: 0) + Self.frame(length: 125) + Self.frame(length: 126) + Self.frame(length: 5)
        for cut in 1..<bytes.count {
            #expect(Self.violations(bytes, cutAt: [cut]).isEmpty, "cut at \(cut)")
        }
    }

    @Test(arguments: boundaryLengths)
    func anUnmaskedFrameAfterMaskedOnesIsFoundWhereItStarts(length: Int) {
        let before = Self.frame(length: length)
        let bytes = before + Self.frame(length: 4, masked: false)
        let found = Self.violations(bytes, cutAt: [])
        #expect(found.count == 1 && found[0].offset == before.count)
    }

    @Test func anUnmaskedFrameIsFoundWhereverTheReadsAreCut() {
        let before = Self.frame(length: 126) + Self.frame(length: 2)
        let bytes = before + Self.frame(length: 4, masked: false)
        let start = before.count
        for cut in 1..<bytes.count {
            let found = Self.violations(bytes, cutAt: [cut])
            // Known at the header's second byte (its mask bit): in the read that holds it, at the
            // frame's offset there (0 when the frame started in the read before).
            let expected = start + 1 < cut ? (read: 0, offset: start) : (read: 1, offset: max(0, start - cut))
            #expect(found.count == 1 && found[0] == expected, "cut at \(cut): \(found)")
        }
    }

    @Test func byteByByteTheUnmaskedFrameIsFoundAtItsSecondByte() {
        let before = Self.frame(length: 70_000)
        let bytes = before + Self.frame(length: 0, masked: false)
        let cuts = Array(1..<bytes.count)
        let found = Self.violations(bytes, cutAt: cuts)
        // Read i holds byte i: the second header byte is at before.count + 1; the frame started a
        // read earlier, so the offset is 0.
        #expect(found.count == 1 && found[0] == (read: before.count + 1, offset: 0))
    }

    @Test func aPayloadThatLooksLikeAnUnmaskedHeaderIsSkipped() {
        // 0x81 0x05: an unmasked text header, as payload of masked frames.
        let payload: [UInt8] = [0x81, 0x05, 0x81, 0x05]
        let masked = [0x81, 0x80 | UInt8(payload.count), 1, 2, 3, 4] + payload
        let bytes = masked + masked
        #expect(Self.violations(bytes, cutAt: []).isEmpty)
        for cut in 1..<bytes.count { #expect(Self.violations(bytes, cutAt: [cut]).isEmpty, "cut at \(cut)") }
    }

    @Test func aLengthOfTwoToTheSixtyFourMinusOneIsCountedWithoutOverflow() {
        // The largest length a header can announce: the rest of the stream is its payload.
        var bytes: [UInt8] = [0x82, 0x80 | 127] + [UInt8](repeating: 0xFF, count: 8) + [1, 2, 3, 4]
        bytes += Self.frame(length: 3, masked: false)
        #expect(Self.violations(bytes, cutAt: []).isEmpty)
        #expect(Self.violations(bytes, cutAt: Array(1..<bytes.count)).isEmpty)
    }

    @Test func anUnmaskedControlFrameIsFoundToo() {
        // A ping (0x9) and a close (0x8) must be masked as data frames are.
        for opcode: UInt8 in [0x8, 0x9, 0xA] {
            let bytes = Self.frame(length: 2) + Self.frame(length: 2, masked: false, opcode: opcode)
            let found = Self.violations(bytes, cutAt: [])
            #expect(found.count == 1 && found[0].offset == 8, "opcode \(opcode)")
        }
    }

    @Test func headerLengthsAtEachEncoding() {
        #expect(FrameScanner.headerLength([0x81, 0x80 | 125]) == 6)
        #expect(FrameScanner.headerLength([0x81, 0x80 | 126]) == 8)
        #expect(FrameScanner.headerLength([0x81, 0x80 | 127]) == 14)
        #expect(FrameScanner.headerLength([0x81, 125]) == 2)
        #expect(FrameScanner.payloadLength([0x81, 0x80 | 126, 0xFF, 0xFF]) == 65535)
        #expect(FrameScanner.payloadLength([0x81, 0x80 | 127, 0, 0, 0, 0, 0, 1, 0, 0]) == 65536)
    }
}
