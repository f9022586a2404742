import VMHostWire

/// The language of display strings. Simplified Chinese unless `initialize {locale}` says English.
public enum AppLocale: String, Sendable, CaseIterable {
    case zhHans = "zh-Hans"
    case en

    /// Reads a BCP 47 language tag (SPEC §3): subtags of 1 to 8 ASCII letters or digits joined by
    /// `-`, compared without case; the first subtag picks the language: `en` (`en`, `en-US`,
    /// `en-GB`) → English, `zh` (`zh`, `zh-CN`, `zh-Hans`, `zh-Hant-TW`) → Chinese. Anything else is
    /// nil: another language, `_` as a separator (`en_US`, a POSIX locale name, not a tag), an empty
    /// or over-long subtag.
    public init?(tag: String) {
        let subtags = tag.utf8.split(separator: UInt8(ascii: "-"), omittingEmptySubsequences: false)
        guard subtags.allSatisfy({ (1...8).contains($0.count) && $0.allSatisfy(Self.isAlphanumeric) }) else { return nil }
        switch String(decoding: subtags[0], as: UTF8.self).lowercased() {
        case "en": self = .en
        case "zh": self = .zhHans
        default: return nil
        }
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }
}

/// A display string in every locale; pick with ``callAsFunction(_:)``.
public struct LocalizedText: Sendable, Hashable {
    public var zhHans: String
    public var en: String

    public init(zh: String, en: String) {
        self.zhHans = zh
        self.en = en
    }

    public func callAsFunction(_ locale: AppLocale) -> String {
        switch locale {
        case .zhHans: zhHans
        case .en: en
        }
    }
}
