/// Writing compact JSON text in Swift, the same bytes jansson writes, for the values that need no
/// jansson tree: a message's id, `{}`, strings, integers, booleans, and arrays and objects of them.
///
/// Building a jansson tree for a value and dumping it cost more than the rest of a `ping`'s reply;
/// written here, a value costs a walk and a copy of its bytes. The text is byte for byte what
/// jansson writes with `JSON_COMPACT | JSON_PRESERVE_ORDER` (tested against it in WireTests):
/// strings are escaped as jansson escapes them (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, other
/// control characters as `\u00XX` in upper-case hex; `/` and non-ASCII as they are), integers in
/// decimal. Reals (whose digits jansson chooses with `printf`) and objects holding a key twice
/// (jansson keeps the first position and the last value) are left to jansson: the caller falls
/// back to it when this answers false.
extension JSON {
    /// Appends this value's compact text to `out` and returns true, or returns false, with `out`
    /// holding some of the text, when the value holds a real or an object with a repeated key.
    func appendWithoutJansson(to out: inout [UInt8]) -> Bool {
        switch self {
        case .null:
            out.append(contentsOf: "null".utf8)
        case .bool(let value):
            out.append(contentsOf: value ? "true".utf8 : "false".utf8)
        case .int(let value):
            Self.appendDecimal(value, to: &out)
        case .double:
            return false
        case .string(let value):
            Self.appendQuoted(value, to: &out)
        // By index, not `for element in`: each element is read in place, not copied out (a copy
        // retains and releases what it holds).
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for index in elements.indices {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                guard elements[index].appendWithoutJansson(to: &out) else { return false }
            }
            out.append(UInt8(ascii: "]"))
        case .object(let object):
            guard object.keysDiffer else { return false }
            out.append(UInt8(ascii: "{"))
            let members = object.members
            for index in members.indices {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                Self.appendQuoted(members[index].key, to: &out)
                out.append(UInt8(ascii: ":"))
                guard members[index].value.appendWithoutJansson(to: &out) else { return false }
            }
            out.append(UInt8(ascii: "}"))
        }
        return true
    }

    /// `value` in decimal, as `printf("%lld")` writes it.
    static func appendDecimal(_ value: Int64, to out: inout [UInt8]) {
        if value >= 0 && value < 10 {
            out.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: value))
            return
        }
        // 20 bytes hold Int64.min's digits and sign.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var magnitude = value.magnitude
            var start = 20
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: magnitude % 10)
                magnitude /= 10
            } while magnitude != 0
            if value < 0 {
                start -= 1
                digits[start] = UInt8(ascii: "-")
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start..<20]))
        }
    }

    /// `text` as a JSON string, escaped as jansson escapes it.
    static func appendQuoted(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Most strings need no escape: found eight bytes at a time and copied whole, from the
        // string's own storage (a list's cells are hundreds of short strings per page).
        let plain = text.utf8.withContiguousStorageIfAvailable { utf8 in
            guard !needsEscape(utf8) else { return false }
            out.append(contentsOf: utf8)
            return true
        }
        if plain != true { appendEscaped(text, to: &out) }
        out.append(UInt8(ascii: "\""))
    }

    /// Whether `bytes` hold a byte that a JSON string escapes: a control character, `"` or `\`.
    static func needsEscape(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return false }
        let count = bytes.count
        var index = 0
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        while index + 8 <= count {
            let word = UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)
            // A byte is below 0x20 when subtracting 0x20 borrows into its high bit and that bit
            // was clear; a byte equals c when word ^ c has a zero byte. No false negatives.
            let control = (word &- ones &* 0x20) & ~word & highs
            let quote = word ^ (ones &* 0x22)
            let backslash = word ^ (ones &* 0x5C)
            let equal = ((quote &- ones) & ~quote | (backslash &- ones) & ~backslash) & highs
            if control | equal != 0 { return true }
            index += 8
        }
        while index < count {
            let byte = base[index]
            if byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { return true }
            index += 1
        }
        return false
    }

    /// `text`'s bytes, escaped as jansson escapes them (without the quotes).
    private static func appendEscaped(_ text: String, to out: inout [UInt8]) {
        var text = text
        text.withUTF8 { utf8 in
            var plainStart = 0
            for index in utf8.indices {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                if plainStart < index { out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[plainStart..<index])) }
                plainStart = index + 1
                out.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""): out.append(UInt8(ascii: "\""))
                case UInt8(ascii: "\\"): out.append(UInt8(ascii: "\\"))
                case 0x08: out.append(UInt8(ascii: "b"))
                case 0x0C: out.append(UInt8(ascii: "f"))
                case 0x0A: out.append(UInt8(ascii: "n"))
                case 0x0D: out.append(UInt8(ascii: "r"))
                case 0x09: out.append(UInt8(ascii: "t"))
                default:
                    let hex: StaticString = "0123456789ABCDEF"
                    out.append(contentsOf: "u00".utf8)
                    out.append(hex.utf8Start[Int(byte >> 4)])
                    out.append(hex.utf8Start[Int(byte & 0xF)])
                }
            }
            if plainStart < utf8.count { out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[plainStart...])) }
        }
    }
}

extension JSONObject {
    /// Whether no key is held twice (each member of the text is then one member of the object).
    var keysDiffer: Bool {
        let count = members.count
        if count < 2 { return true }
        if count <= 16 {
            // Lengths first: most keys of an object differ in length, and a length is read, not
            // compared byte by byte.
            for i in 1..<count {
                let key = members[i].key
                let length = key.utf8.count
                for j in 0..<i where members[j].key.utf8.count == length && members[j].key == key { return false }
            }
            return true
        }
        var seen = Set<String>(minimumCapacity: count)
        for member in members where !seen.insert(member.key).inserted { return false }
        return true
    }
}
