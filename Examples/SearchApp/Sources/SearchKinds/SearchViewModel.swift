import VMHost

/// The search screen (`Search`): a query typed keystroke by keystroke, searched 300 ms after the
/// last one (the latest query only: a new one cancels the search in flight), a blank query cleared
/// without a call, further pages on `loadMore`, and `retry` of what failed, the results shown kept.
@HostActor
public final class SearchViewModel: ViewModel {
    public static let kind = "Search"

    @Input public var query = ""
    @Output public private(set) var articles: [Article] = []
    @Output public private(set) var hasMore = false
    public let loads = Loads(tracking: \.search, \.loadMore, \.retry, emptyWhen: \.articles.isEmpty)
    public let loadMore = Command(.ignore, disabled: { $0.search.isRunning ? "a search runs" : $0.hasMore ? nil : "no more results" }) { vm in
        try await vm.fetch(page: vm.page + 1)
    }
    public let retry = Command(.latest, disabled: { $0.failed == nil ? "nothing failed" : nil }) { vm in try await vm.fetch(page: vm.failed ?? 1) }
    let search = Work(.latest) { (vm, query: String) in try await vm.find(query) }

    private let api: any SearchAPI
    private var searched = "", page = 0, failed: Int?

    public static func factory(api: any SearchAPI) -> ViewModelFactory { ViewModelFactory { _ in SearchViewModel(api: api) } }
    public init(api: any SearchAPI) {
        self.api = api
        $query.debounce(for: .milliseconds(300)).map { $0.trimmed }.removeDuplicates().run(search)
    }

    private func find(_ query: String) async throws {
        loadMore.cancelAll()
        (searched, failed) = (query, nil)
        guard !query.isEmpty else {
            (articles, hasMore) = ([], false)
            return loads.reset()
        }
        try await fetch(page: 1)
    }

    private func fetch(page number: Int) async throws {
        do {
            let found = try await api.search(searched, page: number)
            try Task.checkCancellation()
            if number == 1 { articles = found.articles } else { $articles.append(contentsOf: found.articles) }
            (page, hasMore, failed) = (number, found.hasMore, nil)
        } catch let failure as SearchFailure {
            failed = number
            throw failure
        }
    }
}
