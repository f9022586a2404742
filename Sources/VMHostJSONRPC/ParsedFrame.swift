import VMHostWire

/// One frame's text read into a message, on any thread: what ``RPCEngine/receive(parsed:)``
/// dispatches without reading the text again.
///
/// A transport of many sessions on one host thread (WebSocket) parses each message where it reads
/// it, so that the host thread only dispatches: a message of millions of values costs its
/// session's reader, not every session of the host. The parse is the engine's own
/// (``RPCEngine/receive(frame:)`` is this followed by ``RPCEngine/receive(parsed:)``), so the
/// replies, the parse errors and what a trace or a recording sees are the same either way.
@_spi(Transport)
public struct ParsedFrame: Sendable {
    enum Content: Sendable {
        case message(JSONMessage)
        /// Not JSON: the error (never quoting the text) and the text's size.
        case unparsable(JSONParseError, byteCount: Int)
    }

    let content: Content
    /// The bytes of the frame's text.
    public let byteCount: Int

    /// The frame's text in `bytes`, read as `rules` say (an engine's ``RPCEngine/parsing``).
    public init(_ bytes: UnsafeRawBufferPointer, rules: Parsing) {
        byteCount = bytes.count
        do throws(JSONParseError) {
            content = .message(try JSON.parseMessage(bytes, keepingArrayMembers: rules.keptArrayMembers))
        } catch {
            content = .unparsable(error, byteCount: bytes.count)
        }
    }

    /// How an engine reads a frame: taken from the engine once its tracer is set
    /// (``RPCEngine/parsing``), used on any thread.
    public struct Parsing: Sendable, Equatable {
        /// The members of a top-level array that are built; past them a batch is counted, not
        /// built (it is refused whatever its members are).
        let keptArrayMembers: Int

        /// Builds at most `keptArrayMembers` members of a top-level array (an engine's is its
        /// batch bound, or every member with a tracer).
        public init(keptArrayMembers: Int) {
            self.keptArrayMembers = keptArrayMembers
        }
    }

    /// About the bytes the message holds in memory once parsed (its text's size at least): what
    /// a transport counts against its bounds while the message waits for the host thread.
    public var estimatedBytes: Int {
        guard case .message(.value(let value)) = content else { return byteCount }
        return max(byteCount, value.estimatedMemory)
    }
}
