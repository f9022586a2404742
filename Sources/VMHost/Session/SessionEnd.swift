/// How a session ended (protocol/SPEC.md §7), as its transport reports it: what the log says and
/// what a recording writes as its last step. One type for every transport, never a string.
@_spi(Transport)
public enum SessionEnd: Sendable, Equatable, CustomStringConvertible {
    /// The input ended (EOF on stdin, a close in process, a socket closed) and the work it started
    /// ended or was cancelled as §7 says.
    case endOfInput
    /// The client sent `exit`.
    case exitNotification
    /// The output was closed (EPIPE): nobody reads any more.
    case outputClosed
    /// The process was told to stop (SIGTERM, SIGINT).
    case signal(Int32)
    /// A server of many sessions is stopping (WebSocket: a signal to its worker): every session
    /// ends; what each read before is answered.
    case serverStopping
    /// The transport refused the input and ended the session, saying why (WebSocket: a frame too
    /// large, binary, or not UTF-8; the reason of its close frame).
    case inputRefused(String)
    /// The peer went away before the session ended (WebSocket: the page closed its connection).
    case peerClosed

    public var description: String {
        switch self {
        case .endOfInput: "end of input"
        case .exitNotification: "exit notification"
        case .outputClosed: "stdout closed"
        case .signal(let number): "signal \(number)"
        case .serverStopping: "server stopping"
        case .inputRefused(let reason): reason
        case .peerClosed: "peer closed"
        }
    }
}

extension SessionRecorder {
    /// Writes the last step of a session that ended as `end` with `status`: the `exit` step, a
    /// close, or a close with a comment saying why when a replay must end the input instead
    /// (the requests the end cancelled are cancelled in a replay too).
    @_spi(Transport)
    public func sessionEnded(_ end: SessionEnd, status: Int32) {
        switch end {
        case .exitNotification:
            exited(status: status)
        case .endOfInput:
            inputEnded()
        case .outputClosed:
            inputEnded(comment: "The host's output was closed here; a replay ends the input instead.", cancellingPending: true)
        case .signal:
            inputEnded(comment: "The host was ended here (\(end)); a replay ends the input instead.", cancellingPending: true)
        case .serverStopping, .inputRefused:
            inputEnded(comment: "The session was ended here (\(end)); a replay ends the input instead.", cancellingPending: true)
        case .peerClosed:
            inputEnded(comment: "The page closed its session here.", cancellingPending: true)
        }
    }
}
