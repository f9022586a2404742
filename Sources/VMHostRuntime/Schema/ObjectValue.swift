import Synchronization
import VMHostWire

/// A JSON object type declared once, by the reads of its initializer: its JSON Schema, the refusal
/// of members it does not read and its errors all come from ``init(reader:)``.
///
/// The args of a kind (``ViewModelArgs``) are one; so is an object nested in them or carried by
/// an input (`{id}`):
///
/// ```swift
/// struct TodoReference: ObjectValue {
///     var id: String
///     init(reader: ObjectReader) throws(JSONDecodingError) {
///         id = try reader.required("id", .nonEmpty)
///     }
/// }
/// // jsonSchema: {"type":"object","properties":{"id":{"type":"string","minLength":1}},"required":["id"],"additionalProperties":false}
/// // {"id":""}: params.value.id: must not be empty     {"ids":"t1"}: params.value.ids: is not a known member (expected one of: id)
/// ```
///
/// A member's schema is its type's `jsonSchema` (`String`, `Int`, `Double`, `Bool`, arrays, enums
/// with raw values, other object values, any ``InputValue``) refined by its constraints
/// (``ValueConstraint``). A check that no constraint expresses (one member against another) may
/// follow the reads, throwing `JSONDecodingError(path: reader.path(of: key), problem: …)`; the schema
/// cannot show it, and the placeholders the reads answer while the schema is recorded must pass it.
///
/// The schema is recorded once per type, the first time it is asked for, by running the initializer
/// against a recording reader. A type whose members cannot be declared by its reads (a member read
/// only on some path, a type that contains itself) declares `jsonSchema` by hand instead.
public protocol ObjectValue: InputValue {
    /// Reads the object's members through `reader`; see ``ObjectReader``.
    init(reader: ObjectReader) throws(JSONDecodingError)
}

extension ObjectValue {
    /// The schema recorded from ``init(reader:)``: `{"type":"object","properties":{…},"required":[…],"additionalProperties":false}`.
    public static var jsonSchema: JSON { ObjectDeclarations.schema(of: Self.self) }

    /// `an object {id}`: the members the schema lists.
    public static var jsonTypeDescription: String {
        let keys = jsonSchema["properties"]?.objectValue?.keys ?? []
        return keys.isEmpty ? "an object" : "an object {\(keys.joined(separator: ", "))}"
    }

    /// Reads `json`, an object (`null` reads as an empty one): refuses a member that ``jsonSchema``
    /// does not list, then reads the members with ``init(reader:)``.
    public init(json: JSON, path: String) throws(JSONDecodingError) {
        let members = try JSONReader(json, path: path)
        try members.rejectUnknown(Set(Self.jsonSchema["properties"]?.objectValue?.keys ?? []))
        try self.init(reader: ObjectReader(reading: members.object, path: path))
    }

    /// An instance made of the placeholders the reads answer while recording: the defaults, nil for
    /// optional members, the smallest valid value of each required one. Stops, naming the type,
    /// when the initializer refuses them.
    static func recorded() -> (instance: Self, schema: JSON) {
        let recording = ObjectReader.Recording(owner: "\(Self.self)")
        do throws(JSONDecodingError) {
            let instance = try Self(reader: ObjectReader(recording: recording))
            return (instance, recording.schema)
        } catch {
            fatalError("\(Self.self): the initializer refuses the placeholders its own reads answer (\(error)); check after the reads only what they pass, or declare `jsonSchema` and `placeholder` by hand")
        }
    }
}

/// The schemas recorded from ``ObjectValue/init(reader:)``, one per type.
enum ObjectDeclarations {
    private static let schemas = Mutex<[ObjectIdentifier: JSON]>([:])

    static func schema<Value: ObjectValue>(of type: Value.Type) -> JSON {
        let id = ObjectIdentifier(type)
        if let schema = schemas.withLock({ $0[id] }) { return schema }
        // Recorded outside the lock: a member's own schema may be recorded on the way. Two threads
        // may both record a new type; they record the same schema.
        let schema = Value.recorded().schema
        schemas.withLock { $0[id] = schema }
        return schema
    }
}
