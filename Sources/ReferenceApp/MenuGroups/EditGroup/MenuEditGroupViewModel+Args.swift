import VMHostRuntime
import VMHostWire

extension MenuEditGroupViewModel {
    /// `{menuUid, parent?, groupId?, name?}`: what `MenuSubGroup.navigate` hands over.
    ///
    /// Without `groupId` the editor creates a group; with it, it renames that group, and `name` is
    /// its current name (the editor's starting text and what "unchanged" is measured against).
    public struct Args: ViewModelArgs, Equatable {
        public var menuUid: String
        /// The handle of the `MenuSubGroup` to reload after a save.
        public var parent: String?
        public var groupId: String?
        public var name: String?

        public init(menuUid: String, parent: String? = nil, groupId: String? = nil, name: String? = nil) {
            self.menuUid = menuUid
            self.parent = parent
            self.groupId = groupId
            self.name = name
        }

        public init(reader: JSONReader) throws(JSONDecodingError) {
            try reader.rejectUnknown(["menuUid", "parent", "groupId", "name"])
            menuUid = try reader.required("menuUid")
            parent = try reader.optional("parent")
            groupId = try reader.optional("groupId")
            name = try reader.optional("name")
            for (key, value) in [("menuUid", menuUid), ("parent", parent), ("groupId", groupId)] where value?.isEmpty == true {
                throw JSONDecodingError(path: reader.path(of: key), problem: "must not be empty")
            }
        }

        public static var schema: JSON {
            [
                "type": "object",
                "properties": [
                    "menuUid": ["type": "string", "minLength": 1],
                    "parent": ["type": "string", "minLength": 1],
                    "groupId": ["type": "string", "minLength": 1],
                    "name": ["type": "string"],
                ],
                "required": ["menuUid"],
                "additionalProperties": false,
            ]
        }
    }
}
