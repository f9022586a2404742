import VMHostRuntime
import VMHostWire

/// A sub-group of a menu: `{id, name, dishCount}` on the wire.
public struct MenuGroup: Sendable, Hashable, Identifiable {
    public var id: String
    public var name: String
    /// How many dishes the group holds.
    public var dishCount: Int

    public init(id: String, name: String, dishCount: Int) {
        self.id = id
        self.name = name
        self.dishCount = dishCount
    }

    public init(json: JSON) throws(DomainError) {
        let fields = try JSONFields(json, context: "group")
        id = try fields.string("id")
        name = try fields.string("name")
        dishCount = try fields.int("dishCount")
    }

    public var json: JSON { ["id": .string(id), "name": .string(name), "dishCount": JSON(dishCount)] }
}
