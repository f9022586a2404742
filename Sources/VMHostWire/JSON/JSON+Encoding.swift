/// A type that writes itself as a JSON value and describes itself with a JSON Schema.
public protocol JSONEncodable {
    var json: JSON { get }
    /// The JSON Schema of ``json``, for `host.describe`.
    static var jsonSchema: JSON { get }
}

extension String: JSONEncodable {
    public var json: JSON { .string(self) }
    public static var jsonSchema: JSON { ["type": "string"] }
}

extension Int: JSONEncodable {
    public var json: JSON { .int(Int64(self)) }
    public static var jsonSchema: JSON { ["type": "integer"] }
}

extension Int64: JSONEncodable {
    public var json: JSON { .int(self) }
    public static var jsonSchema: JSON { ["type": "integer"] }
}

extension Bool: JSONEncodable {
    public var json: JSON { .bool(self) }
    public static var jsonSchema: JSON { ["type": "boolean"] }
}

extension Double: JSONEncodable {
    public var json: JSON { .double(self) }
    public static var jsonSchema: JSON { ["type": "number"] }
}

extension JSON: JSONEncodable {
    public var json: JSON { self }
    public static var jsonSchema: JSON { [:] }
}

extension Optional: JSONEncodable where Wrapped: JSONEncodable {
    public var json: JSON { map(\.json) ?? .null }
    public static var jsonSchema: JSON { ["anyOf": [Wrapped.jsonSchema, ["type": "null"]]] }
}

extension Array: JSONEncodable where Element: JSONEncodable {
    public var json: JSON { .array(map(\.json)) }
    public static var jsonSchema: JSON { ["type": "array", "items": Element.jsonSchema] }
}

extension Optional: JSONDecodable where Wrapped: JSONDecodable {
    public static var jsonTypeDescription: String { "\(Wrapped.jsonTypeDescription) or null" }
    public init(json: JSON, path: String) throws(JSONDecodingError) {
        self = json.isNull ? nil : try Wrapped(json: json, path: path)
    }
}
