import VMHost

/// One message of the thread, as the server sends it and the screen shows it.
public struct Message: Codable, Equatable, Sendable {
    /// The server's id: increasing in the order the server received the messages.
    public var id: Int
    public var author: String
    public var text: String

    public init(id: Int, author: String, text: String) {
        self.id = id
        self.author = author
        self.text = text
    }
}

/// What the chat app shows when a call fails: its own error kinds, with a message in its one
/// language.
public enum ChatFailure: DomainFailure, Equatable {
    /// No connection to the server.
    case offline(String)
    /// The server did not answer within the app's timeout.
    case slow
    /// The server answered with a failure status.
    case server(Int)
    /// The server's answer is not of the shape the app expects.
    case malformed(String)

    public func domainError(in locale: AppLocale) -> DomainError {
        switch self {
        case .offline(let detail):
            DomainError(kind: "offline", message: "You are offline. Try again.", detail: detail)
        case .slow:
            DomainError(kind: "slow", message: "The server is slow to answer. Try again.", detail: "the server did not answer in time")
        case .server(let status):
            DomainError(kind: "server", code: .int(Int64(status)), message: "Something went wrong on the server.", detail: "the server answered \(status)")
        case .malformed(let detail):
            DomainError(kind: "malformed", message: "The server's answer could not be read.", detail: detail)
        }
    }

    /// The kinds of failure, as the server declares them.
    public static let kinds = ["offline", "slow", "server", "malformed"]
}

extension String {
    /// Without white space at either end.
    var trimmed: String {
        var text = Substring(self)
        while let first = text.first, first.isWhitespace { text.removeFirst() }
        while let last = text.last, last.isWhitespace { text.removeLast() }
        return String(text)
    }
}
