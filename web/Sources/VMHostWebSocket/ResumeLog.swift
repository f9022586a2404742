#if WebSocket
@_spi(Transport) import VMHostWire

/// What a resumable session wrote that its page has not acknowledged yet, numbered, and what it
/// received from its page, counted (protocol/SPEC.md §12, "Resume").
///
/// Every frame the session writes but a control frame (`$/session`, `$/ack`) is numbered from 1 in
/// the order written, and kept here until the page acknowledges it (`$/ack {received}`). A page
/// that resumes says how many it received; the session writes the ones after, with the same
/// numbers, before anything new. Past ``maxBytes`` kept, the oldest are dropped and the log
/// remembers it: that resume cannot be exact and falls back to a resync.
///
/// The frames the page sent are counted as they are received (``receivedCount``): a page that
/// resumes is told the count and sends again what it sent after, so a frame is never handled
/// twice, nor lost.
struct ResumeLog: Sendable {
    /// The bytes of frames kept at most (besides the last one written, kept whatever its size).
    let maxBytes: Int
    /// The frames written and not acknowledged, oldest first: `first` is the number of the first.
    private(set) var frames: [[UInt8]] = []
    private var start = 0
    /// The number of the oldest frame kept (one past the last written when none is kept).
    private(set) var first = 1
    /// The bytes of the frames kept.
    private(set) var bytes = 0
    /// The number of frames written.
    private(set) var written = 0
    /// The page's frames received (control frames not counted).
    private(set) var receivedCount = 0
    /// Whether a frame the page has not acknowledged was dropped (the bound): resuming then is a
    /// resync, not a replay.
    private(set) var overflowed = false

    init(maxBytes: Int) {
        self.maxBytes = maxBytes
    }

    /// The log of a session made again after a restart (``SessionFolder``): its page received
    /// `written` frames and the session `received` of the page's; nothing written is kept, so
    /// the resume is a resync.
    init(maxBytes: Int, restoredAt written: Int, received: Int) {
        self.maxBytes = maxBytes
        self.written = written
        first = written + 1
        receivedCount = received
        overflowed = true
    }

    /// Numbers `body`, about to be written, and keeps it until acknowledged; its number.
    @discardableResult
    mutating func append(_ body: [UInt8]) -> Int {
        written += 1
        frames.append(body)
        bytes += body.count
        while bytes > maxBytes, frames.count - start > 1 {
            dropOldest()
            overflowed = true
        }
        compact()
        return written
    }

    /// The page received every frame up to `count`: they are forgotten. A count beyond what was
    /// written, or behind what was acknowledged, is nil (the page is wrong); else the frames
    /// forgotten.
    mutating func acknowledge(_ count: Int) -> Int? {
        guard count <= written, count >= first - 1 else { return nil }
        var dropped = 0
        while first <= count, start < frames.count {
            dropOldest()
            dropped += 1
        }
        compact()
        return dropped
    }

    /// What resuming a page that received `count` frames takes: the frames after it, in order,
    /// when every one of them is kept; nil when some were dropped (a resync) or `count` is not one
    /// this session could have written.
    func frames(after count: Int) -> [[UInt8]]? {
        guard count <= written, count >= first - 1 else { return nil }
        return Array(frames[(start + (count - (first - 1)))...])
    }

    /// Counts a frame received from the page; the count.
    @discardableResult
    mutating func received() -> Int {
        receivedCount += 1
        return receivedCount
    }

    /// Forgets every frame kept, after a resync: the page was sent the current state instead.
    mutating func resynced() {
        forgetAll(overflowed: false)
    }

    /// Drops every frame kept: the page that resumes is sent the current state instead.
    mutating func lose() {
        forgetAll(overflowed: true)
    }

    private mutating func forgetAll(overflowed: Bool) {
        frames = []
        start = 0
        bytes = 0
        first = written + 1
        self.overflowed = overflowed
    }

    private mutating func dropOldest() {
        bytes -= frames[start].count
        frames[start] = []
        start += 1
        first += 1
    }

    /// Gives back the room of the frames dropped once they are half the array.
    private mutating func compact() {
        guard start > 32, start * 2 > frames.count else { return }
        frames.removeFirst(start)
        start = 0
    }
}

/// The `$/ack` frame a page sends to say how many frames it received, read without handing it to
/// the host: a JSON object `{"jsonrpc": "2.0", "method": "$/ack", "params": {"received": N}}`,
/// members in any order, at most ``maxBytes`` bytes. Any other frame is not an ack (nil).
enum AckFrame {
    static let maxBytes = 256

    /// The count an ack frame acknowledges, or nil when `bytes` is not an ack.
    static func received(in bytes: [UInt8]) -> Int? {
        guard bytes.count <= maxBytes, contains(bytes, #""$/ack""#) else { return nil }
        guard case .object(let members)? = try? JSON.parse(bytes) else { return nil }
        var method: String?, version: String?, received: Int?, other = false
        for member in members {
            switch (member.key, member.value) {
            case ("jsonrpc", .string(let text)): version = text
            case ("method", .string(let text)): method = text
            case ("params", .object(let params)):
                for param in params {
                    if param.key == "received", case .int(let count) = param.value { received = Int(exactly: count) } else { other = true }
                }
            default: other = true
            }
        }
        guard version == "2.0", method == "$/ack", !other, let received, received >= 0 else { return nil }
        return received
    }

    private static func contains(_ bytes: [UInt8], _ text: String) -> Bool {
        let needle = Array(text.utf8)
        guard bytes.count >= needle.count else { return false }
        for start in 0...(bytes.count - needle.count) where bytes[start] == needle[0] {
            if bytes[start..<(start + needle.count)].elementsEqual(needle) { return true }
        }
        return false
    }
}
#endif
