import VMHost

/// A sub-group of a menu: `{id, name, dishCount}`, as the backend sends it and as a
/// `MenuSubGroup` shows it (a row of `groups`, the group of `MenuEditGroup.saved`).
///
/// Its schema is written by hand: an open object, as `host.describe` has always reported it.
public struct MenuGroup: Sendable, Hashable, Identifiable, JSONEncodable, Decodable {
    public var id: String
    public var name: String
    /// How many dishes the group holds.
    public var dishCount: Int

    public init(id: String, name: String, dishCount: Int) {
        self.id = id
        self.name = name
        self.dishCount = dishCount
    }

    public init(json: JSON) throws(BackendError) {
        let fields = try JSONFields(json, context: "group")
        id = try fields.string("id")
        name = try fields.string("name")
        dishCount = try fields.int("dishCount")
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
