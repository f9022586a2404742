import VMHost

/// The article screen (`Article`): the article loaded as the screen opens (work no client sends),
/// `reload` after a failure, and `favourite`, flipped at once and rolled back when the call fails.
@HostActor
public final class ArticleViewModel: ViewModel {
    public static let kind = "Article"

    public struct Args: ViewModelArgs {
        public var id: String
        public init(reader: ObjectReader) throws(JSONDecodingError) { id = try reader.required("id", .nonEmpty) }
    }

    @Output public private(set) var article: Article? = nil
    public let loads = Loads(tracking: \.open, \.reload)
    public let reload = Command(.latest) { vm in try await vm.show() }
    public let favourite = Command(.ignore, disabled: { $0.article == nil ? "the article is not loaded" : nil }) { vm in try await vm.flip() }
    let open = Work(.latest) { vm in try await vm.show() }

    private let id: String, api: any SearchAPI

    public static func factory(api: any SearchAPI) -> ViewModelFactory { ViewModelFactory { args in ArticleViewModel(id: args.id, api: api) } }
    public init(id: String, api: any SearchAPI) {
        (self.id, self.api) = (id, api)
        open.run()
    }

    private func show() async throws { article = try await api.article(id: id) }

    private func flip() async throws {
        guard let shown = article else { return }
        article?.favourite.toggle()
        do {
            try await api.setFavourite(id: id, !shown.favourite)
        } catch {
            article?.favourite = shown.favourite
            throw error
        }
    }
}
