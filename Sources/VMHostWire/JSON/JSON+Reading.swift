/// Reading the JSON texts a client sends straight into ``JSON``, the same values jansson reads.
///
/// Parsing with jansson builds a jansson tree (an allocation and a hash table per object) and
/// then a second tree of Swift values from it, freeing the first: for a `ping` that is half of
/// the instructions of its reply. This reads the text once, into Swift values.
///
/// It answers only for texts jansson reads (with `JSON_DECODE_ANY | JSON_ALLOW_NUL`) and only
/// with the value jansson reads; anything else answers nil and the caller asks jansson, which
/// reads it or says why not, in its own words: a text that is not JSON, an integer beyond 64 bits
/// or a real beyond `Double` (both errors to jansson), an object holding a key twice (jansson
/// keeps the first position and the last value) or more than 32 members, a key holding `\u0000`,
/// nesting deeper than 512, invalid UTF-8. A real is read as jansson reads it, correctly rounded
/// (`strtod` there, `Double(_:)` here). Tested against jansson in WireTests.
///
/// A message's top-level array may be read without keeping its members past a bound
/// (``message(of:keepingArrayMembers:)``): a batch of more members than it may hold is refused
/// whatever its members are, so they are only checked, which costs a pass over the bytes and no
/// tree (a flood of the largest batches a client may send holds a worker's thread that much less).
struct JSONReading {
    private let bytes: UnsafePointer<UInt8>
    private let count: Int
    private var position = 0
    private var depth = 0
    /// Whether the last string read held `\u0000` (the only way for it to hold NUL).
    private var stringHeldNUL = false
    /// The members of the top-level array kept; past them the rest of the text is only checked.
    private let keptArrayMembers: Int
    /// False once the top-level array holds more than `keptArrayMembers` members: from there on
    /// values are checked as before but not built (a string is not made, an array not filled).
    private var building = true
    /// How many members the top-level array holds, when they were not all kept.
    private var longArrayMembers: Int?

    private init(_ bytes: UnsafePointer<UInt8>, count: Int, keptArrayMembers: Int) {
        self.bytes = bytes
        self.count = count
        self.keptArrayMembers = keptArrayMembers
    }

    /// The value of `text`, or nil when it is to be left to jansson (see the type's discussion).
    static func value(of text: UnsafeRawBufferPointer) -> JSON? {
        guard case .value(let value)? = message(of: text, keepingArrayMembers: .max) else { return nil }
        return value
    }

    /// The value of `text`, or, for a top-level array of more than `limit` members, their number
    /// (every member read and checked, none kept); nil when it is to be left to jansson.
    static func message(of text: UnsafeRawBufferPointer, keepingArrayMembers limit: Int) -> JSONMessage? {
        guard let base = text.baseAddress, text.count > 0 else { return nil }
        var reader = JSONReading(base.assumingMemoryBound(to: UInt8.self), count: text.count, keptArrayMembers: max(limit, 0))
        reader.skipWhiteSpace()
        guard let value = reader.value() else { return nil }
        reader.skipWhiteSpace()
        guard reader.position == reader.count else { return nil }
        if let members = reader.longArrayMembers { return .longArray(members: members) }
        return .value(value)
    }

    /// The words every message of the protocol holds (the envelope's keys, its version, the
    /// params of `vm.send`), as constant strings: making a string of the bytes checks them again
    /// and copies them, some 150 instructions a string and five strings a `ping`.
    private static func protocolWord(_ text: UnsafeBufferPointer<UInt8>) -> String? {
        switch text.count {
        case 2:
            if matches(text, "id") { return "id" }
            if matches(text, "vm") { return "vm" }
        case 3:
            if matches(text, "2.0") { return "2.0" }
        case 5:
            if matches(text, "input") { return "input" }
            if matches(text, "value") { return "value" }
        case 6:
            if matches(text, "method") { return "method" }
            if matches(text, "params") { return "params" }
        case 7:
            if matches(text, "jsonrpc") { return "jsonrpc" }
            if matches(text, "vm.send") { return "vm.send" }
        default:
            break
        }
        return nil
    }

    /// Whether `text` holds the bytes of `word` (of the same length).
    private static func matches(_ text: UnsafeBufferPointer<UInt8>, _ word: StaticString) -> Bool {
        let letters = word.utf8Start
        for index in 0..<text.count where text[index] != letters[index] { return false }
        return true
    }

    private static let maxDepth = 512
    private static let maxObjectMembers = 32

    private var current: UInt8? { position < count ? bytes[position] : nil }

