import VMHostWire

/// Reads the members of a JSON object in an ``ObjectValue``'s initializer, and through those reads
/// declares them: run once against a recording, the same initializer gives the object's schema.
///
/// Each read names a member, its type (whose `jsonSchema` describes it), whether it is required, its
/// constraints and its default:
///
/// ```swift
/// init(reader: ObjectReader) throws(JSONDecodingError) {
///     menuUid = try reader.required("menuUid", .nonEmpty)             // {"type":"string","minLength":1}, required
///     pageSize = try reader.optional("pageSize", .in(1...100), default: 20)
///     parent = try reader.optional("parent")                           // nil when missing or null
/// }
/// ```
///
/// When reading, an error names the member's path and what was wrong:
/// `params.args.pageSize: must be between 1 and 100, got 0`. When recording, every read returns a
/// placeholder instead: the default, nil for an optional member, and for a required one the
/// smallest value its schema accepts (``JSONSchemaExample/minimal(_:)``).
///
/// - Important: Read every member on every path, before any other check: a member read only after
///   some condition is not declared when the condition does not hold for the placeholders.
public final class ObjectReader {
    /// Where the object sits, as errors name it: `params.args`, `params.value`.
    public let path: String
    private let mode: Mode

    private enum Mode {
        case reading(JSONObject)
        case recording(Recording)
    }

    /// The members declared by the reads of one initializer, in order.
    final class Recording {
        /// The type being declared, for the messages of a declaration that cannot be recorded.
        let owner: String
        private(set) var properties = JSONObject()
        private(set) var required: [JSON] = []

        init(owner: String) { self.owner = owner }

        /// `{"type":"object","properties":{…},"required":[…],"additionalProperties":false}`.
        var schema: JSON {
            var object: JSONObject = ["type": "object", "properties": .object(properties)]
            if !required.isEmpty { object.append("required", .array(required)) }
            object.append("additionalProperties", false)
            return .object(object)
        }

        func declare(_ key: String, _ schema: JSON, required isRequired: Bool) {
            // A member read twice keeps its first declaration.
            guard properties[key] == nil else { return }
            properties.append(key, schema)
            if isRequired { required.append(.string(key)) }
        }
    }

    /// Reads `object`.
    init(reading object: JSONObject, path: String) {
        self.path = path
        mode = .reading(object)
    }

    /// Records the reads into `recording`, answering each with a placeholder.
    init(recording: Recording) {
        path = "(\(recording.owner))"
        mode = .recording(recording)
    }

    /// The path of the member `key`, as errors name it: `params.args.pageSize`.
    public func path(of key: String) -> String { "\(path).\(key)" }

    /// The member `key`, required (`null` counts as missing), meeting every constraint.
    public func required<Value: InputValue>(
        _ key: String, _ constraints: ValueConstraint<Value>..., as type: Value.Type = Value.self
    ) throws(JSONDecodingError) -> Value {
        switch mode {
        case .reading(let object):
            guard let json = object[key], !json.isNull else {
                throw JSONDecodingError(path: path(of: key), problem: "is required (\(Value.jsonTypeDescription))")
            }
            return try read(json, key, constraints)
        case .recording(let recording):
            let schema = Self.schema(of: Value.self, constraints, default: nil)
            recording.declare(key, schema, required: true)
            return placeholder(key, schema)
        }
    }

    /// The member `key` meeting every constraint, or nil when it is missing or `null`.
    public func optional<Value: InputValue>(
        _ key: String, _ constraints: ValueConstraint<Value>..., as type: Value.Type = Value.self
    ) throws(JSONDecodingError) -> Value? {
        switch mode {
        case .reading(let object):
            guard let json = object[key], !json.isNull else { return nil }
            return try read(json, key, constraints)
        case .recording(let recording):
            recording.declare(key, Self.schema(of: Value.self, constraints, default: nil), required: false)
            return nil
        }
    }

    /// The member `key` meeting every constraint, or `defaultValue` when it is missing or `null`.
    /// The schema says the default.
    public func optional<Value: InputValue & Encodable>(
        _ key: String, _ constraints: ValueConstraint<Value>..., default defaultValue: Value
    ) throws(JSONDecodingError) -> Value {
        switch mode {
        case .reading(let object):
            guard let json = object[key], !json.isNull else { return defaultValue }
            return try read(json, key, constraints)
        case .recording(let recording):
            recording.declare(key, Self.schema(of: Value.self, constraints, default: JSONValueEncoder.encode(defaultValue)), required: false)
            assert(
                constraints.allSatisfy { $0.problem(defaultValue) == nil },
                "\(recording.owner).\(key): the default \(JSONValueEncoder.encode(defaultValue)) does not meet the member's constraints")
            return defaultValue
        }
    }

    private func read<Value: InputValue>(_ json: JSON, _ key: String, _ constraints: [ValueConstraint<Value>]) throws(JSONDecodingError) -> Value {
        let value = try Value(json: json, path: path(of: key))
        for constraint in constraints {
            if let problem = constraint.problem(value) { throw JSONDecodingError(path: path(of: key), problem: problem) }
        }
        return value
    }

    /// The smallest value `schema` accepts, read as `Value`. The built-in constraints keep it valid;
    /// one of an app's own may not, which only the placeholder sees.
    private func placeholder<Value: InputValue>(_ key: String, _ schema: JSON) -> Value {
        let example = JSONSchemaExample.minimal(schema)
        do throws(JSONDecodingError) {
            return try Value(json: example, path: path(of: key))
        } catch {
            fatalError("\(path(of: key)): \(Value.self) refuses \(example), the smallest value of its own schema \(schema) (\(error)); its `jsonSchema` and its reader disagree")
        }
    }

    /// The member's schema: its type's, refined by the constraints, and its default.
    private static func schema<Value: InputValue>(of type: Value.Type, _ constraints: [ValueConstraint<Value>], default defaultValue: JSON?) -> JSON {
        guard case .object(var object) = Value.jsonSchema else { return Value.jsonSchema }
        for constraint in constraints {
            for member in constraint.schema { object[member.key] = member.value }
        }
        if let defaultValue { object["default"] = defaultValue }
        return .object(object)
    }
}
