import CJansson
#if canImport(Glibc)
import Glibc
#endif

/// Why a JSON text could not be parsed.
///
/// The message never quotes the input (which may hold a password or a token, and cannot be
/// redacted): jansson's own text is kept only up to where it would quote it.
public struct JSONParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What was wrong, without the input: "'[' or '{' expected", "premature end of input",
    /// "invalid Unicode escape (a lone or misordered surrogate)".
    public var message: String
    /// The 1-based line where parsing stopped.
    public var line: Int
    /// The 1-based column where parsing stopped.
    public var column: Int
    /// The 0-based byte offset where parsing stopped.
    public var position: Int

    /// `message at line L, column C`.
    public var description: String { "\(message) at line \(line), column \(column)" }
}

extension JSONParseError {
    /// jansson's message without the input it quotes or describes byte by byte:
    /// "premature end of input near '\"TKN…'" → "premature end of input";
    /// "invalid Unicode '\\uD800'" → "invalid Unicode escape (a lone or misordered surrogate)";
    /// "control character 0x1 in string" → "control character in string".
    static func withoutInput(_ text: String) -> String {
        var text = Substring(text)
        // "near 'x'" quotes the input; "near end of file" does not.
        if let near = text.firstRange(of: " near '") { text = text[..<near.lowerBound] }
        if text.hasPrefix("invalid Unicode") { return "invalid Unicode escape (a lone or misordered surrogate)" }
        if text.hasPrefix("invalid escape") { return "invalid escape in string" }
        if text.hasPrefix("control character") { return "control character in string" }
        if text.hasPrefix("unable to decode byte") { return "invalid UTF-8" }
        // Whatever else still quotes something from the input ('…' or 0x…) is cut there; the
        // punctuation jansson names itself ('[' or '{' expected) is one quoted character.
        var kept = ""
        var rest = text
        while let quote = rest.firstIndex(of: "'") {
            let after = rest.index(after: quote)
            guard after < rest.endIndex, let close = rest[after...].firstIndex(of: "'"),
                rest.distance(from: after, to: close) == 1, "[]{}:,".contains(rest[after])
            else { rest = rest[..<quote]; break }
            kept += rest[...close]
            rest = rest[rest.index(after: close)...]
        }
        kept += rest
        if let hex = kept.firstRange(of: " 0x") { kept = String(kept[..<hex.lowerBound]) }
        return kept.isEmpty ? "invalid JSON" : kept.trimmingSuffix(" ")
    }
}

extension String {
    fileprivate func trimmingSuffix(_ character: Character) -> String {
        var text = Substring(self)
        while text.last == character { text = text.dropLast() }
        return String(text)
    }
}

/// A message's JSON text as ``JSON/parseMessage(_:keepingArrayMembers:)`` reads it.
package enum JSONMessage: Sendable, Equatable {
    /// The text's value.
    case value(JSON)
    /// A top-level array of more members than were to be kept: how many it holds.
    case longArray(members: Int)
}

/// Why a value could not be written as JSON (a non-finite real, or a string that is not UTF-8).
package struct JSONSerializationError: Error, Sendable, CustomStringConvertible {
    /// What could not be written.
    package var description: String
}

extension JSON {
    /// Parses one JSON text with jansson.
    ///
    /// Any value is accepted at the top level; invalid UTF-8 is rejected; `\u0000` inside strings is
    /// kept; integers beyond 64 bits and nesting deeper than jansson's limit (2048) are errors.
    ///
    /// Most texts are read in Swift (``JSONReading``, the same values); the rest, and every text
    /// that is not JSON, by jansson.
    public static func parse(_ bytes: UnsafeRawBufferPointer) throws(JSONParseError) -> JSON {
        if let value = JSONReading.value(of: bytes) { return value }
        return try parseByJansson(bytes)
    }

    /// Parses one message's JSON text as ``parse(_:)`` does, but a top-level array of more than
    /// `limit` members comes back as its number of members, not as a value: the text is read
    /// through, so that a text which is not JSON throws as it would, but the members past the
    /// bound are checked without being built (no tree, no strings). A text read by jansson comes
    /// back whole.
    package static func parseMessage(
        _ bytes: UnsafeRawBufferPointer, keepingArrayMembers limit: Int
    ) throws(JSONParseError) -> JSONMessage {
        if let message = JSONReading.message(of: bytes, keepingArrayMembers: limit) { return message }
        return .value(try parseByJansson(bytes))
    }