    private mutating func skipWhiteSpace() {
        while position < count {
            switch bytes[position] {
            case UInt8(ascii: " "), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "\t"): position += 1
            default: return
            }
        }
    }

    private mutating func value() -> JSON? {
        guard let byte = current else { return nil }
        switch byte {
        case UInt8(ascii: "{"): return object()
        case UInt8(ascii: "["): return array()
        case UInt8(ascii: "\""): return string(keeping: building).map { .string($0) }
        case UInt8(ascii: "t"): return literal("true", .bool(true))
        case UInt8(ascii: "f"): return literal("false", .bool(false))
        case UInt8(ascii: "n"): return literal("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number()
        default: return nil
        }
    }

    private mutating func literal(_ word: StaticString, _ value: JSON) -> JSON? {
        let length = word.utf8CodeUnitCount
        guard count - position >= length else { return nil }
        for index in 0..<length where bytes[position + index] != word.utf8Start[index] { return nil }
        position += length
        // "truex" is one bad token to jansson.
        if let next = current, Self.isLetterOrDigit(next) { return nil }
        return value
    }

    private static func isLetterOrDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: false
        }
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
    }

    /// A number as jansson's lexer reads one, `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`:
    /// without a fraction or an exponent an integer, which must fit 64 bits; else a real, which
    /// must be finite (jansson refuses an overflow; an underflow is the value `strtod` rounds it
    /// to, as here). Nil for anything else: a leading zero, a bare sign or point, an overflow.
    private mutating func number() -> JSON? {
        let start = position
        switch numberToken() {
        case .integer(let value)?: return .int(value)
        case .real(let mayOverflow)?:
            // A real that is only checked needs no value, unless it might overflow.
            if !building && !mayOverflow { return .null }
            return real(from: start).map { .double($0) }
        case nil: return nil
        }
    }

    /// ``number()`` checked only: whether a number is there (its value made only for a real that
    /// might overflow).
    private mutating func checkNumber() -> Bool {
        let start = position
        switch numberToken() {
        case .integer?: return true
        case .real(let mayOverflow)?: return !mayOverflow || real(from: start) != nil
        case nil: return false
        }
    }

    /// A number's token, read past: an integer's value, or that it is a real.
    private enum NumberToken {
        case integer(Int64)
        /// A real; it might overflow Double when its magnitude may reach 10^300.
        case real(mayOverflow: Bool)
    }

    /// Reads a number's grammar (see ``number()``); nil for a text that is not one, or an
    /// integer beyond 64 bits. Always inlined: called as a function, it cost a message of two
    /// million integers a third more (vmhost-bench --floods).
    @inline(__always)
    private mutating func numberToken() -> NumberToken? {
        var negative = false
        if bytes[position] == UInt8(ascii: "-") {
            negative = true
            position += 1
        }
        guard position < count, Self.isDigit(bytes[position]) else { return nil }
        var magnitude: UInt64 = 0
        var fits = true
        // Digits of the integer part, but for a lone 0: a real is below 10^(integerDigits + exponent).
        var integerDigits = 0
        if bytes[position] == UInt8(ascii: "0") {
            position += 1
        } else {
            while position < count, Self.isDigit(bytes[position]) {
                if fits {
                    let (times10, overflow1) = magnitude.multipliedReportingOverflow(by: 10)
                    let (sum, overflow2) = times10.addingReportingOverflow(UInt64(bytes[position] - UInt8(ascii: "0")))
                    if overflow1 || overflow2 { fits = false } else { magnitude = sum }
                }
                integerDigits += 1
                position += 1
            }
        }
        let next = current
        if next != UInt8(ascii: "."), next != UInt8(ascii: "e"), next != UInt8(ascii: "E") {
            // "01": one bad token to jansson.
            if let next, Self.isDigit(next) { return nil }
            guard fits else { return nil }
            if negative {
                guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
                return .integer(magnitude == UInt64(Int64.max) + 1 ? .min : -Int64(magnitude))
            }
            guard magnitude <= UInt64(Int64.max) else { return nil }
            return .integer(Int64(magnitude))
        }
        if next == UInt8(ascii: ".") {
            position += 1
            guard let digit = current, Self.isDigit(digit) else { return nil }
            while let digit = current, Self.isDigit(digit) { position += 1 }
        }
        var exponent = 0
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            position += 1
            var negativeExponent = false
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") {
                negativeExponent = current == UInt8(ascii: "-")
                position += 1
            }
            guard let digit = current, Self.isDigit(digit) else { return nil }
            while let digit = current, Self.isDigit(digit) {
                // Past a million the exponent's exact value no longer matters (it is capped, never overflows).
                if exponent < 1_000_000 { exponent = exponent * 10 + Int(digit - UInt8(ascii: "0")) }
                position += 1
            }
            if negativeExponent { exponent = -exponent }
        }
        return .real(mayOverflow: integerDigits + exponent > 300)
    }

    /// The value of the real just read from `start`, nil when it overflows Double.
    private func real(from start: Int) -> Double? {
        // Up to 15 bytes the text is a small string, made without an allocation.
        let text = String(decoding: UnsafeBufferPointer(start: bytes + start, count: position - start), as: UTF8.self)
        guard let value = Double(text), value.isFinite else { return nil }
        return value
    }

    /// A string from its opening quote; nil for a control character, a bad escape, a lone
    /// surrogate or invalid UTF-8. Not `keeping` it, a string of ASCII without escapes is checked
    /// only, and read as "".
    private mutating func string(keeping: Bool = true) -> String? {
        stringHeldNUL = false
        position += 1
        let start = position
        var ascii = true
        // The common case: no escape, up to the closing quote.
        while position < count {
            let byte = bytes[position]
            if byte == UInt8(ascii: "\"") {
                let text = UnsafeBufferPointer(start: bytes + start, count: position - start)
                position += 1
                if ascii { return keeping ? Self.protocolWord(text) ?? String(decoding: text, as: UTF8.self) : "" }
                return String(validating: text, as: UTF8.self)
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { return nil }
            if byte >= 0x80 { ascii = false }
            position += 1
        }
        guard position < count else { return nil }
        // With escapes: the bytes, unescaped, then checked as UTF-8 once.
        var text = [UInt8](UnsafeBufferPointer(start: bytes + start, count: position - start))
        while position < count {
            let byte = bytes[position]
            position += 1
            switch byte {
            case UInt8(ascii: "\""):
                return String(validating: text, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard let escaped = current else { return nil }
                position += 1
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): text.append(escaped)
                case UInt8(ascii: "b"): text.append(0x08)
                case UInt8(ascii: "f"): text.append(0x0C)
                case UInt8(ascii: "n"): text.append(0x0A)
                case UInt8(ascii: "r"): text.append(0x0D)
                case UInt8(ascii: "t"): text.append(0x09)
                case UInt8(ascii: "u"):
                    guard var scalar = hex4() else { return nil }
                    if scalar >= 0xD800 && scalar <= 0xDBFF {
                        // A high surrogate must be followed by an escaped low one.
                        guard count - position >= 2, bytes[position] == UInt8(ascii: "\\"),
                              bytes[position + 1] == UInt8(ascii: "u") else { return nil }
                        position += 2
                        guard let low = hex4(), low >= 0xDC00 && low <= 0xDFFF else { return nil }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if scalar >= 0xDC00 && scalar <= 0xDFFF {
                        return nil
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { return nil }
                    if scalar == 0 { stringHeldNUL = true }
                    text.append(contentsOf: UTF8.encode(unicode)!)
                default:
                    return nil
                }
            default:
                if byte < 0x20 { return nil }
                text.append(byte)
            }
        }
        return nil
    }

    private mutating func hex4() -> UInt32? {
        guard count - position >= 4 else { return nil }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: return nil
            }
            value = value << 4 | UInt32(digit)
            position += 1
        }
        return value
    }

    private mutating func array() -> JSON? {
        depth += 1
        guard depth <= Self.maxDepth else { return nil }
        defer { depth -= 1 }
        position += 1
        skipWhiteSpace()
        let topLevel = depth == 1
        var elements: [JSON] = []
        if current == UInt8(ascii: "]") {
            position += 1
            return .array(elements)
        }
        var members = 0
        while true {
            guard let element = value() else { return nil }
            members += 1
            if building {
                if topLevel && members > keptArrayMembers {
                    // From here on the text is only checked, and the members are counted.
                    building = false
                    elements = []
                    guard let total = countMembers(after: members) else { return nil }
                    longArrayMembers = total
                    return .array([])
                }
                elements.append(element)
            }
            skipWhiteSpace()
            switch current {
            case UInt8(ascii: ","):
                position += 1
                skipWhiteSpace()
            case UInt8(ascii: "]"):
                position += 1
                return .array(elements)
            default:
                return nil
            }
        }
    }

    /// The rest of the top-level array whose members are no longer kept, from just past its
    /// member number `members`: every further member checked and counted, up to the closing
    /// bracket; nil where ``array()`` would answer nil. A number, a flood's usual member, is
    /// checked in place, without a value.
    private mutating func countMembers(after members: Int) -> Int? {
        var members = members
        while true {
            skipWhiteSpace()
            guard position < count else { return nil }
            switch bytes[position] {
            case UInt8(ascii: ","): position += 1
            case UInt8(ascii: "]"):
                position += 1
                return members
            default: return nil
            }
            skipWhiteSpace()
            guard position < count else { return nil }
            let byte = bytes[position]
            if byte == UInt8(ascii: "-") || Self.isDigit(byte) {
                guard checkNumber() else { return nil }
            } else {
                guard value() != nil else { return nil }
            }
            members += 1
        }
    }

    private mutating func object() -> JSON? {
        depth += 1
        guard depth <= Self.maxDepth else { return nil }
        defer { depth -= 1 }
        position += 1
        skipWhiteSpace()
        var object = JSONObject()
        if current == UInt8(ascii: "}") {
            position += 1
            return .object(object)
        }
        // Room for a message's members at once, instead of growing 1, 2, 4.
        object.reserveCapacity(4)
        while true {
            guard current == UInt8(ascii: "\""), let key = string() else { return nil }
            // jansson refuses a key holding NUL; a key held twice is its to resolve.
            guard object.count < Self.maxObjectMembers, !stringHeldNUL else { return nil }
            for member in object.members where member.key == key { return nil }
            skipWhiteSpace()
            guard current == UInt8(ascii: ":") else { return nil }
            position += 1
            skipWhiteSpace()
            guard let value = value() else { return nil }
            object.append(key, value)
            skipWhiteSpace()
            switch current {
            case UInt8(ascii: ","):
                position += 1
                skipWhiteSpace()
            case UInt8(ascii: "}"):
                position += 1
                return .object(object)
            default:
                return nil
            }
        }
    }
}
