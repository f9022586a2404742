import Testing
import VMHostTesting

/// An article of the search screen these tests build.
struct Article: Codable, Equatable, Sendable {
    var id: String
    var title: String
}

enum SearchEndpoint: String, Sendable { case search }

@HostActor
final class StubSearch {
    let calls = StubCalls<SearchEndpoint>()
    func search(_ query: String, page: Int) async throws -> [Article] {
        try await calls.perform(.search, ["query": .string(query), "page": .int(Int64(page))])
    }
}

/// A search box: typed keystroke by keystroke, debounced, the latest search only.
@HostActor
final class SearchBox: ViewModel {
    static let kind = "SearchBox"

    @Input var query = ""
    @Output var articles: [Article] = []
    @Derived({ $0.search.isRunning }) var isSearching: Bool
    let loads = Loads(tracking: \.search, emptyWhen: \.articles.isEmpty)
    let search = Work(.latest) { (vm, query: String) in try await vm.find(query) }
    let api: StubSearch

    init(api: StubSearch) {
        self.api = api
        $query.debounce(for: .milliseconds(300)).removeDuplicates().run(search)
    }

    func find(_ query: String) async throws {
        guard !query.isEmpty else {
            articles = []
            return loads.reset()
        }
        articles = try await api.search(query, page: 1)
    }
}

@Suite("Authoring: a search box")
@HostActor
struct SearchKindTests {
    let swift = Article(id: "a1", title: "Swift")

    @Test func keystrokesWithinTheDebounceMakeOneSearch() async {
        let api = StubSearch()
        let test = ViewModelTest { SearchBox(api: api) }
        test.set(\.$query, "s")
        await test.advance(by: .milliseconds(100))
        test.set(\.$query, "sw")
        await test.advance(by: .milliseconds(299))
        #expect(api.calls.calls.isEmpty)
        await test.advance(by: .milliseconds(1))
        let call = await api.calls.call(.search)
        #expect(call.arguments["query"] == "sw")
        call.succeed([swift])
        await test.settle()
        test.expect([
            .changed(\.$isSearching, true), .changed(\.loads.loadState, .loading),
            .changed(\.$articles, [swift]),
            .changed(\.$isSearching, false), .changed(\.loads.loadState, .loaded),
        ])
        await test.finish(also: [api.calls.verifyNothingPending])
    }

    @Test func aNewQueryCancelsTheSearchInFlight() async {
        let api = StubSearch()
        let test = ViewModelTest { SearchBox(api: api) }
        test.set(\.$query, "sw")
        await test.advance(by: .milliseconds(300))
        let first = await api.calls.call(.search)
        test.set(\.$query, "swift")
        await test.advance(by: .milliseconds(300))
        let second = await api.calls.call(.search, occurrence: 2)
        #expect(first.wasCancelled)
        first.succeed([Article(id: "old", title: "late")])
        second.succeed([swift])
        await test.settle()
        #expect(test.viewModel.articles == [swift])
        _ = test.take()
        await test.finish()
    }

    @Test func aBlankQueryClearsWithoutACall() async {
        let api = StubSearch()
        let test = ViewModelTest { SearchBox(api: api) }
        test.set(\.$query, "sw")
        await test.advance(by: .milliseconds(300))
        await api.calls.call(.search).succeed([swift])
        await test.settle()
        _ = test.take()
        test.set(\.$query, "")
        await test.advance(by: .milliseconds(300))
        // The blank query's work runs and ends in the timer's turn: `isSearching` and `loading` rise
        // and fall unseen, and the load state, first to change, ends `idle`.
        test.expect([.changed(\.loads.loadState, .idle), .changed(\.$articles, [])])
        #expect(api.calls.calls.count == 1)
        await test.finish()
    }

    @Test func theViewModelIsReleasedWhenTheTestEnds() async {
        let api = StubSearch()
        weak var released: SearchBox?
        do {
            let test = ViewModelTest { SearchBox(api: api) }
            released = test.viewModel
            await test.finish()
        }
        #expect(released == nil)
    }
}
