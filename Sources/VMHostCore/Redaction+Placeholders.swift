@_spi(Transport) import VMHostWire

/// How a recording masks a secret: by name, each secret the longest value seen of a run of values
/// where each is a prefix or an extension of the longest (text typed or erased one character at a
/// time), a value written as `"$secret:NAME:N"`: the first N characters (Unicode scalars) of NAME.
/// What is secret is ``Redaction``'s to decide; this is its memory of the secrets a recording named.
extension Redaction {
    /// The placeholder of a secret `value` coming from `source` (an input's or a member's name).
    /// The empty string is no secret. `needed`: it goes in a `send` or an `expect`.
    package mutating func placeholder(for value: String, source: String, needed: Bool = false) -> String {
        placeholders.placeholder(for: value, source: source, needed: needed)
    }

    /// The placeholder of `text` if it is a secret (or a prefix of one) seen before, of three
    /// characters or more.
    package mutating func knownPlaceholder(_ text: String, needed: Bool = false) -> String? {
        placeholders.known(text, needed: needed)
    }

    /// The name of a secret of four or more characters that `text` holds inside it, if any.
    package func secretInside(_ text: String) -> String? { placeholders.nameInside(text) }

    /// `$secret:password (6 characters, from password), …` for the secrets named that a replay
    /// needs (or those it does not), at most `limit` UTF-8 bytes (`…, and N more`).
    package func placeholderSummary(needed: Bool, limit: Int = .max) -> String {
        placeholders.summary(needed: needed, limit: limit)
    }
}

/// The secrets a ``Redaction`` named with placeholders (its storage).
package struct SecretPlaceholders: Sendable {
    package init() {}

    struct Secret: Sendable {
        var name: String
        var source: String
        var longest: [Unicode.Scalar]
        /// Used in a `send` or an `expect` (not only in the app's lines): a replay needs it.
        var needed = false
    }

    private(set) var secrets: [Secret] = []
    /// The secret each source (an input, a member) last extended.
    private var current: [String: Int] = [:]
    /// Every value seen, by its text: its placeholder and its secret.
    private var placeholders: [String: (text: String, secret: Int)] = [:]

    /// The placeholder of a secret `value` coming from `source` (an input's or a member's name).
    /// The empty string is no secret. `needed`: it goes in a `send` or an `expect`.
    mutating func placeholder(for value: String, source: String, needed: Bool = false) -> String {
        if value.isEmpty { return value }
        if let known = placeholders[value] {
            if needed { secrets[known.secret].needed = true }
            return known.text
        }
        let scalars = Array(value.unicodeScalars)
        let index: Int
        if let at = current[source], secrets[at].longest.starts(with: scalars) {
            index = at
        } else if let at = current[source], scalars.starts(with: secrets[at].longest) {
            index = at
            secrets[at].longest = scalars
        } else {
            index = secrets.count
            secrets.append(Secret(name: uniqueName(for: source), source: source, longest: scalars))
            current[source] = index
        }
        if needed { secrets[index].needed = true }
        let placeholder = "$secret:\(secrets[index].name):\(scalars.count)"
        placeholders[value] = (placeholder, index)
        return placeholder
    }

    /// The placeholder of `text` if it is a secret (or a prefix of one) seen before, of three
    /// characters or more: the first one or two characters typed are no secret of their own, and
    /// masking them wherever they appear (an id `"1"`) would only make a recording hard to read.
    mutating func known(_ text: String, needed: Bool = false) -> String? {
        guard text.unicodeScalars.count >= 3, let known = placeholders[text] else { return nil }
        if needed { secrets[known.secret].needed = true }
        return known.text
    }

    /// Whether `text` holds a secret of four or more characters inside it.
    func isInside(_ text: String) -> Bool { nameInside(text) != nil }

    /// The name of a secret of four or more characters that `text` holds inside it, if any.
    func nameInside(_ text: String) -> String? {
        secrets.first { secret in
            secret.longest.count >= 4 && text.unicodeScalars.count > secret.longest.count
                && text.contains(String(String.UnicodeScalarView(secret.longest)))
        }?.name
    }

    /// `$secret:password (6 characters, from password), …` for the secrets a replay needs (or
    /// those it does not), at most `limit` UTF-8 bytes (`…, and N more`).
    func summary(needed: Bool, limit: Int = .max) -> String {
        let items = secrets.filter { $0.needed == needed }
            .map { "$secret:\($0.name) (\($0.longest.count) characters, from \($0.source))" }
        var text = ""
        for (index, item) in items.enumerated() {
            let more = ", and \(items.count - index) more"
            if text.utf8.count + item.utf8.count + 2 + more.utf8.count > limit {
                return text + more
            }
            text += text.isEmpty ? item : ", " + item
        }
        return text
    }

    private func uniqueName(for source: String) -> String {
        var base = String(String.UnicodeScalarView(source.unicodeScalars.map { scalar in
            scalar.isASCII && (scalar.properties.isAlphabetic || scalar.properties.numericType != nil) ? scalar : "_"
        }.prefix(40)))
        if base.isEmpty { base = "secret" }
        let names = Set(secrets.map(\.name))
        if !names.contains(base) { return base }
        var number = 2
        while names.contains("\(base)_\(number)") { number += 1 }
        return "\(base)_\(number)"
    }
}
