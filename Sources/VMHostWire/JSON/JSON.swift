/// A JSON value as it travels on the wire.
///
/// Integers and reals are kept apart (`1` is `.int(1)`, `1.0` is `.double(1.0)`), integers are
/// 64-bit, and objects keep their members in order so that what the host writes reads in the order
/// it was built. Parsing and serialising go through jansson (see `JSON+Jansson.swift`).
///
/// Equality is structural and, for objects, order-sensitive: the host builds every object it
/// compares in one fixed order, so this is both cheaper and exact for its use.
public enum JSON: Sendable, Hashable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// An integer (a number written without a fraction or an exponent).
    case int(Int64)
    /// A real number.
    case double(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSON])
    /// An object, its members in order.
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

    /// Whether the value is `null`.
    public var isNull: Bool { if case .null = self { true } else { false } }

    /// The string, if the value is one.
    public var stringValue: String? { if case .string(let s) = self { s } else { nil } }
    /// The boolean, if the value is one.
    public var boolValue: Bool? { if case .bool(let b) = self { b } else { nil } }
    /// The elements, if the value is an array.
    public var arrayValue: [JSON]? { if case .array(let a) = self { a } else { nil } }
    /// The members, if the value is an object.
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
    /// One member: its key and its value.
    public struct Member: Sendable, Hashable {
        /// The member's name.
        public var key: String
        /// The member's value.
        public var value: JSON
        /// The member `key`: `value`.
        public init(key: String, value: JSON) {
            self.key = key
            self.value = value
        }
    }

    /// The members, in order.
    public private(set) var members: [Member]

    /// An empty object.
    public init() { members = [] }
    /// An object of `members`, in their order.
    public init(members: [Member]) { self.members = members }
    /// `["id": "t1", "done": false]`, in the order written.
    public init(dictionaryLiteral elements: (String, JSON)...) {
        self.init(members: Self.members(elements))
    }
    /// An object of the key-value `pairs`, in their order.
    public init(_ pairs: [(String, JSON)]) {
        self.init(members: Self.members(pairs))
    }

    /// The members of `pairs`, by a loop: `map` with a closure copied each pair through the
    /// tuple's run-time metadata (an object written as a literal, a product of a page, paid it per member).
    static func members(_ pairs: [(String, JSON)]) -> [Member] {
        var members: [Member] = []
        members.reserveCapacity(pairs.count)
        for index in pairs.indices { members.append(Member(key: pairs[index].0, value: pairs[index].1)) }
        return members
    }

    /// The position of the first member.
    public var startIndex: Int { members.startIndex }
    /// The position past the last member.
    public var endIndex: Int { members.endIndex }
    /// The member at `position`.
    public subscript(position: Int) -> Member { members[position] }

    /// The members' names, in order.
    public var keys: [String] { members.map(\.key) }

    /// The value of the member `key`, or nil; setting nil removes the member, setting an existing
    /// key replaces its value in place, and a new key is appended.
    public subscript(key: String) -> JSON? {
        get {
            // Lengths first: a length is read, a differing key compared; by index, so that no
            // member is copied out (a copy retains and releases its value).
            let length = key.utf8.count
            for index in members.indices where members[index].key.utf8.count == length && members[index].key == key {
                return members[index].value
            }
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

    package mutating func reserveCapacity(_ n: Int) { members.reserveCapacity(n) }
}

extension JSON: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    /// `nil`: `null`.
    public init(nilLiteral: ()) { self = .null }
    /// `true`, `false`.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// `42`: an integer.
    public init(integerLiteral value: Int64) { self = .int(value) }
    /// `4.5`: a real number.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// `"text"`: a string.
    public init(stringLiteral value: String) { self = .string(value) }
    /// `[1, "a"]`: an array.
    public init(arrayLiteral elements: JSON...) { self = .array(elements) }
    /// `["id": "t1"]`: an object, in the order written.
    public init(dictionaryLiteral elements: (String, JSON)...) {
        self = .object(JSONObject(members: JSONObject.members(elements)))
    }
}

extension JSON {
    /// An integer.
    public init(_ value: Int) { self = .int(Int64(value)) }
    /// A string, or `null` for nil.
    public init(_ value: String?) { self = value.map { .string($0) } ?? .null }
}

extension JSON: CustomStringConvertible {
    /// The compact JSON text of this value.
    public var description: String { String(decoding: serialized(), as: UTF8.self) }
}

extension JSON {
    /// This value with every value equal to `target`, at any depth, replaced by `replacement`.
    package func replacing(_ target: JSON, with replacement: JSON) -> JSON {
        if self == target { return replacement }
        switch self {
        case .array(let elements): return .array(elements.map { $0.replacing(target, with: replacement) })
        case .object(let object):
            return .object(JSONObject(members: object.members.map { .init(key: $0.key, value: $0.value.replacing(target, with: replacement)) }))
        default: return self
        }
    }
}

extension JSON {
    /// About the bytes this value holds in memory: each value's own slot, the buffers of arrays,
    /// objects and strings too long to be stored inline (with their headers and unused capacity).
    /// An estimate for bounds on memory, not an exact count (the allocator's rounding is left out).
    package var estimatedMemory: Int {
        let slot = MemoryLayout<JSON>.stride
        switch self {
        case .null, .bool, .int, .double: return slot
        case .string(let string): return slot + Self.heapBytes(of: string)
        case .array(let elements):
            guard elements.capacity > 0 else { return slot }
            var total = slot + Self.bufferHeader + (elements.capacity - elements.count) * slot
            for index in elements.indices { total &+= elements[index].estimatedMemory }
            return total
        case .object(let object):
            let members = object.members
            guard members.capacity > 0 else { return slot }
            let memberSlot = MemoryLayout<JSONObject.Member>.stride
            var total = slot + Self.bufferHeader + members.capacity * memberSlot
            for index in members.indices {
                total &+= Self.heapBytes(of: members[index].key) &+ members[index].value.estimatedMemory &- slot
            }
            return total
        }
    }

    /// The header of an array's buffer (its count, capacity and object header).
    private static let bufferHeader = 32

    /// The bytes of `string`'s buffer: none for a short string (stored in place).
    private static func heapBytes(of string: String) -> Int {
        let count = string.utf8.count
        return count <= 15 ? 0 : bufferHeader + count + 1
    }
}
