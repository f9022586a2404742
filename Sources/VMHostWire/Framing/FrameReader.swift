#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What the reader found in the byte stream.
package enum FrameEvent {
    /// One complete message body. The buffer is valid only during the callback.
    case frame(UnsafeRawBufferPointer)
    /// A message larger than the limit was skipped. `byteCount` is its announced size (LSP) or nil
    /// when it is only known to exceed the limit (a line that never ended within it).
    case oversized(byteCount: Int?, limit: Int)
    /// A header block that cannot be used (no `Content-Length`, a bad value, a block too long);
    /// the block is skipped and reading goes on after it.
    case badHeader(String)
    /// ``Framing/auto`` decided which framing the stream uses; reported once, before any frame.
    case framingDetected(Framing)
}

/// An incremental, byte-exact splitter of messages from a stream, in either framing.
///
/// Feed it chunks of any size (one byte at a time works) with ``consume(_:_:)``; it calls back once
/// per complete frame, in order. Memory is bounded by the message limit: an oversized message is
/// never buffered, only counted while it streams past.
package struct FrameReader {
    /// The framing in use: the configured one, or the detected one once ``Framing/auto`` decided.
    package private(set) var framing: Framing
    /// The largest message read; a larger one is skipped.
    package let maxMessageBytes: Int
    /// The longest header block accepted (LSP), from its first byte to the end of the blank line
    /// that ends it, whatever the read sizes were. Blank lines before a block do not count.
    package static let maxHeaderBytes = 8 * 1024

    private var buffer: [UInt8] = []
    private var start = 0
    /// Where the search for the end of the current line or header block resumes: the bytes before
    /// it were searched already, so a message that arrives in many small reads is scanned once.
    private var scanned = 0
    private var state = State.scanning
    /// Nothing but a possible UTF-8 byte order mark has been read yet: a leading BOM is skipped.
    private var atStreamStart = true

    private enum State {
        /// Looking for the end of a line (ndjson) or of a header block (lsp).
        case scanning
        /// Reading an LSP body of this many bytes.
        case body(Int)
        /// Discarding this many more bytes of an oversized LSP body.
        case skippingBody(Int)
        /// Discarding an oversized ndjson line up to its newline.
        case skippingLine
        /// Discarding an oversized header block up to its blank line; the count of trailing CR/LF seen.
        case skippingHeader
    }

    /// A reader of `framing` that skips messages over `maxMessageBytes`.
    package init(framing: Framing, maxMessageBytes: Int) {
        self.framing = framing
        self.maxMessageBytes = max(1, maxMessageBytes)
    }

    /// Bytes held for a message not yet complete.
    package var bufferedByteCount: Int { buffer.count - start }

    /// Appends `bytes` and reports every complete frame (and every skip) they finish, in order.
    package mutating func consume(_ bytes: UnsafeRawBufferPointer, _ handle: (FrameEvent) -> Void) {
        buffer.append(contentsOf: bytes)
        while step(handle) {}
        compact()
    }

    /// Reports a final event for bytes left when the stream ends: a last ndjson line without a
    /// newline is a frame; an unfinished LSP message is reported as a bad header.
    package mutating func finish(_ handle: (FrameEvent) -> Void) {
        if framing == .auto, start < buffer.count, hasContent(start, buffer.count) {
            // The input ended before its first line did: what came is not a header, so it is ndjson.
            framing = .ndjson
            handle(.framingDetected(framing))
        }
        if framing == .ndjson, case .scanning = state, start < buffer.count {
            let end = trimmedEnd(buffer.count)
            if end - start > maxMessageBytes {
                handle(.oversized(byteCount: end - start, limit: maxMessageBytes))
            } else if hasContent(start, end) {
                buffer.withUnsafeBytes { handle(.frame(UnsafeRawBufferPointer(rebasing: $0[start..<end]))) }
            }
        } else if framing == .lsp, start < buffer.count, hasContent(start, buffer.count) {
            handle(.badHeader("the stream ended inside a message"))
        }
        buffer.removeAll()
        start = 0
        scanned = 0
        state = .scanning
    }

    // MARK: Steps

    /// Makes one step of progress; false when more bytes are needed.
    private mutating func step(_ handle: (FrameEvent) -> Void) -> Bool {
        if atStreamStart {
            guard skipByteOrderMark() else { return false }
        }
        if framing == .auto {
            guard detect() else { return false }
            handle(.framingDetected(framing))
        }
        switch state {
        case .scanning:
            return framing == .ndjson ? scanLine(handle) : scanHeader(handle)
        case .body(let length):
            guard buffer.count - start >= length else { return false }
            buffer.withUnsafeBytes { handle(.frame(UnsafeRawBufferPointer(rebasing: $0[start..<start + length]))) }
            start += length
            state = .scanning
            return true
        case .skippingBody(let remaining):
            let available = buffer.count - start
            if available >= remaining {
                start += remaining
                state = .scanning
                return true
            }
            start = buffer.count
            state = .skippingBody(remaining - available)
            return false
        case .skippingLine:
            if let newline = index(of: UInt8(ascii: "\n"), from: start) {
                start = newline + 1
                state = .scanning
                return true
            }
            start = buffer.count
            return false
        case .skippingHeader:
            if let end = headerEnd(from: start) {
                start = end
                state = .scanning
                return true
            }
            // Keep the last three bytes: the blank line may straddle chunks.
            start = max(start, buffer.count - 3)
            return false
        }
    }

    private static let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]

    /// Drops a UTF-8 byte order mark at the very start of the stream; false while the bytes read so
    /// far are a proper prefix of one.
    private mutating func skipByteOrderMark() -> Bool {
        let available = buffer.count - start
        let compared = min(available, Self.byteOrderMark.count)
        if buffer[start..<start + compared].elementsEqual(Self.byteOrderMark[0..<compared]) {
            guard available >= Self.byteOrderMark.count else { return false }
            start += Self.byteOrderMark.count
        }
        atStreamStart = false
        return true
    }

    /// Decides the framing from the first line (whitespace before it is dropped): a header line
    /// (`Name:` with a name of letters, digits, `-` and `_`) starts LSP framing; anything else is
    /// ndjson, where a line that is not JSON is a parse error.
    private mutating func detect() -> Bool {
        while start < buffer.count, isWhitespace(buffer[start]) { start += 1 }
        guard start < buffer.count else { return false }
        var end = start
        while end < buffer.count, end - start < Self.maxHeaderBytes, isHeaderNameByte(buffer[end]) { end += 1 }
        // A name as long as a whole header block is no header, however the bytes arrive.
        let tooLong = end - start >= Self.maxHeaderBytes
        if !tooLong && end == buffer.count { return false }
        framing = !tooLong && end > start && buffer[end] == UInt8(ascii: ":") ? .lsp : .ndjson
        return true
    }

    /// A byte of a header field's name: ASCII letters, digits, `-` and `_`.
    private func isHeaderNameByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"): true
        default: false
        }
    }

    private mutating func scanLine(_ handle: (FrameEvent) -> Void) -> Bool {
        guard let newline = index(of: UInt8(ascii: "\n"), from: max(start, scanned)) else {
            scanned = buffer.count
            if buffer.count - start - 1 > maxMessageBytes {  // -1: a trailing \r is not content
                handle(.oversized(byteCount: nil, limit: maxMessageBytes))
                start = buffer.count
                state = .skippingLine
            }
            return false
        }
        let end = trimmedEnd(newline)
        if end - start > maxMessageBytes {
            handle(.oversized(byteCount: end - start, limit: maxMessageBytes))
        } else if hasContent(start, end) {
            buffer.withUnsafeBytes { handle(.frame(UnsafeRawBufferPointer(rebasing: $0[start..<end]))) }
        }
        start = newline + 1
        return true
    }

    private mutating func scanHeader(_ handle: (FrameEvent) -> Void) -> Bool {
        // Blank lines between messages are tolerated.
        while start < buffer.count, buffer[start] == UInt8(ascii: "\r") || buffer[start] == UInt8(ascii: "\n") {
            start += 1
        }
        guard let end = headerEnd(from: max(start, scanned)) else {
            // A blank line may start in the last two bytes, which were not fully looked at.
            scanned = max(start, buffer.count - 2)
            // maxHeaderBytes without the blank line: the block is longer, however it arrives.
            if buffer.count - start >= Self.maxHeaderBytes {
                handle(.badHeader(Self.headerTooLong))
                start = max(start, buffer.count - 3)
                state = .skippingHeader
            }
            return false
        }
        // The same limit when the whole block arrived in one read.
        if end - start > Self.maxHeaderBytes {
            handle(.badHeader(Self.headerTooLong))
            start = end
            return true
        }
        let header = parseHeader(start..<end)
        start = end
        switch header {
        case .failure(let message):
            handle(.badHeader(message))
        case .success(let length):
            if length > maxMessageBytes {
                handle(.oversized(byteCount: length, limit: maxMessageBytes))
                state = .skippingBody(length)
            } else {
                state = .body(length)
            }
        }
        return true
    }

    private static let headerTooLong = "header block longer than \(maxHeaderBytes) bytes"

    private enum HeaderResult { case success(Int), failure(String) }

    private func parseHeader(_ range: Range<Int>) -> HeaderResult {
        // The messages name the line, never its bytes: a confused client may put anything there.
        var length: Int?
        var lineStart = range.lowerBound
        var lineNumber = 0
        while lineStart < range.upperBound {
            lineNumber += 1
            var lineEnd = lineStart
            while lineEnd < range.upperBound, buffer[lineEnd] != UInt8(ascii: "\n") { lineEnd += 1 }
            let line = buffer[lineStart..<lineEnd]
            lineStart = lineEnd + 1
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
                let text = String(decoding: line, as: UTF8.self).trimmingWhitespace()
                if text.isEmpty { continue }
                return .failure("malformed header line \(lineNumber) of the block (expected \"Name: value\")")
            }
            let name = String(decoding: line[line.startIndex..<colon], as: UTF8.self).trimmingWhitespace()
            guard name.lowercased() == "content-length" else { continue }
            let value = String(decoding: line[(colon + 1)...], as: UTF8.self).trimmingWhitespace()
            guard let parsed = Int(value), parsed >= 0 else {
                return .failure("the Content-Length value (header line \(lineNumber)) is not a non-negative integer")
            }
            length = parsed
        }
        guard let length else { return .failure("missing Content-Length header") }
        return .success(length)
    }

    /// The index just past the blank line ending a header block that starts at `from`
    /// (`\r\n\r\n`, or `\n\n` from lenient writers).
    private func headerEnd(from: Int) -> Int? {
        var i = from
        while let newline = index(of: UInt8(ascii: "\n"), from: i) {
            var next = newline + 1
            if next < buffer.count, buffer[next] == UInt8(ascii: "\r") { next += 1 }
            if next < buffer.count, buffer[next] == UInt8(ascii: "\n") { return next + 1 }
            if next >= buffer.count { return nil }
            i = newline + 1
        }
        return nil
    }

    // MARK: Bytes

    private func index(of byte: UInt8, from: Int) -> Int? {
        guard from < buffer.count else { return nil }
        return buffer.withUnsafeBytes { raw -> Int? in
            guard let found = memchr(raw.baseAddress! + from, Int32(byte), raw.count - from) else { return nil }
            return raw.baseAddress!.distance(to: UnsafeRawPointer(found))
        }
    }

    private func trimmedEnd(_ end: Int) -> Int {
        end > start && buffer[end - 1] == UInt8(ascii: "\r") ? end - 1 : end
    }

    private func hasContent(_ from: Int, _ to: Int) -> Bool {
        var i = from
        while i < to {
            if !isWhitespace(buffer[i]) { return true }
            i += 1
        }
        return false
    }

    private func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    private mutating func compact() {
        if start == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= 1 << 20)
            start = 0
            scanned = 0
        } else if start > 64 * 1024 && start > buffer.count / 2 {
            buffer.removeSubrange(0..<start)
            scanned = max(0, scanned - start)
            start = 0
        }
    }
}

extension String {
    func trimmingWhitespace() -> String {
        var view = Substring(self)
        while let first = view.first, first.isWhitespace { view.removeFirst() }
        while let last = view.last, last.isWhitespace { view.removeLast() }
        return String(view)
    }
}
