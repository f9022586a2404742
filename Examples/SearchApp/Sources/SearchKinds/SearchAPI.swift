import VMHost

/// What the app's view-models ask of its search service. The server implements it with
/// ``InMemorySearchService``; tests with a stub. Failures are ``SearchFailure``s.
@HostActor
public protocol SearchAPI: AnyObject {
    /// Page `page` (from 1) of the articles whose title contains `query`.
    func search(_ query: String, page: Int) async throws -> ArticlePage
    /// The article `id`.
    func article(id: String) async throws -> Article
    /// Marks the article `id` a favourite, or not.
    func setFavourite(id: String, _ favourite: Bool) async throws
}

/// A search service held in memory, answering after a latency on the host's clock, failing the
/// calls a test or a client asks to fail (`control.search.fail`).
@HostActor
public final class InMemorySearchService: SearchAPI {
    private let clock: any HostClock
    /// How long every call takes, on the host's clock.
    public var latency: Duration
    /// Calls still to fail, one each.
    public var failures = 0
    /// Results per page.
    public let pageSize: Int
    private var articles: [Article]

    public init(clock: any HostClock, latency: Duration = .milliseconds(100), pageSize: Int = 3, articles: [Article] = InMemorySearchService.sample) {
        self.clock = clock
        self.latency = latency
        self.pageSize = pageSize
        self.articles = articles
    }

    /// Eight articles about Swift and Rust.
    public static let sample = [
        "Swift concurrency", "Swift macros", "Rust ownership", "Swift on Linux", "Swift testing",
        "Rust async", "Swift packages", "Swift regex",
    ].enumerated().map { Article(id: "a\($0.offset + 1)", title: $0.element) }

    public func search(_ query: String, page: Int) async throws -> ArticlePage {
        try await answer()
        let found = articles.filter { $0.title.lowercased().contains(query.lowercased()) }
        let start = min(max(page - 1, 0) * pageSize, found.count)
        let end = min(start + pageSize, found.count)
        return ArticlePage(articles: Array(found[start..<end]), hasMore: end < found.count)
    }

    public func article(id: String) async throws -> Article {
        try await answer()
        guard let article = articles.first(where: { $0.id == id }) else { throw SearchFailure.notFound(id) }
        return article
    }

    public func setFavourite(id: String, _ favourite: Bool) async throws {
        try await answer()
        guard let index = articles.firstIndex(where: { $0.id == id }) else { throw SearchFailure.notFound(id) }
        articles[index].favourite = favourite
    }

    private func answer() async throws {
        try await clock.sleep(for: latency)
        if failures > 0 {
            failures -= 1
            throw SearchFailure.unavailable
        }
    }
}
