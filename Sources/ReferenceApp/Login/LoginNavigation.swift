/// The `navigate` event's value: where the app goes next, `{"route": "ProductList"}` after a login.
public struct LoginNavigation: Sendable, Equatable, Codable {
    /// The screens a login leads to.
    public enum Route: String, Sendable, CaseIterable, Codable {
        case productList = "ProductList"
    }

    public var route: Route

    public init(route: Route) {
        self.route = route
    }

    /// Where a successful login leads.
    public static let productList = LoginNavigation(route: .productList)
}
