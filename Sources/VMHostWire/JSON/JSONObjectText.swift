/// The text of a JSON object written member by member: the keys as given, the values by jansson.
///
/// For messages of a fixed shape (responses, notifications), this is much cheaper than building the
/// whole message as a jansson tree: only the values become jansson values. The result is the same
/// compact text ``JSON/serialized()`` would write.
///
/// ```swift
/// var text = JSONObjectText.jsonRPC()   // {"jsonrpc":"2.0"
/// text.append("id", id)
/// try text.appendOrThrow("result", result)
/// let body = text.finish()   // {"jsonrpc":"2.0","id":1,"result":{}}
/// ```
package struct JSONObjectText {
    private var bytes: [UInt8]
    /// Where this object's `{` is in `bytes` (after the text of the objects it is nested in).
    private var start = 0

    /// An empty object's text, room made for `capacity` bytes.
    package init(capacity: Int = 128) {
        bytes = []
        bytes.reserveCapacity(capacity)
        bytes.append(UInt8(ascii: "{"))
    }

    /// An object written after `text`, in the same bytes.
    private init(after text: [UInt8]) {
        bytes = text
        start = text.count
        bytes.append(UInt8(ascii: "{"))
    }

    /// A JSON-RPC message's text, its first member (`"jsonrpc":"2.0"`) written, in one copy.
    package static func jsonRPC(capacity: Int = 128) -> JSONObjectText {
        var text = JSONObjectText(capacity: capacity)
        StaticString(#""jsonrpc":"2.0""#).withUTF8Buffer { text.bytes.append(contentsOf: $0) }
        return text
    }

    /// Appends a member; a value that cannot be written (NaN, an infinity) is written as `null`.
    /// `key` must be a plain name that needs no escaping.
    package mutating func append(_ key: StaticString, _ value: JSON) {
        appendKey(key)
        value.appendSerialized(to: &bytes)
    }

    /// Appends a member whose value is constant JSON text, written as given: `#""2.0""#`.
    package mutating func append(_ key: StaticString, literal: StaticString) {
        appendKey(key)
        literal.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// Appends a member whose value is already JSON text (a nested object written the same way).
    package mutating func append(_ key: StaticString, text: [UInt8]) {
        appendKey(key)
        bytes.append(contentsOf: text)
    }

    /// Appends a member whose value is an object `body` writes, in the same bytes (no second text
    /// made and copied in).
    package mutating func append(_ key: StaticString, object body: (inout JSONObjectText) -> Void) {
        appendKey(key)
        var nested = JSONObjectText(after: bytes)
        bytes = []
        body(&nested)
        bytes = nested.finish()
    }

    /// Appends a member, or throws, leaving the text as it was, if the value cannot be written.
    package mutating func appendOrThrow(_ key: StaticString, _ value: JSON) throws(JSONSerializationError) {
        let mark = bytes.count
        appendKey(key)
        do {
            try value.append(to: &bytes)
        } catch {
            bytes.removeSubrange(mark...)
            throw error
        }
    }

    /// The text, closed.
    package consuming func finish() -> [UInt8] {
        bytes.append(UInt8(ascii: "}"))
        return bytes
    }

    private mutating func appendKey(_ key: StaticString) {
        if bytes.count > start + 1 { bytes.append(UInt8(ascii: ",")) }
        bytes.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { name in
            assert(name.allSatisfy { $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") },
                   "JSONObjectText keys must need no escaping")
            bytes.append(contentsOf: name)
        }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }
}
