import VMHost
import VMHostHTTP

/// How the chat server's answers and the client's failures become ``ChatFailure``s: the status
/// of every response is checked before its body is decoded; a failure of the exchange is mapped
/// by its kind.
public struct ChatFailures: HTTPFailureMapping {
    public init() {}

    public func check(_ response: HTTPResponse) throws {
        guard (200..<300).contains(response.status) else { throw ChatFailure.server(response.status) }
    }

    public func error(for failure: HTTPError) -> any Error {
        switch failure.kind {
        case .timedOut: ChatFailure.slow
        case .undecodable: ChatFailure.malformed(failure.detail)
        default: ChatFailure.offline(failure.detail)
        }
    }
}

/// The chat server's API over the framework's HTTP client: `GET /messages?after=N&reader=NAME` (a
/// long-poll: answered at once when messages after `N` exist, else when someone other than the
/// reader writes one), `POST /messages` and `GET /search?q=…`.
@HostActor
public final class ChatAPI {
    /// How long a long-poll may wait on the host's clock before it is asked again.
    public static let pollTimeout: Duration = .seconds(60)

    struct Page: Decodable { var messages: [Message] }
    struct Draft: Encodable { var author: String; var text: String }

    public let client: HTTPClient

    /// `timeout`: how long a call may take on the host's clock (the long-poll excepted).
    public init(baseURL: HTTPURL, clock: any HostClock, timeout: Duration) {
        client = HTTPClient(baseURL: baseURL, clock: clock, timeout: timeout, maxResponseBytes: 1 << 20, failures: ChatFailures())
    }

    /// The messages after `id`, waiting on the server until someone other than `reader` writes one.
    public func messages(after id: Int, reader: String) async throws -> [Message] {
        var request = HTTPRequest(.get, "/messages", query: [("after", String(id)), ("reader", reader)])
        request.timeout = Self.pollTimeout
        return try await client.send(request, as: Page.self).messages
    }

    /// Posts `text` as `author`; the message as the server stored it.
    public func post(_ text: String, author: String) async throws -> Message {
        try await client.send(.post, "/messages", json: Draft(author: author, text: text))
    }

    /// The messages whose text contains `query`.
    public func search(_ query: String) async throws -> [Message] {
        try await client.get("/search", query: [("q", query)], as: Page.self).messages
    }
}
