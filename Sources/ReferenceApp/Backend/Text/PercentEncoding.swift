/// Percent-encoding of URL parts (RFC 3986), on UTF-8 bytes.
public enum PercentEncoding {
    /// Which bytes stay as they are.
    public enum Part: Sendable {
        /// One path segment: unreserved characters and `!$&'()*+,;=:@`; `/`, `?`, `#`, `%` and
        /// spaces are encoded, so a segment cannot change the route.
        case pathSegment
        /// A query name or value: unreserved characters and `!$'()*,;:@/?`; `&`, `=`, `+`, `#` and
        /// `%` are encoded, so a value cannot add a parameter.
        case queryComponent

        func keeps(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"), UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "'"), UInt8(ascii: "("),
                UInt8(ascii: ")"), UInt8(ascii: "*"), UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: ":"),
                UInt8(ascii: "@"):
                true
            case UInt8(ascii: "&"), UInt8(ascii: "="), UInt8(ascii: "+"): self == .pathSegment
            case UInt8(ascii: "/"), UInt8(ascii: "?"): self == .queryComponent
            default: false
            }
        }
    }

    /// `text` with every byte that `part` does not keep written as `%XX`.
    public static func encode(_ text: String, as part: Part) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if part.keeps(byte) {
                out.append(byte)
            } else {
                out.append(contentsOf: [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `text` with every `%XX` decoded; nil when an escape is malformed or the result is not UTF-8.
    public static func decode<S: StringProtocol>(_ text: S) -> String? {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                out.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                return nil
            }
            out.append(high << 4 | low)
        }
        return String(validating: out, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
