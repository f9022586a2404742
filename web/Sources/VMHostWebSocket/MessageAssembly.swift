#if WebSocket
import NIOCore
import NIOWebSocket

/// Joins the frames of a WebSocket message (a text frame and its continuations) and decides what
/// the message is: a text message of UTF-8, or a reason to close the connection.
///
/// - a binary message: 1003 (unsupported data), JSON-RPC is text;
/// - text that is not UTF-8: 1007 (RFC 6455 §8.1); no repaired text is handled;
/// - a message over `maxBytes` across its frames: 1009 (a single frame over it is refused by the
///   frame decoder, also with 1009);
/// - a continuation with no message to continue, or a new message before the last one ended:
///   1002 (protocol error).
struct MessageAssembly {
    enum Outcome {
        case incomplete
        case text([UInt8])
        case refused(WebSocketErrorCode, String)
    }

    /// What a frame of a message is.
    enum Kind {
        case text, binary, continuation
    }

    let maxBytes: Int
    private var bytes: [UInt8] = []
    private var kind: Kind?

    init(maxBytes: Int) {
        self.maxBytes = maxBytes
    }

    /// Adds a frame of `kind` whose payload is `data`; `fin`: the last frame of its message.
    mutating func add<Bytes: Collection<UInt8>>(_ frameKind: Kind, fin: Bool, data: Bytes) -> Outcome {
        switch (frameKind, kind) {
        case (.continuation, nil):
            return .refused(.protocolError, "a continuation frame without a message to continue")
        case (.text, .some), (.binary, .some):
            return .refused(.protocolError, "a new message before the last one ended")
        case (.binary, nil):
            return .refused(.unacceptableData, "binary frames are not accepted: send JSON-RPC as text")
        case (.text, nil):
            kind = .text
        default:
            break
        }
        guard data.count <= maxBytes - bytes.count else {
            return .refused(.messageTooLarge, "a message is at most \(maxBytes) bytes")
        }
        bytes.append(contentsOf: data)
        guard fin else { return .incomplete }
        let message = bytes
        bytes = []
        kind = nil
        guard String(validating: message, as: UTF8.self) != nil else {
            return .refused(.dataInconsistentWithMessage, "text frames must be UTF-8")
        }
        return .text(message)
    }
}
#endif
