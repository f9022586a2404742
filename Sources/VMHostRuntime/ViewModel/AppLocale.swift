/// The language of a view-model's display strings: a BCP 47 tag the app offers (`en`, `de-CH`,
/// `sr-Latn`). The app declares the tags it offers and its default; a client picks one with
/// `initialize {locale}` (SPEC §3) and the framework keeps only the matching rule
/// (``match(_:in:)``). The strings themselves are the app's.
public struct AppLocale: Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    /// The tag as the app declared it: what `initialize` answers and what the app's strings are keyed by.
    public let tag: String

    /// The language subtag, lowercased: `sr` of `sr-Latn`, `en` of `en-GB`. Found once, when the
    /// locale is made: an app's strings pick by it for every text they write.
    public let language: String

    /// The locale of `tag`, as the app spells it.
    public init(_ tag: String) {
        self.tag = tag
        language = Self.language(of: tag)
    }

    /// `"sr-Latn"`: the locale of that tag.
    public init(stringLiteral tag: String) { self.init(tag) }

    /// English: the locale of an app that declares none.
    public static let en: AppLocale = "en"

    /// The tag.
    public var description: String { tag }

    /// Whether `tag` is a well-formed language tag as SPEC §3 reads it: subtags of 1 to 8 ASCII
    /// letters or digits joined by `-`. `en_US` (a POSIX locale name, not a tag) is not.
    package static func isWellFormed(_ tag: String) -> Bool {
        let subtags = tag.utf8.split(separator: UInt8(ascii: "-"), omittingEmptySubsequences: false)
        return subtags.allSatisfy { (1...8).contains($0.count) && $0.allSatisfy(isAlphanumeric) }
    }

    /// The locale of `offered` that a client's `requested` tag picks, or nil when none does (or the
    /// tag is not well-formed). Compared without case, in this order:
    /// 1. the offered tag equal to `requested` (`EN-gb` picks `en-GB`);
    /// 2. the longest offered tag that `requested` extends by whole subtags (`de-CH-1996` picks `de-CH`,
    ///    `en-GB` picks `en`);
    /// 3. the first offered tag of the same language (`sr-Cyrl` and `sr` pick `sr-Latn`).
    package static func match(_ requested: String, in offered: [AppLocale]) -> AppLocale? {
        guard isWellFormed(requested) else { return nil }
        let wanted = subtags(of: requested)
        var best: (locale: AppLocale, length: Int)?
        for locale in offered {
            let candidate = subtags(of: locale.tag)
            if candidate == wanted { return locale }
            if candidate.count < wanted.count, Array(wanted.prefix(candidate.count)) == candidate,
                candidate.count > (best?.length ?? 0)
            {
                best = (locale, candidate.count)
            }
        }
        if let best { return best.locale }
        return offered.first { subtags(of: $0.tag).first == wanted.first }
    }

    /// The first subtag of `tag`, lowercased. An ASCII tag (every well-formed one) is read byte by
    /// byte, with no array of subtags made: the app's locales are made at start-up.
    private static func language(of tag: String) -> String {
        guard tag.utf8.allSatisfy({ $0 < 0x80 }) else { return subtags(of: tag).first ?? "" }
        let end = tag.utf8.firstIndex(of: UInt8(ascii: "-")) ?? tag.utf8.endIndex
        let count = tag.utf8.distance(from: tag.utf8.startIndex, to: end)
        return String(unsafeUninitializedCapacity: count) { buffer in
            for (offset, byte) in tag.utf8[..<end].enumerated() {
                buffer[offset] = (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
            }
            return count
        }
    }

    private static func subtags(of tag: String) -> [String] {
        tag.split(separator: "-", omittingEmptySubsequences: false).map { $0.lowercased() }
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}
