/// A type that writes itself as a JSON value and describes itself with a JSON Schema, by hand.
///
/// Most output types need not: a `Codable` struct gets both from its declaration
/// (``JSONValueEncoder``, ``CodableSchema``). Conform for a form the declaration cannot give (a
/// constant member, an open object) or for speed; it is then `Encodable` through ``json``.
public protocol JSONEncodable: Encodable {
    /// The value as JSON.
    var json: JSON { get }
    /// The JSON Schema of ``json``, for `host.describe`.
    static var jsonSchema: JSON { get }
}

extension JSONEncodable {
    /// Writes ``json``, through any encoder.
    public func encode(to encoder: any Encoder) throws { try json.encode(to: encoder) }
}

extension String: JSONEncodable {
    /// The value as JSON.
    public var json: JSON { .string(self) }
    /// `{"type":"string"}`.
    public static var jsonSchema: JSON { ["type": "string"] }
}

extension Int: JSONEncodable {
    /// The value as JSON.
    public var json: JSON { .int(Int64(self)) }
    /// `{"type":"integer"}`.
    public static var jsonSchema: JSON { ["type": "integer"] }
}

extension Int64: JSONEncodable {
    /// The value as JSON.
    public var json: JSON { .int(self) }
    /// `{"type":"integer"}`.
    public static var jsonSchema: JSON { ["type": "integer"] }
}

extension Bool: JSONEncodable {
    /// The value as JSON.
    public var json: JSON { .bool(self) }
    /// `{"type":"boolean"}`.
    public static var jsonSchema: JSON { ["type": "boolean"] }
}

extension Double: JSONEncodable {
    /// The value as JSON.
    public var json: JSON { .double(self) }
    /// `{"type":"number"}`.
    public static var jsonSchema: JSON { ["type": "number"] }
}

extension JSON: JSONEncodable {
    /// The value itself.
    public var json: JSON { self }
    /// `{}`: any value.
    public static var jsonSchema: JSON { [:] }
}

extension Optional: JSONEncodable where Wrapped: JSONEncodable {
    /// The wrapped value's JSON, or `null`.
    public var json: JSON { map(\.json) ?? .null }
    /// The wrapped type's schema, or `null`.
    public static var jsonSchema: JSON { ["anyOf": [Wrapped.jsonSchema, ["type": "null"]]] }
}

extension Array: JSONEncodable where Element: JSONEncodable {
    /// The elements' JSON.
    public var json: JSON { .array(map(\.json)) }
    /// An array of the element type's schema.
    public static var jsonSchema: JSON { ["type": "array", "items": Element.jsonSchema] }
}

extension Optional: JSONDecodable where Wrapped: JSONDecodable {
    /// The wrapped type's description, `or null`.
    public static var jsonTypeDescription: String { "\(Wrapped.jsonTypeDescription) or null" }
    /// Nil for `null`, else the wrapped type read from `json`.
    public init(json: JSON, path: String) throws(JSONDecodingError) {
        self = json.isNull ? nil : try Wrapped(json: json, path: path)
    }
}

extension JSON: Codable {
    /// Writes the value as it is, through any encoder.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var container = encoder.singleValueContainer()
            try container.encodeNil()
        case .bool(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .int(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .double(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .string(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .array(let elements):
            var container = encoder.unkeyedContainer()
            for element in elements { try container.encode(element) }
        case .object(let object):
            var container = encoder.container(keyedBy: MemberKey.self)
            for member in object { try container.encode(member.value, forKey: MemberKey(member.key)) }
        }
    }

    /// Reads any JSON value from any decoder.
    public init(from decoder: any Decoder) throws {
        if let container = try? decoder.singleValueContainer() {
            if container.decodeNil() { self = .null; return }
            if let value = try? container.decode(Bool.self) { self = .bool(value); return }
            if let value = try? container.decode(Int64.self) { self = .int(value); return }
            if let value = try? container.decode(Double.self) { self = .double(value); return }
            if let value = try? container.decode(String.self) { self = .string(value); return }
        }
        if let container = try? decoder.container(keyedBy: MemberKey.self) {
            var object = JSONObject()
            for key in container.allKeys { object.append(key.stringValue, try container.decode(JSON.self, forKey: key)) }
            self = .object(object)
            return
        }
        var container = try decoder.unkeyedContainer()
        var elements: [JSON] = []
        while !container.isAtEnd { elements.append(try container.decode(JSON.self)) }
        self = .array(elements)
    }

    private struct MemberKey: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(_ key: String) { stringValue = key }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}

extension JSONObject: Codable {
    /// Writes the object as it is.
    public func encode(to encoder: any Encoder) throws { try JSON.object(self).encode(to: encoder) }

    /// Reads an object from any decoder.
    public init(from decoder: any Decoder) throws {
        guard case .object(let object) = try JSON(from: decoder) else {
            throw DecodingError.typeMismatch(JSONObject.self, .init(codingPath: decoder.codingPath, debugDescription: "expected an object"))
        }
        self = object
    }
}
