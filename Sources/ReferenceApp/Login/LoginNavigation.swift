import VMHostWire

/// The `navigate` event's value: where the app goes next, `{"route": "ProductList"}` after a login.
public struct LoginNavigation: Sendable, Equatable, JSONEncodable {
    public var route: String

    public init(route: String) {
        self.route = route
    }

    /// Where a successful login leads.
    public static let productList = LoginNavigation(route: "ProductList")

    public var json: JSON { ["route": .string(route)] }

    public static var jsonSchema: JSON {
        [
            "type": "object",
            "properties": ["route": ["type": "string", "enum": ["ProductList"]]],
            "required": ["route"],
            "additionalProperties": false,
        ]
    }
}
