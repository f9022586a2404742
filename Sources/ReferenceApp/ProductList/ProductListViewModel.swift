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
/// Outputs: ``items``, ``page``, ``hasMore``, ``isRefreshing``, ``isLoadingMore``, ``isEmpty`` and the
/// context's `error` event.
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

    let api: any APIClient
    let pageSize: Int
    /// The ids of ``items``: a product the server shifts onto the next page is not listed twice.
    var listedIDs: Set<String> = []
    private(set) var refresh: Command<NoValue>!
    private(set) var loadMore: Command<NoValue>!

    /// Registers the kind: `ViewModelFactory` for `Composition.kinds(api:)`.
    public static func factory(api: any APIClient) -> ViewModelFactory {
        ViewModelFactory(ProductListViewModel.self) { args, context in
            ProductListViewModel(args: args, context: context, api: api)
        }
    }

    public init(args: Args, context: ViewModelContext, api: any APIClient) {
        self.context = context
        self.api = api
        pageSize = args.pageSize
        items = context.property("items", [ProductCell]())
        page = context.property("page", 0)
        hasMore = context.property("hasMore", true)
        isRefreshing = context.property("isRefreshing", false)
        isLoadingMore = context.property("isLoadingMore", false)
        isEmpty = context.property("isEmpty", false)

        refresh = context.command("refresh", policy: .latest) { [unowned self] in
            try await load(page: 1, replacing: true)
            return nil
        }
        loadMore = context.command("loadMore", policy: .ignore) { [unowned self] in
            try await load(page: page.value + 1, replacing: false)
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
    }
}
