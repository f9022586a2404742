/// The validity rules of the login form's fields, as pure functions.
public enum LoginValidation {
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
