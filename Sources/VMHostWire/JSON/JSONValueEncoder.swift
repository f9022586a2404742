/// Writes an `Encodable` value as a ``JSON`` value, without Foundation: what lets an output type
/// be declared once, as a `Codable` struct, instead of writing its `json` by hand.
///
/// Members are written in the order the type encodes them (a synthesized `Encodable` encodes its
/// stored properties in declaration order); an optional member that is nil is left out, as
/// `encodeIfPresent` asks. A value whose type writes its own ``JSONEncodable/json`` (the basic
/// types, ``JSON``, a type of the app's with a hand-written form) is written by that.
///
/// ```swift
/// struct Article: Codable, Equatable { var id: String; var title: String; var favourite: Bool }
/// JSONValueEncoder.encode(Article(id: "a1", title: "Swift", favourite: false))
/// // {"id":"a1","title":"Swift","favourite":false}
/// ```
///
/// Non-finite numbers have no JSON form: they are written as `null`.
package enum JSONValueEncoder {
    /// `value` as JSON.
    package static func encode<Value: Encodable>(_ value: Value) -> JSON {
        if let direct = value as? any JSONEncodable { return direct.json }
        return encodeStructurally(value)
    }

    /// Each of `elements` as JSON: by the type's own ``JSONEncodable/json`` when it has one (the
    /// type asked once, not each element), else by its `encode(to:)`.
    package static func encode<Elements: Collection>(elements: Elements) -> [JSON] where Elements.Element: Encodable {
        if let direct = Elements.Element.self as? any JSONEncodable.Type { return encode(elements: elements, as: direct) }
        var result: [JSON] = []
        result.reserveCapacity(elements.count)
        for element in elements { result.append(encodeStructurally(element)) }
        return result
    }

    private static func encode<Elements: Collection, Direct: JSONEncodable>(elements: Elements, as type: Direct.Type) -> [JSON] {
        var result: [JSON] = []
        result.reserveCapacity(elements.count)
        // `Direct` is the elements' own type (asked of `Elements.Element` above): in contiguous
        // storage each element is read where it is, neither copied out nor cast (a page's cells
        // paid a copy, a cast and the release of both per cell).
        let read: Bool? = elements.withContiguousStorageIfAvailable { buffer in
            guard let base = buffer.baseAddress else { return true }
            let direct = UnsafeRawPointer(base).assumingMemoryBound(to: Direct.self)
            for index in 0..<buffer.count { result.append(direct[index].json) }
            return true
        }
        if read == nil {
            for element in elements { result.append((element as! Direct).json) }
        }
        return result
    }

    /// `value` as JSON, by its `encode(to:)` (never by its own ``JSONEncodable/json``: this is what
    /// that property's default implementation calls).
    package static func encodeStructurally<Value: Encodable>(_ value: Value) -> JSON {
        let encoder = ValueEncoder(codingPath: [])
        do {
            try value.encode(to: encoder)
        } catch {
            // Only a type's own encode(to:) can throw here, and what it wrote so far is kept.
        }
        return encoder.storage.value
    }
}

/// Where one encoder writes: a value not written yet, a single value, an object or an array.
final class EncodingSlot {
    enum Content {
        case empty
        case value(JSON)
        case object([(String, EncodingSlot)])
        case array([EncodingSlot])
    }

    var content: Content = .empty

    var value: JSON {
        switch content {
        case .empty: return [:]
        case .value(let value): return value
        case .object(let members):
            var object = JSONObject()
            object.reserveCapacity(members.count)
            for (key, slot) in members { object.append(key, slot.value) }
            return .object(object)
        case .array(let elements): return .array(elements.map(\.value))
        }
    }

    /// The slot of member `key`, made (or replaced, for a key written twice) at the end.
    func member(_ key: String) -> EncodingSlot {
        var members: [(String, EncodingSlot)]
        if case .object(let existing) = content { members = existing } else { members = [] }
        let slot = EncodingSlot()
        if let index = members.firstIndex(where: { $0.0 == key }) {
            members[index].1 = slot
        } else {
            members.append((key, slot))
        }
        content = .object(members)
        return slot
    }

