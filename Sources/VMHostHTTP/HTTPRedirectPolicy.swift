/// What an ``HTTPClient`` does with a redirect (`301`, `302`, `303`, `307`, `308` with a `Location`).
///
/// Credentials never leave the origin they were given for: when a redirect leads to another
/// origin (scheme, host or port), the `Authorization`, `Proxy-Authorization` and `Cookie` fields
/// (the client's and the request's) are not sent there, nor any field named in
/// ``credentialHeaders``; once dropped they stay dropped for the later hops. (libcurl keeps no
/// cookie jar: a `Set-Cookie` of one response is never sent by the client on its own.)
/// A `303`, and a `301` or `302` answering a `POST`, are followed with a `GET` and no body, as
/// browsers do; `307` and `308` repeat the method and body.
public struct HTTPRedirectPolicy: Sendable, Hashable {
    /// How many redirects one call follows; the next one fails as ``HTTPError/Kind/invalidRequest``.
    /// 0 follows none: a redirect is the response (the mapping sees its status).
    public var maxRedirects: Int
    /// Header fields the app sends that are credentials too (`X-API-Key`), lower-case or not.
    public var credentialHeaders: Set<String>

    public init(maxRedirects: Int, credentialHeaders: Set<String> = []) {
        self.maxRedirects = max(0, maxRedirects)
        self.credentialHeaders = Set(credentialHeaders.map { $0.lowercased() })
    }

    /// Follows none: a redirect comes back as the response it is. The default.
    public static let none = HTTPRedirectPolicy(maxRedirects: 0)

    /// Follows up to `max` redirects, credentials kept to their origin.
    public static func follow(max: Int = 5, credentialHeaders: Set<String> = []) -> HTTPRedirectPolicy {
        HTTPRedirectPolicy(maxRedirects: max, credentialHeaders: credentialHeaders)
    }

    /// The fields dropped when a redirect leaves the origin, lower-cased.
    var droppedAcrossOrigins: Set<String> { credentialHeaders.union(["authorization", "proxy-authorization", "cookie"]) }
}
