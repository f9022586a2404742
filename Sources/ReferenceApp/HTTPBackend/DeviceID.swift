/// A random (version 4) UUID in its upper-case text form, `8-4-4-4-12` hexadecimal digits.
public enum DeviceID {
    public static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        var bytes = (0..<16).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        bytes[6] = bytes[6] & 0x0F | 0x40
        bytes[8] = bytes[8] & 0x3F | 0x80
        let hex = Array("0123456789ABCDEF".utf8)
        var text: [UInt8] = []
        for (index, byte) in bytes.enumerated() {
            if [4, 6, 8, 10].contains(index) { text.append(UInt8(ascii: "-")) }
            text.append(hex[Int(byte >> 4)])
            text.append(hex[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Whether `text` is a UUID in text form (`8-4-4-4-12` hexadecimal digits, either case): what a
    /// stored device id must be to be sent again.
    public static func isValid(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 36 else { return false }
        for (index, byte) in bytes.enumerated() {
            if [8, 13, 18, 23].contains(index) {
                guard byte == UInt8(ascii: "-") else { return false }
            } else {
                let isDigit = (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                guard isDigit || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte | 0x20) else { return false }
            }
        }
        return true
    }
}
