import SearchKinds
import VMHostTesting

enum SearchEndpoint: String, Sendable { case search, article, setFavourite }

/// The search service as a test answers it, call by call.
@HostActor
final class StubSearch: SearchAPI {
    let calls = StubCalls<SearchEndpoint>()
    func search(_ query: String, page: Int) async throws -> ArticlePage {
        try await calls.perform(.search, ["query": .string(query), "page": .int(Int64(page))])
    }
    func article(id: String) async throws -> Article { try await calls.perform(.article, ["id": .string(id)]) }
    func setFavourite(id: String, _ favourite: Bool) async throws {
        try await calls.perform(.setFavourite, ["id": .string(id), "favourite": .bool(favourite)], as: Void.self)
    }
}

let swiftConcurrency = Article(id: "a1", title: "Swift concurrency")
let swiftMacros = Article(id: "a2", title: "Swift macros")
let swiftOnLinux = Article(id: "a4", title: "Swift on Linux")
