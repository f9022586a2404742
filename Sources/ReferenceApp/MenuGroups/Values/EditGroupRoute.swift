import VMHost

/// The value of `MenuSubGroup.navigate`: open the edit screen,
/// `{route:"MenuEditGroup", args:{menuUid, parent, groupId?, name?}}`.
///
/// `args` are exactly what the client passes to `vm.create {kind:"MenuEditGroup", args}`; `parent`
/// is the sub-group view-model's handle, so the editor can make it reload after a save.
public struct EditGroupRoute: Sendable, Equatable, JSONEncodable, Decodable {
    public static let route = "MenuEditGroup"

    public var menuUid: String
    public var parent: String
    /// The group to rename; nil to create one.
    public var groupId: String?
    /// The group's current name when renaming.
    public var name: String?

    public init(menuUid: String, parent: String, groupId: String? = nil, name: String? = nil) {
        self.menuUid = menuUid
        self.parent = parent
        self.groupId = groupId
        self.name = name
    }

    public var json: JSON {
        var args: JSONObject = ["menuUid": .string(menuUid), "parent": .string(parent)]
        if let groupId { args.append("groupId", .string(groupId)) }
        if let name { args.append("name", .string(name)) }
        return ["route": .string(Self.route), "args": .object(args)]
    }

    public static var jsonSchema: JSON {
        [
            "type": "object",
            "properties": [
                "route": ["const": .string(route)],
                "args": [
                    "type": "object",
                    "properties": [
                        "menuUid": ["type": "string"], "parent": ["type": "string"],
                        "groupId": ["type": "string"], "name": ["type": "string"],
                    ],
                    "required": ["menuUid", "parent"],
                ],
            ],
            "required": ["route", "args"],
        ]
    }
}
