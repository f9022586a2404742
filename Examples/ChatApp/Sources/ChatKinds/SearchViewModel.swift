import VMHost

/// The search screen (`Search`): the messages whose text contains the query, searched on the
/// server by `search` (the latest only: a new search aborts the transfer of the one in flight).
@HostActor
public final class SearchViewModel: ViewModel {
    public static let kind = "Search"

    @Input public var query = ""
    @Output public private(set) var results: [Message] = []
    public let loads = Loads(tracking: \.search, emptyWhen: \.results.isEmpty)
    public let search = Command(.latest, disabled: { $0.query.trimmed.isEmpty ? "no query" : nil }) { vm in
        vm.results = try await vm.api.search(vm.query.trimmed)
    }

    private let api: ChatAPI

    public static func factory(api: ChatAPI) -> ViewModelFactory { ViewModelFactory { _ in SearchViewModel(api: api) } }

    public init(api: ChatAPI) { self.api = api }
}
