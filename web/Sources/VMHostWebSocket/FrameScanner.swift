#if WebSocket
import NIOCore

/// Follows the frames of a WebSocket stream from the client by their headers alone (RFC 6455
/// §5.2), across reads, to find one that is not masked.
struct FrameScanner {
    private var header: [UInt8] = []
    /// Payload bytes of the current frame still to pass.
    private var payloadLeft: UInt64 = 0

    /// The offset in `bytes` where an unmasked frame starts (0 when it started in an earlier
    /// read), or nil when every frame so far is masked.
    mutating func scan(_ bytes: ByteBufferView) -> Int? {
        var index = bytes.startIndex
        var frameStart: Int?
        while index < bytes.endIndex {
            if payloadLeft > 0 {
                let skipped = min(UInt64(bytes.endIndex - index), payloadLeft)
                payloadLeft -= skipped
                index += Int(skipped)
                continue
            }
            if header.isEmpty { frameStart = index }
            header.append(bytes[index])
            index += 1
            guard header.count >= 2 else { continue }
            if header.count == 2, header[1] & 0x80 == 0 { return (frameStart ?? bytes.startIndex) - bytes.startIndex }
            guard header.count == Self.headerLength(header) else { continue }
            payloadLeft = Self.payloadLength(header)
            header.removeAll(keepingCapacity: true)
        }
        return nil
    }

    /// The length of a header whose first two bytes are known: the extended length and the mask.
    static func headerLength(_ header: [UInt8]) -> Int {
        let length = header[1] & 0x7F
        return 2 + (length == 126 ? 2 : length == 127 ? 8 : 0) + (header[1] & 0x80 != 0 ? 4 : 0)
    }

    static func payloadLength(_ header: [UInt8]) -> UInt64 {
        let length = header[1] & 0x7F
        switch length {
        case 126: return UInt64(header[2]) << 8 | UInt64(header[3])
        case 127: return header[2..<10].reduce(0) { $0 << 8 | UInt64($1) }
        default: return UInt64(length)
        }
    }
}
#endif
