/// How an app's client turns what went wrong into the app's own errors: the framework names no
/// error kind of any app.
///
/// ``check(_:)`` sees every complete response before its body is decoded, and throws the app's
/// error for one that is a failure: a status (`404` → `notFound`), or a body envelope that reports
/// one (`{"ok": false, "code": "E42"}`). ``error(for:)`` turns a failure of the exchange itself
/// (no connection, the deadline, the size bound, a body that does not decode) into the app's error.
/// A kind's command that calls the client then fails with a `DomainFailure` of the app, which the
/// host reports once on the view-model's `error` event.
///
/// ```swift
/// struct ShopFailures: HTTPFailureMapping {
///     func check(_ response: HTTPResponse) throws {
///         switch response.status {
///         case 200..<300: return
///         case 401: throw ShopError.signedOut
///         default: throw ShopError.server(response.status)
///         }
///     }
///     func error(for failure: HTTPError) -> any Error {
///         failure.kind == .timedOut ? ShopError.slow : ShopError.offline(failure.detail)
///     }
/// }
/// let client = HTTPClient(baseURL: HTTPURL("https://shop.example")!, clock: clock, failures: ShopFailures())
/// ```
///
/// Both have defaults: a status outside 2xx throws ``HTTPError`` with ``HTTPError/Kind/status(_:)``,
/// and a failure is thrown as the ``HTTPError`` it is. Cancellation is never mapped.
public protocol HTTPFailureMapping: Sendable {
    /// Throws the app's error when `response` stands for a failure; returns to accept it.
    func check(_ response: HTTPResponse) throws
    /// The app's error for a failure of the exchange.
    func error(for failure: HTTPError) -> any Error
}

extension HTTPFailureMapping {
    public func check(_ response: HTTPResponse) throws {
        guard (200..<300).contains(response.status) else {
            throw HTTPError(.status(response.status), "the server answered \(response.status)")
        }
    }

    public func error(for failure: HTTPError) -> any Error { failure }
}

/// The default mapping: 2xx is accepted, anything else and every failure throw ``HTTPError``.
public struct DefaultHTTPFailures: HTTPFailureMapping {
    public init() {}
}
