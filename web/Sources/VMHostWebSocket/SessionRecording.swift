#if WebSocket
@_spi(Transport) import VMHost
@_spi(Transport) import VMHostEventLoop

/// The recording of one session (`--record DIR`), given by
/// ``WebSocketTransport/Options/recordSession`` when the session opens: the session's core
/// records what the page sent and was written, and how the session ended; the transport calls
/// ``closed`` once the recording is finished.
public struct SessionRecording: Sendable {
    /// The session's recording.
    public var recorder: SessionRecorder
    /// Names of members whose string values are secret in the session's messages, besides the
    /// inputs its kinds declare secret (``ServerConfiguration/secretMembers``).
    public var secretMembers: Set<String>
    /// Runs on the host thread once the recording is finished (the session closed).
    public var closed: @HostActor @Sendable () -> Void

    public init(
        recorder: SessionRecorder, secretMembers: Set<String>, closed: @escaping @HostActor @Sendable () -> Void = {}
    ) {
        self.recorder = recorder
        self.secretMembers = secretMembers
        self.closed = closed
    }
}
#endif
