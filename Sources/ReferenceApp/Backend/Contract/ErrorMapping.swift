#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Foundation
import VMHostRuntime
import VMHostWire

/// The one place where a failed call gets its ``DomainError`` kind.
///
/// | what happened | kind | code |
/// |---|---|---|
/// | no connection, connection refused or lost, DNS failure, TLS failure | `network` | null |
/// | the deadline passed (the host clock's, or URLSession's backstop) | `timeout` | null |
/// | HTTP status ≥ 400 (the body is not looked at) | `server` | the status |
/// | the envelope reports a failure (`success: false`, or no `success` and a code other than `"0"`) | `business` | the envelope's code, with its message |
/// | a body that is not JSON, or not an envelope, or data of the wrong shape | `decode` | null |
/// | the calling task was cancelled | *none*: `CancellationError` | |
///
/// Both implementations go through it: ``HTTPAPIClient`` with real responses and transport errors,
/// ``EmbeddedBackend`` with the demo server's responses and its scripted outcomes.
public enum ErrorMapping {
    /// The envelope of a complete response, or the failure the response stands for.
    public static func envelope(status: Int, body: [UInt8]) throws(DomainError) -> Envelope {
        try checkStatus(status)
        let json: JSON
        do {
            json = try JSON.parse(body)
        } catch let error as JSONParseError {
            // Where, never what: the body may hold a token (the parse error quotes none of it).
            throw .decode("the response body is not JSON (\(error.message) at line \(error.line), column \(error.column))")
        } catch {
            throw .decode("the response body is not JSON")
        }
        return try envelope(status: status, json: json)
    }

    /// The envelope of a response whose body is already JSON (the embedded backend's path).
    public static func envelope(status: Int, json: JSON) throws(DomainError) -> Envelope {
        try checkStatus(status)
        let envelope = try Envelope(json: json)
        guard envelope.success else { throw .business(code: envelope.code, message: envelope.message) }
        return envelope
    }

    /// The error a transport failure stands for: a ``DomainError`` of kind `network` or `timeout`,
    /// or `CancellationError` when the request was cancelled.
    ///
    /// `URLError.cancelled` only ever comes from our own `cancel()`: the client calls it when its
    /// task is cancelled (and then already answered `CancellationError`) or when its deadline won.
    public static func transportFailure(_ error: any Error) -> any Error {
        if error is CancellationError { return error }
        if let domain = error as? DomainError { return domain }
        guard let urlError = error as? URLError else {
            return DomainError.network("the request failed: \(error.localizedDescription)")
        }
        switch urlError.code {
        case .cancelled:
            return CancellationError()
        case .timedOut:
            return DomainError.timeout()
        case .cannotFindHost, .dnsLookupFailed:
            return DomainError.network("the server's host name could not be resolved")
        case .cannotConnectToHost:
            return DomainError.network("could not connect to the server")
        case .notConnectedToInternet:
            return DomainError.network("there is no network connection")
        case .networkConnectionLost:
            return DomainError.network("the connection was lost")
        default:
            return DomainError.network("the request failed (URLError \(urlError.code.rawValue))")
        }
    }

    private static func checkStatus(_ status: Int) throws(DomainError) {
        if status >= 400 { throw .server(status: status) }
    }
}
