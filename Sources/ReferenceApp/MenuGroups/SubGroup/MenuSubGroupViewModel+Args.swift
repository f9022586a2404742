import VMHost

extension MenuSubGroupViewModel {
    /// `{menuUid}`: the menu whose sub-groups are shown. Required and non-empty.
    public struct Args: ViewModelArgs, Equatable {
        public var menuUid: String

        public init(menuUid: String) { self.menuUid = menuUid }

        public init(reader: ObjectReader) throws(JSONDecodingError) {
            menuUid = try reader.required("menuUid", .nonEmpty)
        }
    }
}
