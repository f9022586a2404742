import Synchronization

/// The JSON Schema of a `Codable` type, read from its `Decodable` declaration: what lets an
/// output type be declared once, as a `Codable` struct, and still be described in `host.describe`.
///
/// The type's `init(from:)` runs once against a recording decoder. Each member it decodes is
/// declared with the schema of the member's type; a member read with `decodeIfPresent` (a
/// synthesized optional) is not required; an array's elements are described by their type:
///
/// ```swift
/// struct Article: Codable, Equatable { var id: String; var tags: [String]; var score: Double? }
/// CodableSchema.of(Article.self)
/// // {"type":"object","properties":{"id":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}},
/// //  "score":{"type":"number"}},"required":["id","tags"],"additionalProperties":false}
/// ```
///
/// A type that writes its own ``JSONEncodable/jsonSchema`` is described by that; an enum that is
/// `CaseIterable` with raw values by `{"type":"string","enum":[…]}` (or `integer`); an optional at the
/// top by `{"anyOf":[…,{"type":"null"}]}`. A type whose `init(from:)` refuses the placeholders the
/// recording answers (empty strings, zeros, `false`, the first case of an enum) cannot be recorded:
/// conform it to ``JSONEncodable`` and write its `jsonSchema`. A dictionary is described as
/// `{"type":"object"}`, and a type that contains itself stops at `{}` where it recurs.
package enum CodableSchema {
    private static let cache = Mutex<[ObjectIdentifier: JSON]>([:])

    /// The schema of `type`, recorded once per type.
    package static func of<Value: Decodable>(_ type: Value.Type) -> JSON {
        let id = ObjectIdentifier(type)
        if let schema = cache.withLock({ $0[id] }) { return schema }
        let schema = SchemaRecorder().record(type).schema
        cache.withLock { $0[id] = schema }
        return schema
    }

    /// A value of `type` made of the placeholders its schema's recording answers (empty strings,
    /// zeros, `false`, the first case of an enum, nil): a value to hold until the real one is
    /// computed. Nil for a type that contains itself where the recording stops.
    package static func placeholder<Value: Decodable>(of type: Value.Type) -> Value? {
        SchemaRecorder().recordStructurally(type).value
    }
}

/// Decodes a placeholder of a type while recording the schema of what it reads.
final class SchemaRecorder {
    /// The types being recorded, outermost first: a type met again inside itself is not entered.
    private var inProgress: [ObjectIdentifier] = []

    /// The schema and a placeholder of `type`; a type with its own schema is described by it.
    func record<Value: Decodable>(_ type: Value.Type) -> (schema: JSON, value: Value?) {
        if let described = type as? any JSONEncodable.Type {
            return (described.jsonSchema, recordStructurally(type).value)
        }
        return recordStructurally(type)
    }

    /// The schema recorded from `type`'s own `init(from:)`.
    func recordStructurally<Value: Decodable>(_ type: Value.Type) -> (schema: JSON, value: Value?) {
        if let primitive = Primitive.schema(of: type) {
            return (primitive.schema, primitive.value as? Value)
        }
        if let optional = type as? any OptionalDecodable.Type {
            let wrapped = optional.recordWrapped(self)
            return (["anyOf": [wrapped, ["type": "null"]]], optional.noValue as? Value)
        }
        if let cases = EnumCases.of(type) {
            return (cases.schema, cases.first as? Value)
        }
        let id = ObjectIdentifier(type)
        if inProgress.contains(id) {
            return ([:], nil)
        }
        inProgress.append(id)
        defer { inProgress.removeLast() }
        let node = SchemaNode()
        do {
            let value = try Value(from: RecordingDecoder(recorder: self, node: node))
            return (node.schema, value)
        } catch {
            fatalError(
                "\(Value.self): its init(from:) refuses the placeholders of its schema's recording (\(error)); conform it to JSONEncodable and write its jsonSchema")
        }
    }
}

