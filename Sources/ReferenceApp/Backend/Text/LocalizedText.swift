import VMHost

extension AppLocale {
    /// Simplified Chinese: the reference app's default locale.
    public static let zhHans: AppLocale = "zh-Hans"
    /// The locales the reference app offers, its default first.
    public static let referenceApp: [AppLocale] = [.zhHans, .en]
}

/// A display string of the reference app in each of its locales (``AppLocale/referenceApp``);
/// pick with ``callAsFunction(_:)``.
public struct LocalizedText: Sendable, Hashable {
    public var zhHans: String
    public var en: String

    public init(zh: String, en: String) {
        self.zhHans = zh
        self.en = en
    }

    /// The text in `locale`: English for an English locale, Chinese otherwise.
    public func callAsFunction(_ locale: AppLocale) -> String {
        locale.language == "en" ? en : zhHans
    }
}
