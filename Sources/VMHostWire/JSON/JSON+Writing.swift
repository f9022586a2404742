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
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            var first = true
            for element in elements {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                guard element.appendWithoutJansson(to: &out) else { return false }
            }
            out.append(UInt8(ascii: "]"))
        case .object(let object):
            guard object.keysDiffer else { return false }
            out.append(UInt8(ascii: "{"))
            var first = true
            for member in object.members {
                if !first { out.append(UInt8(ascii: ",")) }
                first = false
                Self.appendQuoted(member.key, to: &out)
                out.append(UInt8(ascii: ":"))
                guard member.value.appendWithoutJansson(to: &out) else { return false }
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
        out.append(UInt8(ascii: "\""))
    }
}

extension JSONObject {
    /// Whether no key is held twice (each member of the text is then one member of the object).
    var keysDiffer: Bool {
        let count = members.count
        if count < 2 { return true }
        if count <= 16 {
            for i in 1..<count {
                for j in 0..<i where members[i].key == members[j].key { return false }
            }
            return true
        }
        var seen = Set<String>(minimumCapacity: count)
        for member in members where !seen.insert(member.key).inserted { return false }
        return true
    }
}
