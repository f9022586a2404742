/// How the loopback server misbehaves for a path, instead of serving the demo contract.
public enum LoopbackFault: Sendable, Hashable {
    /// Answers this HTTP status with a failure envelope (`500`, `404`, …).
    case status(Int)
    /// Answers `200` with `success: false` and this code and message.
    case business(code: String, message: String)
    /// Answers `200` with a body that is not JSON.
    case malformed
    /// Reads the request and never answers; the connection stays open until the client closes it,
    /// which the server reports (``LoopbackServer/connectionClosedByClient(path:occurrence:)``).
    case neverAnswer
    /// Closes the connection without answering.
    case dropConnection
    /// Resets the connection (TCP RST) without answering.
    case resetConnection
    /// Answers `200` with a `Content-Length` longer than the body it sends, then closes: the body
    /// is cut short in transit.
    case truncatedBody
    /// Answers exactly this status and body (for bodies of the wrong shape).
    case raw(status: Int, body: [UInt8])
    /// Answers a redirect: this status (`301`, `302`, `307`, …) with `Location: location`.
    case redirect(status: Int, location: String)
    /// Answers `200` without a `Content-Length` and sends body bytes until the client closes the
    /// connection, which the server reports (``LoopbackServer/connectionClosedByClient(path:occurrence:)``).
    case endlessBody
}
