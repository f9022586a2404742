/// The validity rules of the login form's fields, as pure functions.
public enum LoginValidation {
    /// A mobile number as people type it, made plain before it is validated or sent: full-width
    /// digits and `＋` become ASCII, spaces (also the ideographic space) and dashes (`-`, `－`, `‐`,
    /// `–`, `—`) go, and a leading `+86`, or `86` before 11 digits, is dropped:
    /// `"+86 139-1234-5678"` → `"13912345678"`. Anything else is kept, so an invalid text stays invalid.
    public static func normalizedMobileNumber(_ text: String) -> String {
        if let plain = normalizedASCIIMobileNumber(text) { return plain }
        var plain = ""
        plain.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0xFF10...0xFF19: plain.unicodeScalars.append(Unicode.Scalar(scalar.value - 0xFF10 + 0x30)!)
            case 0xFF0B: plain.unicodeScalars.append("+")
            case 0x2D, 0xFF0D, 0x2010, 0x2011, 0x2012, 0x2013, 0x2014, 0x2212: continue
            default:
                if scalar.properties.isWhitespace { continue }
                plain.unicodeScalars.append(scalar)
            }
        }
        if plain.hasPrefix("+86") { return String(plain.dropFirst(3)) }
        if plain.hasPrefix("86") && plain.utf8.count == 13 { return String(plain.dropFirst(2)) }
        return plain
    }

    /// ``normalizedMobileNumber(_:)`` of an ASCII text (what is typed on most keyboards), byte by
    /// byte: the same result without looking up Unicode properties per character; nil for a text
    /// that is not ASCII. Of ASCII, `-` and the white space (tab to carriage return, and space) go.
    private static func normalizedASCIIMobileNumber(_ text: String) -> String? {
        var text = text
        return text.withUTF8 { bytes -> String? in
            var plain = [UInt8]()
            plain.reserveCapacity(bytes.count)
            for byte in bytes {
                switch byte {
                case 0x80...: return nil
                case UInt8(ascii: "-"), 0x09...0x0D, UInt8(ascii: " "): continue
                default: plain.append(byte)
                }
            }
            var start = 0
            if plain.starts(with: "+86".utf8) {
                start = 3
            } else if plain.count == 13 && plain.starts(with: "86".utf8) {
                start = 2
            }
            return String(decoding: plain[start...], as: UTF8.self)
        }
    }

    /// A mainland mobile number: 11 ASCII digits, `1`, then `3`…`9`, then 9 more digits.
    /// Used for both the account (`username`) and the `phone` field.
    public static func isMobileNumber(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 11, bytes.allSatisfy(isASCIIDigit) else { return false }
        return bytes[0] == UInt8(ascii: "1") && (UInt8(ascii: "3")...UInt8(ascii: "9")).contains(bytes[1])
    }

    /// A password of at least ``minimumPasswordLength`` characters (user-perceived characters, so
    /// `"密码密码密码"` counts six).
    public static func isPassword(_ text: String) -> Bool {
        text.count >= minimumPasswordLength
    }

    /// An SMS code: exactly ``codeLength`` ASCII digits (full-width digits do not count).
    public static func isSMSCode(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.count == codeLength && bytes.allSatisfy(isASCIIDigit)
    }

    public static let minimumPasswordLength = 6
    public static let codeLength = 6

    private static func isASCIIDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}
