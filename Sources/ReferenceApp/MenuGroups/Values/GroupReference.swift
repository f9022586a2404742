import VMHost

/// The value of `rename` and `delete`: `{groupId}`, read with errors that name `params.value.groupId`.
public struct GroupReference: Sendable, Equatable, ObjectValue {
    public var groupId: String

    public init(groupId: String) { self.groupId = groupId }

    public init(reader: ObjectReader) throws(JSONDecodingError) {
        groupId = try reader.required("groupId", .nonEmpty)
    }
}
