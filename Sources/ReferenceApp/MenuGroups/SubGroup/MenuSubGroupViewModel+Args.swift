import VMHostRuntime
import VMHostWire

extension MenuSubGroupViewModel {
    /// `{menuUid}`: the menu whose sub-groups are shown. Required and non-empty.
    public struct Args: ViewModelArgs, Equatable {
        public var menuUid: String

        public init(menuUid: String) { self.menuUid = menuUid }

        public init(reader: JSONReader) throws(JSONDecodingError) {
            try reader.rejectUnknown(["menuUid"])
            menuUid = try reader.required("menuUid")
            guard !menuUid.isEmpty else { throw JSONDecodingError(path: reader.path(of: "menuUid"), problem: "must not be empty") }
        }

        public static var schema: JSON {
            [
                "type": "object",
                "properties": ["menuUid": ["type": "string", "minLength": 1]],
                "required": ["menuUid"],
                "additionalProperties": false,
            ]
        }
    }
}