    func element() -> EncodingSlot {
        var elements: [EncodingSlot]
        if case .array(let existing) = content { elements = existing } else { elements = [] }
        let slot = EncodingSlot()
        elements.append(slot)
        content = .array(elements)
        return slot
    }

    func set(_ value: JSON) { content = .value(value) }

    func set<Value: Encodable>(encoding value: Value, codingPath: [any CodingKey]) throws {
        if let direct = value as? any JSONEncodable {
            content = .value(direct.json)
            return
        }
        try value.encode(to: ValueEncoder(codingPath: codingPath, storage: self))
    }

    static func number(_ value: Double) -> JSON { value.isFinite ? .double(value) : .null }

    /// An integer of any width: a JSON integer when it fits 64 bits, else the nearest real.
    static func integer<Value: BinaryInteger>(_ value: Value) -> JSON {
        Int64(exactly: value).map(JSON.int) ?? .double(Double(value))
    }
}

struct ValueEncoder: Encoder {
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }
    let storage: EncodingSlot

    init(codingPath: [any CodingKey], storage: EncodingSlot = EncodingSlot()) {
        self.codingPath = codingPath
        self.storage = storage
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        if case .object = storage.content {} else { storage.content = .object([]) }
        return KeyedEncodingContainer(KeyedContainer<Key>(codingPath: codingPath, storage: storage))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if case .array = storage.content {} else { storage.content = .array([]) }
        return UnkeyedContainer(codingPath: codingPath, storage: storage)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleContainer(codingPath: codingPath, storage: storage)
    }
}

private struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let codingPath: [any CodingKey]
    let storage: EncodingSlot

    mutating func encodeNil(forKey key: Key) { storage.member(key.stringValue).set(.null) }
    mutating func encode(_ value: Bool, forKey key: Key) { storage.member(key.stringValue).set(.bool(value)) }
    mutating func encode(_ value: String, forKey key: Key) { storage.member(key.stringValue).set(.string(value)) }
    mutating func encode(_ value: Double, forKey key: Key) { storage.member(key.stringValue).set(EncodingSlot.number(value)) }
    mutating func encode(_ value: Float, forKey key: Key) { storage.member(key.stringValue).set(EncodingSlot.number(Double(value))) }
    mutating func encode(_ value: Int, forKey key: Key) { storage.member(key.stringValue).set(.int(Int64(value))) }
    mutating func encode(_ value: Int64, forKey key: Key) { storage.member(key.stringValue).set(.int(value)) }
    mutating func encode(_ value: Int8, forKey key: Key) { storage.member(key.stringValue).set(EncodingSlot.integer(value)) }
    mutating func encode(_ value: Int16, forKey key: Key) { storage.member(key.stringValue).set(EncodingSlot.integer(value)) }
    mutating func encode(_ value: Int32, forKey key: Key) { storage.member(key.stringValue).set(EncodingSlot.integer(value)) }
    mutating func encode(_ value: UInt, forKey key: Key) { storage.member(key.stringValue).set(EncodingSlot.integer(value)) }
    mutating func encode(_ value: UInt8, forKey key: Key) { storage.member(key.stringValue).set(EncodingSlot.integer(value)) }
    mutating func encode(_ value: UInt16, forKey key: Key) { storage.member(key.stringValue).set(EncodingSlot.integer(value)) }
    mutating func encode(_ value: UInt32, forKey key: Key) { storage.member(key.stringValue).set(EncodingSlot.integer(value)) }
    mutating func encode(_ value: UInt64, forKey key: Key) { storage.member(key.stringValue).set(EncodingSlot.integer(value)) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try storage.member(key.stringValue).set(encoding: value, codingPath: codingPath + [key])
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        ValueEncoder(codingPath: codingPath + [key], storage: storage.member(key.stringValue)).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        ValueEncoder(codingPath: codingPath + [key], storage: storage.member(key.stringValue)).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        ValueEncoder(codingPath: codingPath, storage: storage.member("super"))
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        ValueEncoder(codingPath: codingPath + [key], storage: storage.member(key.stringValue))
    }
}