    /// ``parse(_:)`` by jansson alone.
    package static func parseByJansson(_ bytes: UnsafeRawBufferPointer) throws(JSONParseError) -> JSON {
        var error = json_error_t()
        guard let base = bytes.baseAddress,
            let root = json_loadb(
                base.assumingMemoryBound(to: CChar.self), bytes.count,
                Int(JSON_DECODE_ANY | JSON_ALLOW_NUL), &error)
        else {
            if bytes.isEmpty { throw JSONParseError(message: "empty input", line: 1, column: 0, position: 0) }
            throw JSONParseError(
                message: JSONParseError.withoutInput(
                    withUnsafeBytes(of: &error.text) { String(cString: $0.baseAddress!.assumingMemoryBound(to: CChar.self)) }),
                line: Int(error.line), column: Int(error.column), position: Int(error.position))
        }
        defer { vmhost_json_decref(root) }
        return JSON(borrowing: root)
    }

    /// Parses one JSON text; throws ``JSONParseError``.
    public static func parse(_ bytes: [UInt8]) throws -> JSON {
        try bytes.withUnsafeBytes { buffer in try parse(buffer) }
    }

    /// Parses one JSON text; throws ``JSONParseError``.
    public static func parse(_ text: String) throws -> JSON {
        var text = text
        return try text.withUTF8 { buffer in try parse(UnsafeRawBufferPointer(buffer)) }
    }

    /// Builds a Swift value from a jansson value without taking ownership of it.
    init(borrowing node: UnsafeMutablePointer<json_t>) {
        switch vmhost_json_typeof(node) {
        case JSON_OBJECT:
            var object = JSONObject()
            object.reserveCapacity(json_object_size(node))
            var iter = json_object_iter(node)
            while let current = iter {
                let key = json_object_iter_key(current)!
                let keyLength = json_object_iter_key_len(current)
                let keyString = String(
                    decoding: UnsafeRawBufferPointer(start: key, count: keyLength), as: UTF8.self)
                object.append(keyString, JSON(borrowing: json_object_iter_value(current)!))
                iter = json_object_iter_next(node, current)
            }
            self = .object(object)
        case JSON_ARRAY:
            let count = json_array_size(node)
            var array: [JSON] = []
            array.reserveCapacity(count)
            for index in 0..<count { array.append(JSON(borrowing: json_array_get(node, index)!)) }
            self = .array(array)
        case JSON_STRING:
            self = .string(
                String(
                    decoding: UnsafeRawBufferPointer(start: json_string_value(node), count: json_string_length(node)),
                    as: UTF8.self))
        case JSON_INTEGER: self = .int(Int64(json_integer_value(node)))
        case JSON_REAL: self = .double(json_real_value(node))
        case JSON_TRUE: self = .bool(true)
        case JSON_FALSE: self = .bool(false)
        default: self = .null
        }
    }

    /// A new jansson value (reference count 1) equal to this one; nil when it cannot be represented.
    func makeJansson() -> UnsafeMutablePointer<json_t>? {
        switch self {
        case .null: return json_null()
        case .bool(let b): return b ? json_true() : json_false()
        case .int(let i): return json_integer(json_int_t(i))
        case .double(let d): return json_real(d)  // nil for NaN and infinities
        case .string(var s):
            return s.withUTF8 { utf8 in
                json_stringn_nocheck(cString(utf8.baseAddress), utf8.count)
            }
        case .array(let elements):
            guard let array = json_array() else { return nil }
            for element in elements {
                guard let child = element.makeJansson(), json_array_append_new(array, child) == 0 else {
                    vmhost_json_decref(array)
                    return nil
                }
            }
            return array
        case .object(let object):
            guard let result = json_object() else { return nil }
            for member in object.members {
                guard let child = member.value.makeJansson() else {
                    vmhost_json_decref(result)
                    return nil
                }
                var key = member.key
                let status = key.withUTF8 { utf8 in
                    json_object_setn_new_nocheck(
                        result, cString(utf8.baseAddress), utf8.count, child)
                }
                if status != 0 {
                    vmhost_json_decref(result)
                    return nil
                }
            }
            return result
        }
    }

    /// The compact JSON text of this value, written by jansson, with object members in order.
    ///
    /// A non-finite real cannot be written as JSON and is written as `null`; use
    /// ``serializedOrThrow()`` to be told instead.
    public func serialized() -> [UInt8] {
        (try? serializedOrThrow()) ?? Array("null".utf8)
    }

