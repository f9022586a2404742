import VMHost

/// The one place where a failed call gets its ``BackendError`` kind.
///
/// | what happened | kind | code |
/// |---|---|---|
/// | no connection, connection refused or lost, DNS failure, TLS failure | `network` | null |
/// | the deadline passed (on the host clock) | `timeout` | null |
/// | HTTP status ≥ 400, or a redirect (3xx, never followed) | `server` | the status |
/// | a body over the size limit (`--max-response-bytes`) | `decode` | null |
/// | the envelope reports a failure (`success: false`, or no `success` and a code other than `"0"`) | `business` | the envelope's code, with its message (bounded and cleaned for a screen) |
/// | a body that is not JSON, or not an envelope, or data of the wrong shape | `decode` | null |
/// | the calling task was cancelled | *none*: `CancellationError` | |
///
/// Both implementations go through it: ``HTTPAPIClient`` with real responses and transport errors,
/// ``EmbeddedBackend`` with the demo server's responses and its scripted outcomes.
public enum ErrorMapping {
    /// The envelope of a complete response, or the failure the response stands for.
    public static func envelope(status: Int, body: [UInt8]) throws(BackendError) -> Envelope {
        try body.withUnsafeBytes { bytes in Result { () throws(BackendError) in try envelope(status: status, body: bytes) } }.get()
    }

    /// The envelope of a complete response whose body is read in place (no copy).
    public static func envelope(status: Int, body: UnsafeRawBufferPointer) throws(BackendError) -> Envelope {
        try checkStatus(status)
        let json: JSON
        do {
            json = try JSON.parse(body)
        } catch {
            // Where, never what: the body may hold a token (the parse error quotes none of it).
            throw .decode("the response body is not JSON (\(error.message) at line \(error.line), column \(error.column))")
        }
        return try envelope(status: status, json: json)
    }

    /// The envelope of a response whose body is already JSON (the embedded backend's path).
    public static func envelope(status: Int, json: JSON) throws(BackendError) -> Envelope {
        try checkStatus(status)
        let envelope = try Envelope(json: json)
        guard envelope.success else { throw business(envelope) }
        return envelope
    }

    /// The failure a failure envelope reports. Its message is the server's text for the user: what
    /// of it reaches a screen is bounded and cleaned (``ServerText/shown(_:limit:)``), and when that
    /// changed it, the detail quotes it as sent, escaped and bounded, for developers. The code (an
    /// identifier) is cleaned and bounded to 64 characters the same way.
    static func business(_ envelope: Envelope) -> BackendError {
        let code = ServerText.shown(envelope.code, limit: 64)
        let message = ServerText.shown(envelope.message)
        var error = BackendError.business(code: code, message: message)
        if code != envelope.code {
            error.detail += " (as sent: \(ServerText.quoted(envelope.code, limit: 64)))"
        }
        if message != envelope.message {
            error.detail += "; its message, shown cleaned and bounded, was sent as \(ServerText.quoted(envelope.message))"
        }
        return error
    }

    private static func checkStatus(_ status: Int) throws(BackendError) {
        // A redirect is never followed (protocol/backend.md, "Redirects"): it fails like an error status.
        if !(200..<300).contains(status) { throw .server(status: status) }
    }
}