/// What one decoder was asked for: an object's members, an array's elements, or one value.
final class SchemaNode {
    enum Shape {
        case unknown
        case object(properties: JSONObject, required: [JSON])
        case array(items: JSON)
        case single(JSON)
    }

    var shape: Shape = .unknown

    var schema: JSON {
        switch shape {
        case .unknown: return [:]
        case .object(let properties, let required):
            var object: JSONObject = ["type": "object", "properties": .object(properties)]
            if !required.isEmpty { object.append("required", .array(required)) }
            object.append("additionalProperties", false)
            return .object(object)
        case .array(let items): return ["type": "array", "items": items]
        case .single(let schema): return schema
        }
    }

    func declare(_ key: String, _ schema: JSON, required: Bool) {
        var properties = JSONObject()
        var requiredKeys: [JSON] = []
        if case .object(let existing, let existingRequired) = shape {
            properties = existing
            requiredKeys = existingRequired
        }
        guard properties[key] == nil else { return }
        properties.append(key, schema)
        if required { requiredKeys.append(.string(key)) }
        shape = .object(properties: properties, required: requiredKeys)
    }
}

private struct RecordingDecoder: Decoder {
    let recorder: SchemaRecorder
    let node: SchemaNode
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedDecodingContainer<Key> {
        if case .object = node.shape {} else { node.shape = .object(properties: [:], required: []) }
        return KeyedDecodingContainer(RecordingKeyed<Key>(recorder: recorder, node: node))
    }

    func unkeyedContainer() -> any UnkeyedDecodingContainer {
        RecordingUnkeyed(recorder: recorder, node: node)
    }

    func singleValueContainer() -> any SingleValueDecodingContainer {
        RecordingSingle(recorder: recorder, node: node)
    }
}

/// Placeholders of the basic types and their schemas.
private enum Primitive {
    static func schema<Value>(of type: Value.Type) -> (schema: JSON, value: Any)? {
        switch type {
        case is String.Type: (["type": "string"], "")
        case is Bool.Type: (["type": "boolean"], false)
        case is Double.Type: (["type": "number"], 0.0)
        case is Float.Type: (["type": "number"], Float(0))
        case is Int.Type: (["type": "integer"], 0)
        case is Int64.Type: (["type": "integer"], Int64(0))
        case is Int32.Type: (["type": "integer"], Int32(0))
        case is Int16.Type: (["type": "integer"], Int16(0))
        case is Int8.Type: (["type": "integer"], Int8(0))
        case is UInt.Type: (["type": "integer", "minimum": 0], UInt(0))
        case is UInt64.Type: (["type": "integer", "minimum": 0], UInt64(0))
        case is UInt32.Type: (["type": "integer", "minimum": 0], UInt32(0))
        case is UInt16.Type: (["type": "integer", "minimum": 0], UInt16(0))
        case is UInt8.Type: (["type": "integer", "minimum": 0], UInt8(0))
        default: nil
        }
    }
}

/// An optional seen without its wrapped type.
private protocol OptionalDecodable {
    static func recordWrapped(_ recorder: SchemaRecorder) -> JSON
    static var noValue: Any { get }
}

extension Optional: OptionalDecodable where Wrapped: Decodable {
    fileprivate static func recordWrapped(_ recorder: SchemaRecorder) -> JSON { recorder.record(Wrapped.self).schema }
    fileprivate static var noValue: Any { Optional<Wrapped>.none as Any }
}

/// The cases of an enum that is `CaseIterable` with `String` or integer raw values.
private enum EnumCases {
    static func of<Value>(_ type: Value.Type) -> (schema: JSON, first: Any)? {
        guard let iterable = type as? any CaseIterable.Type else { return nil }
        let cases = all(iterable)
        var raw: [JSON] = []
        var isString = true
        for value in cases {
            guard let representable = value as? any RawRepresentable else { return nil }
            switch representable.rawValue {
            case let string as String: raw.append(.string(string))
            case let integer as Int:
                raw.append(.int(Int64(integer)))
                isString = false
            default: return nil
            }
        }
        guard let first = cases.first else { return nil }
        return (["type": isString ? "string" : "integer", "enum": .array(raw)], first)
    }

