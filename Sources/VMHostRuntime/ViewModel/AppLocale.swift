import VMHostWire

/// The language of display strings. Simplified Chinese unless `initialize {locale}` says English.
public enum AppLocale: String, Sendable, CaseIterable {
    case zhHans = "zh-Hans"
    case en

    /// Reads a BCP 47 tag: `en`, `en-US` → English; `zh`, `zh-CN`, `zh-Hans` → Chinese.
    public init?(tag: String) {
        let lower = tag.lowercased()
        if lower == "en" || lower.hasPrefix("en-") || lower.hasPrefix("en_") {
            self = .en
        } else if lower == "zh" || lower.hasPrefix("zh-") || lower.hasPrefix("zh_") {
            self = .zhHans
        } else {
            return nil
        }
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
