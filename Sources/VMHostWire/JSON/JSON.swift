/// A JSON value as it travels on the wire.
///
/// Integers and reals are kept apart (`1` is `.int(1)`, `1.0` is `.double(1.0)`), integers are
/// 64-bit, and objects keep their members in order so that what the host writes reads in the order
/// it was built. Parsing and serialising go through jansson (see `JSON+Jansson.swift`).
///
/// Equality is structural and, for objects, order-sensitive: the host builds every object it
/// compares in one fixed order, so this is both cheaper and exact for its use.
public enum JSON: Sendable, Hashable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSON])
    case object(JSONObject)
}

extension JSON {
    /// The name of this value's JSON type, as used in error messages ("expected a string, got a number").
    public var typeName: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .int, .double: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }

    public var isNull: Bool { if case .null = self { true } else { false } }

    public var stringValue: String? { if case .string(let s) = self { s } else { nil } }
    public var boolValue: Bool? { if case .bool(let b) = self { b } else { nil } }
    public var arrayValue: [JSON]? { if case .array(let a) = self { a } else { nil } }
    public var objectValue: JSONObject? { if case .object(let o) = self { o } else { nil } }

    /// The value as a 64-bit integer: an integer, or a real with no fractional part.
    public var intValue: Int64? {
        switch self {
        case .int(let i): return i
        case .double(let d):
            guard d.rounded() == d, d >= -9.2e18, d <= 9.2e18 else { return nil }
            return Int64(d)
        default: return nil
        }
    }

    /// The value as a real number: an integer or a real.
    public var doubleValue: Double? {
        switch self {
        case .int(let i): Double(i)
        case .double(let d): d
        default: nil
        }
    }

    /// The member `key` of an object, or nil for a missing member or a value that is not an object.
    public subscript(key: String) -> JSON? {
        if case .object(let o) = self { return o[key] }
        return nil
    }
}

/// The members of a JSON object, in order.
///
/// Lookup is a linear scan: the objects the host handles are small (params, outputs, cells), for
/// which a scan beats hashing. Setting an existing key replaces its value in place.
public struct JSONObject: Sendable, Hashable, RandomAccessCollection, ExpressibleByDictionaryLiteral {
    public struct Member: Sendable, Hashable {
        public var key: String
        public var value: JSON
        public init(key: String, value: JSON) {
            self.key = key
            self.value = value
        }
    }

    public private(set) var members: [Member]

    public init() { members = [] }
    public init(members: [Member]) { self.members = members }
    public init(dictionaryLiteral elements: (String, JSON)...) {
        members = elements.map { Member(key: $0.0, value: $0.1) }
    }
    public init(_ pairs: [(String, JSON)]) {
        members = pairs.map { Member(key: $0.0, value: $0.1) }
    }

    public var startIndex: Int { members.startIndex }
    public var endIndex: Int { members.endIndex }
    public subscript(position: Int) -> Member { members[position] }

    public var keys: [String] { members.map(\.key) }

    public subscript(key: String) -> JSON? {
        get {
            for member in members where member.key == key { return member.value }
            return nil
        }
        set {
            if let index = members.firstIndex(where: { $0.key == key }) {
                if let newValue { members[index].value = newValue } else { members.remove(at: index) }
            } else if let newValue {
                members.append(Member(key: key, value: newValue))
            }
        }
    }

    /// Appends a member without looking for an existing key: for building objects whose keys are known to differ.
    public mutating func append(_ key: String, _ value: JSON) {
        members.append(Member(key: key, value: value))
    }

    public mutating func reserveCapacity(_ n: Int) { members.reserveCapacity(n) }
}

extension JSON: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(nilLiteral: ()) { self = .null }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(stringLiteral value: String) { self = .string(value) }
    public init(arrayLiteral elements: JSON...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSON)...) {
        self = .object(JSONObject(members: elements.map { JSONObject.Member(key: $0.0, value: $0.1) }))
    }
}

extension JSON {
    public init(_ value: Int) { self = .int(Int64(value)) }
    public init(_ value: String?) { self = value.map { .string($0) } ?? .null }
}

extension JSON: CustomStringConvertible {
    /// The compact JSON text of this value.
    public var description: String { String(decoding: serialized(), as: UTF8.self) }
}

extension JSON {
    /// This value with every value equal to `target`, at any depth, replaced by `replacement`.
    public func replacing(_ target: JSON, with replacement: JSON) -> JSON {
        if self == target { return replacement }
        switch self {
        case .array(let elements): return .array(elements.map { $0.replacing(target, with: replacement) })
        case .object(let object):
            return .object(JSONObject(members: object.members.map { .init(key: $0.key, value: $0.value.replacing(target, with: replacement)) }))
        default: return self
        }
    }
}
