import Backend
import VMHostEventLoop
import VMHostRuntime
import VMHostWire

/// The product list (seed `000_…`): refresh, load more, cancel, one merged error channel, and
/// cells formatted for display.
///
/// Inputs: `refresh` (command, `latest`: loads page 1 and replaces the items; cancels a load-more
/// in flight), `loadMore` (command, `ignore`: loads the page after ``page`` and appends it; disabled
/// while a fetch runs or when ``hasMore`` is false), `cancel` (trigger: cancels whatever fetch runs).
///
/// Outputs: ``items``, ``page``, ``hasMore``, ``isRefreshing``, ``isLoadingMore``, ``isEmpty``,
/// ``isStale``, `loadState` and `lastError` (``loads``), and the context's `error` event.
///
/// With a ``ListCache`` (the host's `--state-dir`) the first pages of each successful load are
/// saved, and a new list of the same page size starts with them at once: ``isStale`` true,
/// `loadState` `loaded` (or `empty`), until its first successful load replaces them. While the
/// list is stale, `loadMore` loads page 1 and replaces the list, as `refresh` does: fresh pages
/// are never appended to saved ones.
///
/// Results are applied only after a fetch succeeded and was not cancelled
/// (``ViewModelContext/perform(_:)`` checks), so a failed or cancelled fetch leaves the list as it
/// was. A failure is thrown: the runtime emits it once on `error` and fails the command with -32004.
@HostActor
public final class ProductListViewModel: ViewModel {
    public static let kind = "ProductList"

    /// Why `loadMore` is refused (-32003). For developers, so English only.
    public enum Reason {
        public static let fetchInFlight = "a fetch is in flight"
        public static let noMorePages = "no more pages"
    }

    public let context: ViewModelContext
    /// The cells, in server order, without duplicate ids.
    public let items: Property<[ProductCell]>
    /// The last page loaded successfully; 0 before any.
    public let page: Property<Int>
    /// Whether pages after ``page`` hold products, from the server's page info. True before the
    /// first load, so that `loadMore` is enabled at start (it then loads page 1).
    public let hasMore: Property<Bool>
    /// The `refresh` command's isExecuting.
    public let isRefreshing: Property<Bool>
    /// The `loadMore` command's isExecuting.
    public let isLoadingMore: Property<Bool>
    /// True when the last load finished with no product listed at all.
    public let isEmpty: Property<Bool>
    /// True while the list shows the pages saved by an earlier run (``ListCache``); false once a
    /// load of this view-model succeeded, and always without a cache.
    public let isStale: Property<Bool>
    /// `loadState` (`loading` while `refresh` or `loadMore` runs) and `lastError`.
    public let loads: LoadTracker

    let api: any APIClient
    let pageSize: Int
    /// The ids of ``items``: a product the server shifts onto the next page is not listed twice.
    var listedIDs: Set<String> = []
    /// Where the first pages are saved; nil keeps nothing.
    let cache: (any ListCache)?
    /// The products of the first ``SavedProductPages/maxPages`` pages, as saved after each load.
    var savedProducts: [Product] = []
    private(set) var refresh: Command<NoValue>!
    private(set) var loadMore: Command<NoValue>!

    /// Registers the kind: `ViewModelFactory` for `Composition.kinds(api:)`.
    /// `cache`, when given, keeps the first pages between runs.
    public static func factory(api: any APIClient, cache: (any ListCache)? = nil) -> ViewModelFactory {
        ViewModelFactory(ProductListViewModel.self) { args, context in
            ProductListViewModel(args: args, context: context, api: api, cache: cache)
        }
    }

    public init(args: Args, context: ViewModelContext, api: any APIClient, cache: (any ListCache)? = nil) {
        self.context = context
        self.api = api
        self.cache = cache
        pageSize = args.pageSize
        // The saved pages, shown from the start: declared with them, creating the list changes nothing.
        let saved = cache?.savedProducts(pageSize: pageSize)
        var cells: [ProductCell] = []
        var ids: Set<String> = []
        var products: [Product] = []
        for product in saved?.products ?? [] where ids.insert(product.id).inserted {
            cells.append(ProductCell(product, locale: context.locale))
            products.append(product)
        }
        items = context.property("items", cells)
        page = context.property("page", saved?.page ?? 0)
        hasMore = context.property("hasMore", saved?.hasMore ?? true)
        isRefreshing = context.property("isRefreshing", false)
        isLoadingMore = context.property("isLoadingMore", false)
        isEmpty = context.property("isEmpty", saved != nil && cells.isEmpty)
        isStale = context.property("isStale", saved != nil)
        loads = LoadTracker(context: context, initial: saved == nil ? .idle : cells.isEmpty ? .empty : .loaded)
        listedIDs = ids
        savedProducts = products

        refresh = context.command("refresh", policy: .latest) { [unowned self] in
            try await loads.run("refresh") { try await load(page: 1, replacing: true) }
            return nil
        }
        loadMore = context.command("loadMore", policy: .ignore) { [unowned self] in
            // A stale list starts again from page 1 (see the type's discussion).
            let stale = isStale.value
            try await loads.run("loadMore") { try await load(page: stale ? 1 : page.value + 1, replacing: stale) }
            return nil
        }
        loadMore.disabledReason = { [unowned self] _ in
            if refresh.isExecuting.value || loadMore.isExecuting.value { return Reason.fetchInFlight }
            return hasMore.value ? nil : Reason.noMorePages
        }
        context.trigger("cancel") { [unowned self] in
            refresh.cancelAll()
            loadMore.cancelAll()
        }
        // A refresh replaces the list, so a load-more of the old list must not append to the new one.
        // Cancelled as the refresh starts (in the same turn, before its fetch), so that no client
        // ever sees both spinners.
        refresh.isExecuting.observe { [unowned self] executing in
            if executing { loadMore.cancelAll() }
        }
        isRefreshing.bind(to: refresh.isExecuting)
        isLoadingMore.bind(to: loadMore.isExecuting)
        loads.track([refresh.isExecuting, loadMore.isExecuting])
    }
}
