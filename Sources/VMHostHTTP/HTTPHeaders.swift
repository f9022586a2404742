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
            let key = name.lowercased()
            return fields.first { $0.name.lowercased() == key }?.value
        }
        set {
            let key = name.lowercased()
            let index = fields.firstIndex { $0.name.lowercased() == key }
            fields.removeAll { $0.name.lowercased() == key }
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
        for field in other.fields { merged.fields.removeAll { $0.name.lowercased() == field.name.lowercased() } }
        merged.fields += other.fields
        return merged
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
