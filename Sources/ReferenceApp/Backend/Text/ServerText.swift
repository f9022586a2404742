/// What a server's own text (an envelope's `message`) may put on a screen, and how a developer's
/// detail quotes it.
///
/// A server is outside the app: its message may be a megabyte long, or hold control characters
/// (an escape sequence that repaints a terminal, a line break that spoofs a second line, a bidi
/// override that reverses the text around it). A screen gets ``shown(_:limit:)``: no control
/// characters, white space as single spaces, at most ``shownLimit`` characters. The detail gets
/// ``quoted(_:limit:)``: the text as sent, escaped and bounded.
public enum ServerText {
    /// The most characters of a server's message a screen shows; a longer one ends with "…".
    public static let shownLimit = 200
    /// The most characters of a server's message a detail quotes.
    public static let quotedLimit = 1000

    /// `text` for a screen: control characters (C0, DEL, C1) and bidi controls are dropped, every
    /// run of white space (line breaks and tabs included) becomes one space, the ends are trimmed,
    /// and a text over `limit` characters is cut to `limit - 1` and ends with "…". Reads no more of
    /// `text` than it needs.
    public static func shown(_ text: String, limit: Int = shownLimit) -> String {
        var kept = String.UnicodeScalarView()
        var pendingSpace = false
        var cut = false
        // Characters are made of one or more scalars: reading a few past the limit is enough to
        // know whether the text is longer.
        let scalarBound = limit * 4 + 8
        var count = 0
        for scalar in text.unicodeScalars {
            if scalar.properties.isWhitespace {
                pendingSpace = !kept.isEmpty
                continue
            }
            if isControl(scalar) { continue }
            if pendingSpace {
                kept.append(" ")
                pendingSpace = false
            }
            kept.append(scalar)
            count += 1
            if count >= scalarBound {
                cut = true
                break
            }
        }
        let cleaned = String(kept)
        guard cut || cleaned.count > limit else { return cleaned }
        return String(cleaned.prefix(max(0, limit - 1))) + "…"
    }

    /// `text` for a developer's detail, in double quotes: backslash, quote and every control
    /// character escaped (`\u{1B}`), at most `limit` characters of it, then `…` and its length in
    /// bytes when it was longer.
    public static func quoted(_ text: String, limit: Int = quotedLimit) -> String {
        var result = "\""
        var count = 0
        for scalar in text.unicodeScalars {
            guard count < limit else {
                return result + "\"… (\(text.utf8.count) bytes in all)"
            }
            count += 1
            switch scalar {
            case "\\": result += "\\\\"
            case "\"": result += "\\\""
            case _ where isControl(scalar) || scalar.properties.isWhitespace && scalar != " ":
                result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }

    /// C0 and C1 controls, DEL, and the bidi controls (embeddings, overrides, isolates, marks).
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: true
        case 0x200E, 0x200F, 0x061C, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }
}
