import Backend
import VMHost

/// A ``ListCache`` in memory, for tests: what was saved, by key, and how often.
@HostActor
public final class MemoryListCache: ListCache {
    public var products: [Int: SavedProductPages] = [:]
    public var groups: [String: [MenuGroup]] = [:]
    /// How many saves were made, of any list.
    public private(set) var saves = 0

    public init() {}

    public func savedProducts(pageSize: Int) -> SavedProductPages? { products[pageSize] }

    public func saveProducts(_ pages: SavedProductPages, pageSize: Int) {
        products[pageSize] = pages
        saves += 1
    }

    public func savedGroups(menuUid: String) -> [MenuGroup]? { groups[menuUid] }

    public func saveGroups(_ groups: [MenuGroup], menuUid: String) {
        self.groups[menuUid] = groups
        saves += 1
    }
}
