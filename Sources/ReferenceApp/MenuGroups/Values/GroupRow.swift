import Backend
import VMHostWire

/// One row of `MenuSubGroup.groups`: `{id, name, dishCount}`, as the server sent it.
///
/// Its own type rather than ``Backend/MenuGroup`` so the output carries a JSON Schema for
/// `host.describe` and the view-model layer owns what it shows.
public struct GroupRow: Sendable, Equatable, JSONEncodable {
    public var id: String
    public var name: String
    public var dishCount: Int

    public init(id: String, name: String, dishCount: Int) {
        self.id = id
        self.name = name
        self.dishCount = dishCount
    }

    public init(_ group: MenuGroup) {
        self.init(id: group.id, name: group.name, dishCount: group.dishCount)
    }

    public var json: JSON { ["id": .string(id), "name": .string(name), "dishCount": JSON(dishCount)] }

    public static var jsonSchema: JSON {
        [
            "type": "object",
            "properties": ["id": ["type": "string"], "name": ["type": "string"], "dishCount": ["type": "integer"]],
            "required": ["id", "name", "dishCount"],
        ]
    }
}
