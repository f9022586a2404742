import VMHostRuntime
import VMHostWire

/// The value of `rename` and `delete`: `{groupId}`, read with errors that name `params.value.groupId`.
public struct GroupReference: Sendable, Equatable, InputValue {
    public var groupId: String

    public init(groupId: String) { self.groupId = groupId }

    public static var jsonTypeDescription: String { "an object {groupId}" }

    public init(json: JSON, path: String) throws(JSONDecodingError) {
        let reader = try JSONReader(json, path: path)
        try reader.rejectUnknown(["groupId"])
        groupId = try reader.required("groupId")
        guard !groupId.isEmpty else { throw JSONDecodingError(path: reader.path(of: "groupId"), problem: "must not be empty") }
    }

    /// The key of `delete`'s per-group policy.
    @Sendable static func key(of value: GroupReference) -> String { value.groupId }

    public static var jsonSchema: JSON { declaredSchema }

    /// Made once: every MenuSubGroup declares two inputs with it.
    static let declaredSchema: JSON = [
        "type": "object",
        "properties": ["groupId": ["type": "string", "minLength": 1]],
        "required": ["groupId"],
        "additionalProperties": false,
    ]
}