private struct IndexKey: CodingKey {
    let intValue: Int?
    var stringValue: String { String(intValue ?? 0) }
    init(_ index: Int) { intValue = index }
    init?(stringValue: String) { nil }
    init?(intValue: Int) { self.intValue = intValue }
}

private struct UnkeyedContainer: UnkeyedEncodingContainer {
    let codingPath: [any CodingKey]
    let storage: EncodingSlot
    var count: Int {
        if case .array(let elements) = storage.content { return elements.count }
        return 0
    }

    mutating func encodeNil() { storage.element().set(.null) }
    mutating func encode(_ value: Bool) { storage.element().set(.bool(value)) }
    mutating func encode(_ value: String) { storage.element().set(.string(value)) }
    mutating func encode(_ value: Double) { storage.element().set(EncodingSlot.number(value)) }
    mutating func encode(_ value: Int) { storage.element().set(.int(Int64(value))) }
    mutating func encode(_ value: Int64) { storage.element().set(.int(value)) }
    mutating func encode(_ value: Float) { storage.element().set(EncodingSlot.number(Double(value))) }
    mutating func encode(_ value: Int8) { storage.element().set(EncodingSlot.integer(value)) }
    mutating func encode(_ value: Int16) { storage.element().set(EncodingSlot.integer(value)) }
    mutating func encode(_ value: Int32) { storage.element().set(EncodingSlot.integer(value)) }
    mutating func encode(_ value: UInt) { storage.element().set(EncodingSlot.integer(value)) }
    mutating func encode(_ value: UInt8) { storage.element().set(EncodingSlot.integer(value)) }
    mutating func encode(_ value: UInt16) { storage.element().set(EncodingSlot.integer(value)) }
    mutating func encode(_ value: UInt32) { storage.element().set(EncodingSlot.integer(value)) }
    mutating func encode(_ value: UInt64) { storage.element().set(EncodingSlot.integer(value)) }
    mutating func encode<T: Encodable>(_ value: T) throws {
        let path = codingPath + [IndexKey(count)]
        try storage.element().set(encoding: value, codingPath: path)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        ValueEncoder(codingPath: codingPath + [IndexKey(count)], storage: storage.element()).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        ValueEncoder(codingPath: codingPath + [IndexKey(count)], storage: storage.element()).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        ValueEncoder(codingPath: codingPath + [IndexKey(count)], storage: storage.element())
    }
}

private struct SingleContainer: SingleValueEncodingContainer {
    let codingPath: [any CodingKey]
    let storage: EncodingSlot

    mutating func encodeNil() { storage.set(.null) }
    mutating func encode(_ value: Bool) { storage.set(.bool(value)) }
    mutating func encode(_ value: String) { storage.set(.string(value)) }
    mutating func encode(_ value: Double) { storage.set(EncodingSlot.number(value)) }
    mutating func encode(_ value: Float) { storage.set(EncodingSlot.number(Double(value))) }
    mutating func encode(_ value: Int) { storage.set(.int(Int64(value))) }
    mutating func encode(_ value: Int64) { storage.set(.int(value)) }
    mutating func encode(_ value: Int8) { storage.set(EncodingSlot.integer(value)) }
    mutating func encode(_ value: Int16) { storage.set(EncodingSlot.integer(value)) }
    mutating func encode(_ value: Int32) { storage.set(EncodingSlot.integer(value)) }
    mutating func encode(_ value: UInt) { storage.set(EncodingSlot.integer(value)) }
    mutating func encode(_ value: UInt8) { storage.set(EncodingSlot.integer(value)) }
    mutating func encode(_ value: UInt16) { storage.set(EncodingSlot.integer(value)) }
    mutating func encode(_ value: UInt32) { storage.set(EncodingSlot.integer(value)) }
    mutating func encode(_ value: UInt64) { storage.set(EncodingSlot.integer(value)) }
    mutating func encode<T: Encodable>(_ value: T) throws { try storage.set(encoding: value, codingPath: codingPath) }
}
