import VMHost

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

        public init(reader: ObjectReader) throws(JSONDecodingError) {
            menuUid = try reader.required("menuUid", .nonEmpty)
            parent = try reader.optional("parent", .nonEmpty)
            groupId = try reader.optional("groupId", .nonEmpty)
            name = try reader.optional("name")
        }
    }
}
