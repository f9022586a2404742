import VMHostWire

/// The value of `MenuEditGroup.saved`: `{group: {id, name, dishCount}}`, the group as the server
/// answered the create or rename.
public struct SavedGroup: Sendable, Equatable, JSONEncodable {
    public var group: GroupRow

    public init(group: GroupRow) { self.group = group }

    public var json: JSON { ["group": group.json] }

    public static var jsonSchema: JSON {
        ["type": "object", "properties": ["group": GroupRow.jsonSchema], "required": ["group"]]
    }
}
