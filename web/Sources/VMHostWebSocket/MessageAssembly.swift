import NIOCore
import NIOWebSocket
import WSCore

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

    let maxBytes: Int
    private var bytes: [UInt8] = []
    private var opcode: WebSocketDataFrame.Opcode?

    init(maxBytes: Int) {
        self.maxBytes = maxBytes
    }

    mutating func add(_ frame: WebSocketDataFrame) -> Outcome {
        switch (frame.opcode, opcode) {
        case (.continuation, nil):
            return .refused(.protocolError, "a continuation frame without a message to continue")
        case (.text, .some), (.binary, .some):
            return .refused(.protocolError, "a new message before the last one ended")
        case (.binary, nil):
            return .refused(.unacceptableData, "binary frames are not accepted: send JSON-RPC as text")
        case (.text, nil):
            opcode = .text
        default:
            break
        }
        guard frame.data.readableBytes <= maxBytes - bytes.count else {
            return .refused(.messageTooLarge, "a message is at most \(maxBytes) bytes")
        }
        bytes.append(contentsOf: frame.data.readableBytesView)
        guard frame.fin else { return .incomplete }
        let message = bytes
        bytes = []
        opcode = nil
        guard String(validating: message, as: UTF8.self) != nil else {
            return .refused(.dataInconsistentWithMessage, "text frames must be UTF-8")
        }
        return .text(message)
    }
}
