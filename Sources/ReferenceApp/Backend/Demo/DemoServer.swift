import VMHost

/// The server side of the contract over the demo data: pure, deterministic, in memory.
///
/// ``EmbeddedBackend`` calls it in-process and the loopback test server behind real sockets, so
/// both serve exactly the same answers. Its state changes as a real server's would: a created group
/// is listed afterwards, a deleted one is gone. It checks no token: the demo menus are public.
///
/// Failures it answers (see `protocol/backend.md`):
/// - `200` with `success: false`: wrong account or password (`1001`), an invalid phone number
///   (`1002`), a wrong SMS code (`1003`), a group name that is not 1…20 characters (`2001`);
/// - `400` for a malformed request, `404` for an unknown route, menu or group, `405` for a known
///   path with the wrong method.
public struct DemoServer: Sendable {
    /// The groups of each menu, in server order.
    public internal(set) var menus: [String: [MenuGroup]]
    /// The number of the next group created: `g5` first.
    var nextGroupNumber: Int
    /// Logins so far: the next token is `demo-token-<tokensIssued + 1>`.
    var tokensIssued = 0

    /// The number of products served: `p001` and on, by the rule of ``DemoCatalog``.
    public let productCount: Int

    /// A server over the demo data with `productCount` products (the standard 57 by default; any
    /// count in ``DemoCatalog/productCountRange``).
    public init(productCount: Int = DemoCatalog.productCount) {
        precondition(
            DemoCatalog.productCountRange.contains(productCount),
            "productCount \(productCount) is outside \(DemoCatalog.productCountRange)")
        self.productCount = productCount
        menus = [DemoCatalog.menuUid: DemoCatalog.groups]
        nextGroupNumber = DemoCatalog.groups.count + 1
    }

    /// Answers one request, changing the server's state as the request says.
    public mutating func handle(_ request: DemoRequest) -> DemoResponse {
        let segments = request.path.split(separator: "/", omittingEmptySubsequences: true)
            .map { PercentEncoding.decode($0) ?? String($0) }
        switch (request.method, segments.count, segments.first) {
        case ("GET", 1, "products"):
            return products(request.query)
        case (_, 1, "products"):
            return Self.methodNotAllowed
        case (_, 2, "auth"):
            guard request.method == "POST" else {
                return ["login", "sms-code", "login-code"].contains(segments[1]) ? Self.methodNotAllowed : Self.notFound
            }
            switch segments[1] {
            case "login": return login(request.body)
            case "sms-code": return sendSMSCode(request.body)
            case "login-code": return loginWithCode(request.body)
            default: return Self.notFound
            }
        case (_, 3, "menus") where segments[2] == "groups":
            switch request.method {
            case "GET": return groups(menu: segments[1])
            case "POST": return createGroup(menu: segments[1], body: request.body)
            default: return Self.methodNotAllowed
            }
        case (_, 4, "menus") where segments[2] == "groups":
            switch request.method {
            case "PUT": return renameGroup(menu: segments[1], group: segments[3], body: request.body)
            case "DELETE": return deleteGroup(menu: segments[1], group: segments[3])
            default: return Self.methodNotAllowed
            }
        default:
            return Self.notFound
        }
    }

    static let notFound = DemoResponse.status(404, "接口不存在")
    static let methodNotAllowed = DemoResponse.status(405, "请求方法不被允许")

    /// A `400` naming what was wrong with the request (never its value).
    static func badRequest(_ what: String) -> DemoResponse { .status(400, "请求参数错误: \(what)") }
}
