import Backend
import VMHost

/// Every display string of the product list, in both locales: the one string table of the module.
///
/// Cells pick their text with `Strings.x(context.locale)`. Reasons for a disabled input are not
/// here: they are for developers and always English (see ``ProductListViewModel/Reason``).
enum Strings {
    /// `saleStatus` of a product that can be bought now.
    static let onSale = LocalizedText(zh: "在售", en: "On sale")
    /// `saleStatus` of a product with no quota left.
    static let soldOut = LocalizedText(zh: "已售罄", en: "Sold out")
    /// `saleStatus` of a product not yet on sale.
    static let upcoming = LocalizedText(zh: "即将发售", en: "Upcoming")

    /// The sale status of `status`.
    static func saleStatus(_ status: SaleStatus) -> LocalizedText {
        switch status {
        case .onSale: onSale
        case .soldOut: soldOut
        case .upcoming: upcoming
        }
    }

    /// `term`: `"180天"`; `"180 days"`, `"1 day"`.
    static func term(days: Int) -> LocalizedText {
        LocalizedText(zh: NumberText.integer(days, suffix: "天"), en: days == 1 ? "1 day" : NumberText.integer(days, suffix: " days"))
    }

    /// `profit`: the rate with two decimals, then `%` (`"4.35%"` in both locales).
    static func profit(rate: Double) -> LocalizedText {
        let text = NumberText.twoDecimals(rate, suffix: "%")
        return LocalizedText(zh: text, en: text)
    }

    /// `amount`: the whole yuan grouped by thousands, after the yuan sign (`"¥50,000"` in both).
    static func amount(_ yuan: Int) -> LocalizedText {
        let text = NumberText.grouped(yuan, prefix: "¥")
        return LocalizedText(zh: text, en: text)
    }
}