    private static func all<Cases: CaseIterable>(_ type: Cases.Type) -> [Any] { type.allCases.map { $0 } }
}

private struct RecordingKeyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let recorder: SchemaRecorder
    let node: SchemaNode
    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { [] }

    func contains(_ key: Key) -> Bool { true }
    func decodeNil(forKey key: Key) -> Bool { false }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try member(type, key) }

    private func member<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T {
        let (schema, value) = recorder.record(type)
        node.declare(key.stringValue, schema, required: true)
        guard let value else { throw DecodingError.valueNotFound(type, .init(codingPath: [key], debugDescription: "recursive type")) }
        return value
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        node.declare(key.stringValue, recorder.record(type).schema, required: false)
        return nil
    }

    // The protocol's own implementations of these read `contains` and then `decode`, which would
    // record a synthesized optional of a basic type as required.
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try optional(type, key) }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try optional(type, key) }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try optional(type, key) }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { try optional(type, key) }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try optional(type, key) }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try optional(type, key) }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try optional(type, key) }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try optional(type, key) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try optional(type, key) }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try optional(type, key) }

    private func optional<T: Decodable>(_ type: T.Type, _ key: Key) throws -> T? {
        node.declare(key.stringValue, recorder.record(type).schema, required: false)
        return nil
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        let nested = SchemaNode()
        let container = RecordingDecoder(recorder: recorder, node: nested).container(keyedBy: type)
        node.declare(key.stringValue, [:], required: true)
        return container
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        node.declare(key.stringValue, ["type": "array"], required: true)
        return RecordingUnkeyed(recorder: recorder, node: SchemaNode())
    }

    func superDecoder() throws -> any Decoder { RecordingDecoder(recorder: recorder, node: SchemaNode()) }
    func superDecoder(forKey key: Key) throws -> any Decoder { RecordingDecoder(recorder: recorder, node: SchemaNode()) }
}

private struct RecordingUnkeyed: UnkeyedDecodingContainer {
    let recorder: SchemaRecorder
    let node: SchemaNode
    var codingPath: [any CodingKey] { [] }
    var count: Int? { nil }
    var currentIndex: Int = 0
    /// One element is read, which describes them all.
    var isAtEnd: Bool { currentIndex > 0 }

    mutating func decodeNil() -> Bool { false }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        currentIndex += 1
        let (schema, value) = recorder.record(type)
        node.shape = .array(items: schema)
        guard let value else { throw DecodingError.valueNotFound(type, .init(codingPath: [], debugDescription: "recursive type")) }
        return value
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        currentIndex += 1
        let nested = SchemaNode()
        node.shape = .array(items: [:])
        return RecordingDecoder(recorder: recorder, node: nested).container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        currentIndex += 1
        node.shape = .array(items: ["type": "array"])
        return RecordingUnkeyed(recorder: recorder, node: SchemaNode())
    }

    mutating func superDecoder() throws -> any Decoder { RecordingDecoder(recorder: recorder, node: SchemaNode()) }
}

private struct RecordingSingle: SingleValueDecodingContainer {
    let recorder: SchemaRecorder
    let node: SchemaNode
    var codingPath: [any CodingKey] { [] }

    func decodeNil() -> Bool { false }

    func decode<T: Decodable>(_ type: T.Type) throws -> T { try value(type) }

    private func value<T: Decodable>(_ type: T.Type) throws -> T {
        let (schema, value) = recorder.record(type)
        node.shape = .single(schema)
        guard let value else { throw DecodingError.valueNotFound(type, .init(codingPath: [], debugDescription: "recursive type")) }
        return value
    }
}
