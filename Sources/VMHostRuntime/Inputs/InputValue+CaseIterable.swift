import VMHostWire

/// An enum with raw values reads, writes and describes itself by its cases: conforming is enough.
///
/// ```swift
/// enum TodoFilter: String, CaseIterable, Codable, InputValue { case all, open, done }
/// // jsonSchema: {"type":"string","enum":["all","open","done"]}
/// // 3: expected "all", "open" or "done", got a number      "later": must be "all", "open" or "done"
/// ```
///
/// The text refused is not repeated: a client that mixed up its fields may have sent a secret.
extension InputValue where Self: RawRepresentable & CaseIterable, RawValue: InputValue & Encodable {
    /// The raw value's schema with its cases as `enum`.
    public static var jsonSchema: JSON {
        guard case .object(var object) = RawValue.jsonSchema else { return RawValue.jsonSchema }
        object["enum"] = .array(allCases.map { JSONValueEncoder.encode($0.rawValue) })
        return .object(object)
    }

    /// `"all", "open" or "done"`.
    public static var jsonTypeDescription: String { JSONAlternatives.text(allCases.map { JSONValueEncoder.encode($0.rawValue) }) }

    /// Reads one of the cases' raw values, naming `path` otherwise.
    public init(json: JSON, path: String) throws(JSONDecodingError) {
        guard let raw = try? RawValue(json: json, path: path) else {
            throw JSONDecodingError(path: path, problem: "expected \(Self.jsonTypeDescription), got \(json.typeName)")
        }
        guard let value = Self(rawValue: raw) else {
            throw JSONDecodingError(path: path, problem: "must be \(Self.jsonTypeDescription)")
        }
        self = value
    }
}

extension JSONEncodable where Self: RawRepresentable & CaseIterable, RawValue: JSONEncodable {
    /// The raw value.
    public var json: JSON { rawValue.json }
}
