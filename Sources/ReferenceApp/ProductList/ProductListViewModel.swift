import Backend
import VMHost

/// The product list (seed `000_…`): refresh, load more, cancel, one merged error channel, and
/// cells formatted for display.
///
/// Inputs: `refresh` (command, `latest`: loads page 1 and replaces the items; cancels a load-more
/// in flight), `loadMore` (command, `ignore`: loads the page after ``page`` and appends it; disabled
/// while a fetch runs or when ``hasMore`` is false), `cancel` (trigger: cancels whatever fetch runs).
/// Outputs: the properties below, `loadState` and `lastError` (``loads``), and the `error` event.
///
/// With a ``ListCache`` (the host's `--state-dir`) the first pages of each successful load are
/// saved, and a new list of the same page size starts with them at once: ``isStale`` true,
/// `loadState` `loaded` (or `empty`), until its first successful load replaces them. While the
/// list is stale, `loadMore` loads page 1 and replaces the list, as `refresh` does: fresh pages
/// are never appended to saved ones.
///
/// A failed or cancelled fetch leaves the list as it was: a failure is thrown, and the runtime
/// emits it once on `error` and fails the command with -32004.
@HostActor
public final class ProductListViewModel: ViewModel {
    public static let kind = "ProductList"

    /// Why `loadMore` is refused (-32003). For developers, so English only.
    public enum Reason {
        public static let fetchInFlight = "a fetch is in flight"
        public static let noMorePages = "no more pages"
    }

    /// The cells, in server order, without duplicate ids.
    @Output public internal(set) var items: [ProductCell] = []
    /// The last page loaded successfully; 0 before any.
    @Output public internal(set) var page = 0
    /// Whether pages after ``page`` hold products, from the server's page info. True before the
    /// first load, so that `loadMore` is enabled at start (it then loads page 1).
    @Output public internal(set) var hasMore = true
    @Derived({ $0.refresh.isRunning }) public var isRefreshing: Bool
    @Derived({ $0.loadMore.isRunning }) public var isLoadingMore: Bool
    /// True when the last load finished with no product listed at all.
    @Output public internal(set) var isEmpty = false
    /// True while the list shows the pages saved by an earlier run (``ListCache``).
    @Output public internal(set) var isStale = false
    public let loads = Loads(tracking: \.refresh, \.loadMore, emptyWhen: \.items.isEmpty)

    public let refresh = Command(.latest) { vm in try await vm.load(page: 1, replacing: true) }
    public let loadMore = Command(.ignore, disabled: { $0.loadMoreBlocker() }) { vm in
        // A stale list starts again from page 1 (see the type's discussion).
        try await vm.load(page: vm.isStale ? 1 : vm.page + 1, replacing: vm.isStale)
    }
    /// Loads pages 1 to N again, one after the other: the list made again after a restart
    /// (``restore(from:)``).
    let reload = Work(.latest) { (vm, pages: Int) in
        for number in 1...pages { try await vm.load(page: number, replacing: number == 1) }
    }
    public let cancel = Trigger { vm in
        vm.refresh.cancelAll()
        vm.loadMore.cancelAll()
    }

    let api: any APIClient
    let pageSize: Int
    /// Where the first pages are saved; nil keeps nothing.
    let cache: (any ListCache)?
    /// The ids of ``items``: a product the server shifts onto the next page is not listed twice.
    var listedIDs: Set<String> = []
    /// The products of the first ``SavedProductPages/maxPages`` pages, as saved after each load.
    var savedProducts: [Product] = []

    /// The kind's factory; `cache`, when given, keeps the first pages between runs.
    public static func factory(api: any APIClient, cache: (any ListCache)? = nil) -> ViewModelFactory {
        ViewModelFactory { args in ProductListViewModel(args: args, api: api, cache: cache) }
    }

    public init(args: Args, api: any APIClient, cache: (any ListCache)? = nil) {
        self.api = api
        self.cache = cache
        pageSize = args.pageSize
        if let saved = cache?.savedProducts(pageSize: pageSize) { restore(saved) }
        // A refresh replaces the list, so a load-more of the old list must not append to the new
        // one. Cancelled as the refresh starts (in the same turn, before its fetch), so that no
        // client ever sees both spinners.
        observe(refresh.isExecuting) { vm, executing in if executing { vm.loadMore.cancelAll() } }
    }

    /// Why `loadMore` cannot run now, or nil when it can.
    private func loadMoreBlocker() -> String? {
        if refresh.isRunning || loadMore.isRunning { return Reason.fetchInFlight }
        return hasMore ? nil : Reason.noMorePages
    }
}

/// After a restart (`vmhost-web --session-dir`), a list comes back with as many pages as it had
/// loaded, loaded again by its own paging, one after the other.
extension ProductListViewModel: Restorable {
    /// The most pages a restored list loads again.
    static let maxRestoredPages = 50

    public var restoration: JSON? {
        guard page > 0, !isStale else { return nil }
        return ["pages": .int(Int64(page))]
    }

    public func restore(from restoration: JSON) {
        guard let count = restoration["pages"]?.intValue, count > 0 else { return }
        reload.run(Int(min(count, Int64(Self.maxRestoredPages))))
    }
}
