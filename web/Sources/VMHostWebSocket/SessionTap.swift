#if WebSocket
@_spi(Transport) import VMHostCore
@_spi(Transport) import VMHostEventLoop
@_spi(Transport) import VMHostWire

/// What sees one session's traffic besides the session itself (a recording, `--record DIR`):
/// given by ``WebSocketTransport/Options/tapSession`` when the session opens.
public struct SessionTap: Sendable {
    /// Every message the page sent, parsed (as the engine's tracer sees it), on the host thread.
    public var incoming: @HostActor @Sendable (JSON) -> Void
    /// Every message written to the page, as written, on the connection's thread.
    public var outgoing: @Sendable ([UInt8]) -> Void
    /// The session ends with no more input handled (`exit`, the server stopping, named by
    /// `reason`), on the host thread, before its work is cancelled; what it then writes is written.
    public var ending: @HostActor @Sendable (_ reason: String) -> Void
    /// The session closes: `unwritten` is what was queued and not written yet (the page never got
    /// it), on the host thread, before its work is cancelled.
    public var closing: @HostActor @Sendable (_ unwritten: [[UInt8]]) -> Void
    /// The session closed: `cancelled` is what cancelling its work queued (replies -32800, flags
    /// dropping), which is not written to a closed connection.
    public var closed: @HostActor @Sendable (_ cancelled: [[UInt8]]) -> Void

    public init(
        incoming: @escaping @HostActor @Sendable (JSON) -> Void, outgoing: @escaping @Sendable ([UInt8]) -> Void,
        ending: @escaping @HostActor @Sendable (String) -> Void = { _ in },
        closing: @escaping @HostActor @Sendable ([[UInt8]]) -> Void, closed: @escaping @HostActor @Sendable ([[UInt8]]) -> Void
    ) {
        self.incoming = incoming
        self.outgoing = outgoing
        self.ending = ending
        self.closing = closing
        self.closed = closed
    }
}
#endif
