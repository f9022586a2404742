import Backend
import VMHost

/// The value of `MenuEditGroup.saved`: `{group: {id, name, dishCount}}`, the group as the server
/// answered the create or rename. An open object, as its group (``MenuGroup``).
public struct SavedGroup: Sendable, Equatable, JSONEncodable, Decodable {
    public var group: MenuGroup

    public init(group: MenuGroup) { self.group = group }

    public var json: JSON { ["group": group.json] }

    public static var jsonSchema: JSON {
        ["type": "object", "properties": ["group": MenuGroup.jsonSchema], "required": ["group"]]
    }
}
