import Backend

/// The rule for a group name: 1…20 characters once white space at both ends is trimmed (the
/// server's rule too, so a name the editor accepts is one the server accepts).
enum GroupName {
    static let maxLength = 20

    static func trimmed(_ text: String) -> String {
        text.trimmingWhiteSpace()
    }

    /// Why `text` cannot be saved, or nil when it can. `original` is the name being renamed.
    static func problem(_ text: String, original: String?) -> String? {
        let name = trimmed(text)
        if name.isEmpty { return "the name is empty" }
        if name.count > maxLength { return "the name is longer than \(maxLength) characters" }
        if let original, name == trimmed(original) { return "the name is unchanged" }
        return nil
    }
}
