import VMHost

/// One item of the list: `{id, title, done}` (its JSON and schema come from this declaration).
public struct Todo: Sendable, Hashable, Codable {
    /// Given by the backend: `t1`, `t2`, …
    public var id: String
    /// What is to be done: 1…80 characters (``TodoTitle``).
    public var title: String
    /// Whether it is done.
    public var done: Bool

    /// A todo as the backend stores it.
    public init(id: String, title: String, done: Bool = false) {
        self.id = id
        self.title = title
        self.done = done
    }
}

/// The value of the inputs that name one todo: `{id}`, a non-empty string, and nothing else.
public struct TodoReference: ObjectValue, Sendable, Equatable {
    /// The todo's id.
    public var id: String

    /// A reference to the todo `id`.
    public init(id: String) { self.id = id }

    /// Reads `{id}`, naming `params.value.id` when it is missing, empty or not a string.
    public init(reader: ObjectReader) throws(JSONDecodingError) {
        id = try reader.required("id", .nonEmpty)
    }
}

/// Titles: 1…80 characters once spaces at both ends are trimmed.
public enum TodoTitle {
    /// The longest title accepted.
    public static let maxLength = 80

    /// `text` without spaces and newlines at either end.
    public static func trimmed(_ text: String) -> String {
        var scalars = Substring(text)
        while let first = scalars.first, first.isWhitespace { scalars.removeFirst() }
        while let last = scalars.last, last.isWhitespace { scalars.removeLast() }
        return String(scalars)
    }

    /// Refuses `text` as a title (-32602 naming the value), with why.
    public static func check(_ text: String) throws(InputError) {
        if let problem = problem(text) { throw .refused("", problem) }
    }

    /// Why `text` cannot be a title, or nil when it can.
    public static func problem(_ text: String) -> String? {
        let title = trimmed(text)
        if title.isEmpty { return "the title is empty" }
        if title.count > maxLength { return "the title is longer than \(maxLength) characters" }
        return nil
    }
}
