import VMHost

/// One article: what both screens show.
public struct Article: Codable, Equatable, Sendable {
    public var id: String
    public var title: String
    public var favourite: Bool

    public init(id: String, title: String, favourite: Bool = false) {
        self.id = id
        self.title = title
        self.favourite = favourite
    }
}

/// One page of results.
public struct ArticlePage: Sendable, Equatable {
    public var articles: [Article]
    /// Whether a further page holds more.
    public var hasMore: Bool

    public init(articles: [Article], hasMore: Bool) {
        self.articles = articles
        self.hasMore = hasMore
    }
}

/// What the search service answers when it fails: the app's own error, with a message in the
/// app's one language.
public enum SearchFailure: DomainFailure, Equatable {
    /// The service did not answer.
    case unavailable
    /// No article has this id.
    case notFound(String)

    public func domainError(in locale: AppLocale) -> DomainError {
        switch self {
        case .unavailable:
            DomainError(kind: "unavailable", code: 503, message: "Search is unavailable. Try again.", detail: "the search service answered 503")
        case .notFound(let id):
            DomainError(kind: "notFound", code: 404, message: "This article is gone.", detail: "no article \(id)")
        }
    }

    /// The kinds of failure, as the server declares them.
    public static let kinds = ["unavailable", "notFound"]
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
