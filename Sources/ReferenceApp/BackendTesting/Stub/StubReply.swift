import Backend
import VMHost

/// What a ``StubAPI`` call answers with; the case must match the endpoint called.
public enum StubReply: Sendable, Hashable {
    /// For `products`.
    case products(Page<Product>)
    /// For `auth.login` and `auth.loginCode`.
    case session(Session)
    /// For `groups.list`.
    case groups([MenuGroup])
    /// For `groups.create` and `groups.rename`.
    case group(MenuGroup)
    /// For `auth.smsCode` and `groups.delete`.
    case done

    /// Page `page` of the demo products, as the embedded backend would answer it.
    public static func demoProducts(page: Int, pageSize: Int = 20) -> StubReply {
        let all = DemoCatalog.products
        let start = min((page - 1) * pageSize, all.count)
        let items = Array(all[start..<min(start + pageSize, all.count)])
        return .products(Page(items: items, info: PageInfo(index: page, size: pageSize, total: all.count)))
    }

    /// The groups of demo menu `m1` before any change.
    public static var demoGroups: StubReply { .groups(DemoCatalog.groups) }
}