    /// The compact JSON text of this value, or an error if it holds a non-finite real.
    package func serializedOrThrow() throws(JSONSerializationError) -> [UInt8] {
        var out: [UInt8] = []
        try append(to: &out)
        return out
    }

    /// Appends the compact JSON text of this value to `out`; a value that cannot be written (it
    /// holds NaN or an infinity) is written as `null`.
    package func appendSerialized(to out: inout [UInt8]) {
        do throws(JSONSerializationError) {
            try append(to: &out)
        } catch {
            out.append(contentsOf: "null".utf8)
        }
    }

    /// Appends the compact JSON text of this value to `out`; on error `out` is left as it was.
    ///
    /// Written in Swift when it holds no real and no repeated key (``appendWithoutJansson(to:)``,
    /// the same bytes), else by jansson.
    package func append(to out: inout [UInt8]) throws(JSONSerializationError) {
        let mark = out.count
        if appendWithoutJansson(to: &out) { return }
        out.removeSubrange(mark...)
        try appendByJansson(to: &out)
    }

    /// ``append(to:)`` by jansson alone: a jansson tree of the value, dumped.
    package func appendByJansson(to out: inout [UInt8]) throws(JSONSerializationError) {
        guard let node = makeJansson() else {
            throw JSONSerializationError(description: "value holds a number that JSON cannot represent (NaN or infinity)")
        }
        defer { vmhost_json_decref(node) }
        // Reals are written with the fewest digits that read back exactly: 15 when every real of
        // the value round-trips at 15 (4.35 stays "4.35"), else 17 (always exact).
        let flags = dumpFlags | Int(realPrecisionFlag(shortest: allRealsRoundTripAt15))
        // jansson writes into a buffer on the stack, copied to `out` in one piece; a longer text
        // is written a second time, straight into room of its exact size in `out`.
        let size = withUnsafeTemporaryAllocation(of: CChar.self, capacity: stackDumpCapacity) { scratch in
            let size = json_dumpb(node, scratch.baseAddress, scratch.count, flags)
            if size > 0 && size <= scratch.count {
                out.append(contentsOf: UnsafeRawBufferPointer(start: scratch.baseAddress, count: size))
            }
            return size
        }
        if size == 0 { throw JSONSerializationError(description: "jansson could not write the value") }
        if size > stackDumpCapacity {
            let start = out.count
            out.append(contentsOf: repeatElement(0, count: size))
            let written = out.withUnsafeMutableBytes { raw in
                json_dumpb(node, (raw.baseAddress! + start).assumingMemoryBound(to: CChar.self), size, flags)
            }
            if written != size {
                out.removeSubrange(start...)
                throw JSONSerializationError(description: "jansson could not write the value")
            }
        }
    }
}

private let dumpFlags = Int(JSON_COMPACT | JSON_ENCODE_ANY | JSON_PRESERVE_ORDER)

/// `JSON_REAL_PRECISION(15)` or `(17)` (the macro is not visible to Swift).
private func realPrecisionFlag(shortest: Bool) -> Int32 {
    (shortest ? 15 : 17) << 11
}

extension JSON {
    /// True when every real in this value reads back exactly from 15 significant digits.
    var allRealsRoundTripAt15: Bool {
        switch self {
        case .double(let d): return roundTripsAt15(d)
        case .array(let elements): return elements.allSatisfy(\.allRealsRoundTripAt15)
        case .object(let object): return object.members.allSatisfy(\.value.allRealsRoundTripAt15)
        default: return true
        }
    }
}

private func roundTripsAt15(_ value: Double) -> Bool {
    guard value.isFinite else { return true }
    var buffer = [CChar](repeating: 0, count: 40)
    _ = withVaList([value]) { vsnprintf(&buffer, buffer.count, "%.15g", $0) }
    return strtod(buffer, nil) == value
}

/// Texts up to this size are written by jansson into a buffer on the stack; most messages fit.
/// (A temporary allocation of at most 1 KiB is always on the stack; a larger one may be on the heap.)
private let stackDumpCapacity = 1024

private nonisolated(unsafe) let emptyCString: UnsafePointer<CChar> = UnsafePointer(strdup("")!)

private func cString(_ base: UnsafePointer<UInt8>?) -> UnsafePointer<CChar> {
    guard let base else { return emptyCString }
    return UnsafeRawPointer(base).assumingMemoryBound(to: CChar.self)
}
