/// The header fields of a request or a response, in order; names compare without regard to case.
///
/// ```swift
/// var headers: HTTPHeaders = ["Accept": "application/json"]
/// headers["Authorization"] = "Bearer \(token)"   // replaces any field of that name
/// headers["authorization"]                        // "Bearer …"
/// ```
public struct HTTPHeaders: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    /// The fields as written, in order.
    public private(set) var fields: [(name: String, value: String)] = []

    public init() {}

    public init(dictionaryLiteral elements: (String, String)...) {
        for (name, value) in elements { self[name] = value }
    }

    /// The value of the first field named `name`; setting replaces every field of that name (nil removes them).
    public subscript(name: String) -> String? {
        get {
            fields.first { Self.sameName($0.name, name) }?.value
        }
        set {
            let index = fields.firstIndex { Self.sameName($0.name, name) }
            if index != nil { fields.removeAll { Self.sameName($0.name, name) } }
            if let newValue { fields.insert((name, newValue), at: index ?? fields.count) }
        }
    }

    /// Adds a field, keeping those of the same name (`Set-Cookie`).
    public mutating func add(_ name: String, _ value: String) { fields.append((name, value)) }

    /// Whether a field is named `name`.
    public func contains(_ name: String) -> Bool { self[name] != nil }

    /// Removes the fields whose name is in `names` (lower-cased).
    mutating func remove(lowercasedNames names: Set<String>) {
        fields.removeAll { names.contains($0.name.lowercased()) }
    }

    /// `self` with the fields of `other` set over it, name by name.
    func merging(_ other: HTTPHeaders) -> HTTPHeaders {
        var merged = self
        for field in other.fields { merged.fields.removeAll { Self.sameName($0.name, field.name) } }
        merged.fields += other.fields
        return merged
    }

    /// Whether two names are the same without regard to case: ASCII compared byte by byte, with
    /// no string made (a client's headers are set at start-up); any other text lower-cased.
    static func sameName(_ first: String, _ second: String) -> Bool {
        guard first.utf8.allSatisfy({ $0 < 0x80 }), second.utf8.allSatisfy({ $0 < 0x80 }) else {
            return first.lowercased() == second.lowercased()
        }
        return first.utf8.elementsEqual(second.utf8) { lowercased($0) == lowercased($1) }
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
    }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }

    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields.elementsEqual(rhs.fields) { $0.name == $1.name && $0.value == $1.value }
    }

    public func hash(into hasher: inout Hasher) {
        for field in fields {
            hasher.combine(field.name)
            hasher.combine(field.value)
        }
    }
}
