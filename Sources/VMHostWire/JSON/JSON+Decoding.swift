/// A value of the wrong type or shape, with the path to it: `params.kind: expected a string, got a number`.
public struct JSONDecodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Where the value sits, as written in messages: `params.args.pageSize`, `params.items[2]`.
    public var path: String
    /// What was wrong: `expected a string, got a number`.
    public var problem: String

    /// `problem` with the value at `path`.
    public init(path: String, problem: String) {
        self.path = path
        self.problem = problem
    }

    /// `path: problem`, as errors are written on the wire.
    public var description: String { "\(path): \(problem)" }
}

/// Reads typed members out of a JSON object, naming the path of anything missing or mistyped: how
/// the host reads a method's params (`Call.params(allowing:)`) and an ``ObjectValue`` its members.
///
/// ```swift
/// let params = try JSONReader(request.params, path: "params")
/// let kind: String = try params.required("kind")           // params.kind: expected a string, got null
/// let args = try params.optional("args", as: JSONObject.self)
/// ```
package struct JSONReader: Sendable {
    /// The object read.
    package let object: JSONObject
    /// Where it sits, as errors name it: `params`.
    package let path: String

    /// Reads from `value`, which must be an object; a missing value (nil) reads as an empty object.
    package init(_ value: JSON?, path: String) throws(JSONDecodingError) {
        self.path = path
        switch value {
        case nil, .null?: object = JSONObject()
        case .object(let o)?: object = o
        case let other?: throw JSONDecodingError(path: path, problem: "expected an object, got \(other.typeName)")
        }
    }

    /// The path of the member `key`: `params.kind`.
    package func path(of key: String) -> String { "\(path).\(key)" }

    /// The member `key`, required; `null` counts as missing.
    package func required<T: JSONDecodable>(_ key: String, as type: T.Type = T.self) throws(JSONDecodingError) -> T {
        guard let value = object[key], !value.isNull else {
            throw JSONDecodingError(path: path(of: key), problem: "is required (\(T.jsonTypeDescription))")
        }
        return try T(json: value, path: path(of: key))
    }

    /// The member `key`, or nil when missing or `null`.
    package func optional<T: JSONDecodable>(_ key: String, as type: T.Type = T.self) throws(JSONDecodingError) -> T? {
        guard let value = object[key], !value.isNull else { return nil }
        return try T(json: value, path: path(of: key))
    }

    /// Fails on any member not in `allowed`, naming it: catches typos in a client's params.
    package func rejectUnknown(_ allowed: Set<String>) throws(JSONDecodingError) {
        for member in object where !Self.holds(allowed, member.key) {
            let expected = allowed.isEmpty ? "none is expected" : "expected one of: \(allowed.sorted().joined(separator: ", "))"
            throw JSONDecodingError(path: path(of: member.key), problem: "is not a known member (\(expected))")
        }
    }

    /// Whether `allowed` holds `key`: a few names are compared one by one, which costs less than
    /// hashing the key (a method's params are read at every call).
    private static func holds(_ allowed: Set<String>, _ key: String) -> Bool {
        guard allowed.count <= 8 else { return allowed.contains(key) }
        for name in allowed where name == key { return true }
        return false
    }
}

/// A type that can be read from a JSON value, failing with the path of the value.
public protocol JSONDecodable {
    /// Reads `json`, which sits at `path`; a value of the wrong type or shape is an error naming
    /// `path` (`params.value.id: expected a string, got a number`).
    init(json: JSON, path: String) throws(JSONDecodingError)
    /// How the expected JSON is described in errors: "a string", "an integer".
    static var jsonTypeDescription: String { get }
}

extension JSONDecodingError {
    static func mismatch(_ path: String, expected: String, got value: JSON) -> JSONDecodingError {
        JSONDecodingError(path: path, problem: "expected \(expected), got \(value.typeName)")
    }
}

extension String: JSONDecodable {
    /// `a string`: how errors name the type expected.
    public static var jsonTypeDescription: String { "a string" }
    /// Reads `json`, naming `path` when it is of another type.
    public init(json: JSON, path: String) throws(JSONDecodingError) {
        guard case .string(let s) = json else { throw .mismatch(path, expected: Self.jsonTypeDescription, got: json) }
        self = s
    }
}

extension Bool: JSONDecodable {
    /// `a boolean`: how errors name the type expected.
    public static var jsonTypeDescription: String { "a boolean" }
    /// Reads `json`, naming `path` when it is of another type.
    public init(json: JSON, path: String) throws(JSONDecodingError) {
        guard case .bool(let b) = json else { throw .mismatch(path, expected: Self.jsonTypeDescription, got: json) }
        self = b
    }
}

extension Int: JSONDecodable {
    /// `an integer`: how errors name the type expected.
    public static var jsonTypeDescription: String { "an integer" }
    /// Reads `json`, naming `path` when it is of another type.
    public init(json: JSON, path: String) throws(JSONDecodingError) {
        guard let i = json.intValue, let value = Int(exactly: i) else {
            if case .double = json { throw JSONDecodingError(path: path, problem: "expected an integer, got a fractional number") }
            throw .mismatch(path, expected: Self.jsonTypeDescription, got: json)
        }
        self = value
    }
}

extension Int64: JSONDecodable {
    /// `an integer`: how errors name the type expected.
    public static var jsonTypeDescription: String { "an integer" }
    /// Reads `json`, naming `path` when it is of another type.
    public init(json: JSON, path: String) throws(JSONDecodingError) {
        guard let i = json.intValue else {
            if case .double = json { throw JSONDecodingError(path: path, problem: "expected an integer, got a fractional number") }
            throw .mismatch(path, expected: Self.jsonTypeDescription, got: json)
        }
        self = i
    }
}

extension Double: JSONDecodable {
    /// `a number`: how errors name the type expected.
    public static var jsonTypeDescription: String { "a number" }
    /// Reads `json`, naming `path` when it is of another type.
    public init(json: JSON, path: String) throws(JSONDecodingError) {
        guard let d = json.doubleValue else { throw .mismatch(path, expected: Self.jsonTypeDescription, got: json) }
        self = d
    }
}

extension JSON: JSONDecodable {
    /// `any JSON value`: how errors name the type expected.
    public static var jsonTypeDescription: String { "any JSON value" }
    /// Any value, as it is.
    public init(json: JSON, path: String) throws(JSONDecodingError) { self = json }
}

extension JSONObject: JSONDecodable {
    /// `an object`: how errors name the type expected.
    public static var jsonTypeDescription: String { "an object" }
    /// Reads `json`, naming `path` when it is of another type.
    public init(json: JSON, path: String) throws(JSONDecodingError) {
        guard case .object(let o) = json else { throw .mismatch(path, expected: Self.jsonTypeDescription, got: json) }
        self = o
    }
}

extension Array: JSONDecodable where Element: JSONDecodable {
    /// `an array`: how errors name the type expected.
    public static var jsonTypeDescription: String { "an array" }
    /// Reads `json`, naming `path` when it is of another type.
    public init(json: JSON, path: String) throws(JSONDecodingError) {
        guard case .array(let elements) = json else { throw .mismatch(path, expected: Self.jsonTypeDescription, got: json) }
        var result: [Element] = []
        result.reserveCapacity(elements.count)
        for (index, element) in elements.enumerated() {
            result.append(try Element(json: element, path: "\(path)[\(index)]"))
        }
        self = result
    }
}
