import VMHost

/// Where the last good data of each list is kept between runs (the app's state directory), so that
/// a list screen opened again shows it at once, marked stale, until its first load replaces it.
///
/// The view-models see only this protocol; the host's `--state-dir` implements it. Implementations
/// bound what they keep, report their own failures (in the logs, never with a token), and answer
/// nil for a saved value they cannot read: a damaged value is treated as absent, never trusted.
@HostActor
public protocol ListCache: AnyObject {
    /// The first pages of the product list of `pageSize`, as last loaded; nil when none is saved.
    func savedProducts(pageSize: Int) -> SavedProductPages?
    /// Saves the first pages of the product list of `pageSize`, replacing the ones saved before.
    func saveProducts(_ pages: SavedProductPages, pageSize: Int)
    /// The groups of the menu `menuUid`, as last loaded; nil when none are saved.
    func savedGroups(menuUid: String) -> [MenuGroup]?
    /// Saves the groups of the menu `menuUid`, replacing the ones saved before.
    func saveGroups(_ groups: [MenuGroup], menuUid: String)
}

/// The first pages of a product list as last loaded: the products in list order, the last page
/// they cover, and whether the server had more after it.
///
/// At most ``maxPages`` pages are kept: a list scrolled further is saved as its first pages (with
/// `hasMore` true), so a saved list never outgrows `maxPages × pageSize` products.
///
/// On the wire (the saved value): `{"page": N, "hasMore": bool, "products": [Product...]}`.
public struct SavedProductPages: Sendable, Hashable {
    /// The most pages saved of one list.
    public static let maxPages = 5

    public var products: [Product]
    /// The last page the products cover, 1…``maxPages``.
    public var page: Int
    public var hasMore: Bool

    public init(products: [Product], page: Int, hasMore: Bool) {
        self.products = products
        self.page = page
        self.hasMore = hasMore
    }

    /// Decodes a saved value; anything out of shape (a page outside 1…``maxPages``, a product the
    /// contract would refuse) is a `decode` error naming the member.
    public init(json: JSON) throws(BackendError) {
        let fields = try JSONFields(json, context: "saved products")
        page = try fields.int("page", atLeast: 1)
        guard page <= Self.maxPages else {
            throw .decode("saved products.page: out of range (must be at most \(Self.maxPages))")
        }
        hasMore = try fields.bool("hasMore")
        products = try .decoding(try fields.value("products"), context: "saved products.products", Product.init(json:))
    }

    public var json: JSON {
        ["page": JSON(page), "hasMore": .bool(hasMore), "products": .array(products.map(\.json))]
    }
}

extension MenuGroup {
    /// Decodes the saved groups of a menu (a JSON array of groups); a group out of shape is a
    /// `decode` error naming its index.
    public static func savedList(json: JSON) throws(BackendError) -> [MenuGroup] {
        try .decoding(json, context: "saved groups", MenuGroup.init(json:))
    }
}
