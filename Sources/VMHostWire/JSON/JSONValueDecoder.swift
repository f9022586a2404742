/// Reads a `Decodable` value from a ``JSON`` value, without Foundation: the reverse of
/// ``JSONValueEncoder``, for a response body declared once as a `Codable` struct.
///
/// ```swift
/// struct Article: Codable, Equatable { var id: String; var title: String; var favourite: Bool? }
/// try JSONValueDecoder.decode(Article.self, from: ["id": "a1", "title": "Swift"])
/// // Article(id: "a1", title: "Swift", favourite: nil)
/// ```
///
/// A member the type does not declare is ignored; a missing member is an error unless the type
/// reads it with `decodeIfPresent` (an optional property). Numbers convert when they fit exactly
/// (an integer member rejects `1.5` and a value out of its range). A failure is a
/// ``JSONDecodingError`` naming the path of the value (`$.items[2].id: expected a string, got a number`).
package enum JSONValueDecoder {
    /// `type` read from `json`.
    package static func decode<Value: Decodable>(_ type: Value.Type, from json: JSON) throws(JSONDecodingError) -> Value {
        do {
            return try Value(from: ValueDecoder(value: json, codingPath: []))
        } catch let error as JSONDecodingError {
            throw error
        } catch {
            // A type's own init(from:) threw an error of its own.
            throw JSONDecodingError(path: "$", problem: String(describing: error))
        }
    }
}

private func path(_ codingPath: [any CodingKey]) -> String {
    var text = "$"
    for key in codingPath {
        if let index = key.intValue { text += "[\(index)]" } else { text += ".\(key.stringValue)" }
    }
    return text
}

private struct IndexKey: CodingKey {
    var intValue: Int?
    var stringValue: String { String(intValue ?? 0) }
    init(_ index: Int) { intValue = index }
    init?(intValue: Int) { self.intValue = intValue }
    init?(stringValue: String) { nil }
}

private struct ValueDecoder: Decoder {
    let value: JSON
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let object) = value else {
            throw JSONDecodingError(path: path(codingPath), problem: "expected an object, got \(value.typeName)")
        }
        return KeyedDecodingContainer(KeyedContainer<Key>(object: object, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let elements) = value else {
            throw JSONDecodingError(path: path(codingPath), problem: "expected an array, got \(value.typeName)")
        }
        return UnkeyedContainer(elements: elements, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { SingleContainer(value: value, codingPath: codingPath) }
}

/// The conversions of one JSON value to the basic types, shared by the three containers.
private struct Scalar {
    let value: JSON
    let codingPath: [any CodingKey]

    func mismatch(_ expected: String) -> JSONDecodingError {
        JSONDecodingError(path: path(codingPath), problem: "expected \(expected), got \(value.typeName)")
    }

    func bool() throws -> Bool {
        guard case .bool(let bool) = value else { throw mismatch("a boolean") }
        return bool
    }

    func string() throws -> String {
        guard case .string(let string) = value else { throw mismatch("a string") }
        return string
    }

    func double() throws -> Double {
        switch value {
        case .int(let int): return Double(int)
        case .double(let double): return double
        default: throw mismatch("a number")
        }
    }

    func integer<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        let converted: T? = switch value {
        case .int(let int): T(exactly: int)
        case .double(let double): T(exactly: double)
        default: throw mismatch("an integer")
        }
        guard let converted else {
            throw JSONDecodingError(path: path(codingPath), problem: "expected an integer that fits \(T.self)")
        }
        return converted
    }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        // Every type whose init(from:) reads a single value of its own type is listed here (the
        // standard library's): handing one to its init(from:) would come back here forever.
        switch type {
        case is Bool.Type: return try bool() as! T
        case is String.Type: return try string() as! T
        case is Double.Type: return try double() as! T
        case is Float.Type: return Float(try double()) as! T
        case is Int.Type: return try integer(Int.self) as! T
        case is Int64.Type: return try integer(Int64.self) as! T
        case is Int32.Type: return try integer(Int32.self) as! T
        case is UInt.Type: return try integer(UInt.self) as! T
        case is UInt64.Type: return try integer(UInt64.self) as! T
        case is UInt32.Type: return try integer(UInt32.self) as! T
        case is Int16.Type: return try integer(Int16.self) as! T
        case is Int8.Type: return try integer(Int8.self) as! T
        case is UInt16.Type: return try integer(UInt16.self) as! T
        case is UInt8.Type: return try integer(UInt8.self) as! T
        case is JSON.Type: return value as! T
        default: return try T(from: ValueDecoder(value: value, codingPath: codingPath))
        }
    }
}

private struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let object: JSONObject
    let codingPath: [any CodingKey]

    var allKeys: [Key] { object.compactMap { Key(stringValue: $0.key) } }
    func contains(_ key: Key) -> Bool { object[key.stringValue] != nil }

    private func member(_ key: Key) throws -> Scalar {
        guard let value = object[key.stringValue] else {
            throw JSONDecodingError(path: path(codingPath + [key]), problem: "is missing")
        }
        return Scalar(value: value, codingPath: codingPath + [key])
    }

    func decodeNil(forKey key: Key) throws -> Bool { object[key.stringValue]?.isNull ?? true }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try member(key).decode(type) }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let value = object[key.stringValue], !value.isNull else { return nil }
        return try Scalar(value: value, codingPath: codingPath + [key]).decode(type)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try ValueDecoder(value: try member(key).value, codingPath: codingPath + [key]).container(keyedBy: type)
    }
    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try ValueDecoder(value: try member(key).value, codingPath: codingPath + [key]).unkeyedContainer()
    }
    func superDecoder() throws -> any Decoder { ValueDecoder(value: .object(object), codingPath: codingPath) }
    func superDecoder(forKey key: Key) throws -> any Decoder {
        ValueDecoder(value: object[key.stringValue] ?? .null, codingPath: codingPath + [key])
    }
}

private struct UnkeyedContainer: UnkeyedDecodingContainer {
    let elements: [JSON]
    let codingPath: [any CodingKey]
    var currentIndex = 0

    init(elements: [JSON], codingPath: [any CodingKey]) {
        self.elements = elements
        self.codingPath = codingPath
    }

    var count: Int? { elements.count }
    var isAtEnd: Bool { currentIndex >= elements.count }

    private mutating func next() throws -> Scalar {
        guard !isAtEnd else {
            throw JSONDecodingError(path: path(codingPath + [IndexKey(currentIndex)]), problem: "is missing (the array has \(elements.count) elements)")
        }
        defer { currentIndex += 1 }
        return Scalar(value: elements[currentIndex], codingPath: codingPath + [IndexKey(currentIndex)])
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, elements[currentIndex].isNull else { return false }
        currentIndex += 1
        return true
    }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next().decode(type) }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let element = try next()
        return try ValueDecoder(value: element.value, codingPath: element.codingPath).container(keyedBy: type)
    }
    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let element = try next()
        return try ValueDecoder(value: element.value, codingPath: element.codingPath).unkeyedContainer()
    }
    mutating func superDecoder() throws -> any Decoder {
        let element = try next()
        return ValueDecoder(value: element.value, codingPath: element.codingPath)
    }
}

private struct SingleContainer: SingleValueDecodingContainer {
    let value: JSON
    let codingPath: [any CodingKey]

    func decodeNil() -> Bool { value.isNull }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try Scalar(value: value, codingPath: codingPath).decode(type) }
}
