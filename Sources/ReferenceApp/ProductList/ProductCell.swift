import Backend
import VMHost

/// One row of the product list: a product's fields written for display (a cell view-model).
///
/// On the wire: `{id, name, bank, profit, saleStatus, saleStatusCode, term, amount}`, every member a
/// string, e.g. `{"id":"p001","name":"稳健增利1号","bank":"招商银行","profit":"4.35%","saleStatus":"在售",
/// "saleStatusCode":"onSale","term":"90天","amount":"¥50,000"}`; in English
/// `{"id":"p001","name":"Steady Growth 1","bank":"CMB","profit":"4.35%","saleStatus":"On sale",…}`.
public struct ProductCell: Sendable, Equatable, Codable {
    public var id: String
    public var name: String
    public var bank: String
    /// The annual rate with two decimals and `%`: `"4.35%"`.
    public var profit: String
    /// `在售` / `已售罄` / `即将发售` (`On sale` / `Sold out` / `Upcoming`).
    public var saleStatus: String
    /// The sale status as a fixed code, the same in every locale, for styling a row:
    /// `"onSale"`, `"soldOut"`, `"upcoming"`.
    public var saleStatusCode: SaleStatus
    /// The term in days: `"180天"` (`"180 days"`, `"1 day"`).
    public var term: String
    /// The minimum purchase in yuan with thousands separators: `"¥50,000"`.
    public var amount: String

    /// Formats `product` in `locale`, with every text from ``Strings`` and the demo data's names
    /// from ``DemoCatalog/name(_:in:)``.
    public init(_ product: Product, locale: AppLocale) {
        id = product.id
        // The demo data's names in the locale (English ones in English); any other name as sent.
        name = DemoCatalog.name(product.name, in: locale)
        bank = DemoCatalog.name(product.bank, in: locale)
        profit = Strings.profit(rate: product.annualRate)(locale)
        saleStatus = Strings.saleStatus(product.saleStatus)(locale)
        saleStatusCode = product.saleStatus
        term = Strings.term(days: product.termDays)(locale)
        amount = Strings.amount(product.minAmount)(locale)
    }
}

/// A cell writes its own JSON: a page of a list is a hundred cells made JSON at once, and
/// `Encodable`'s encoder costs several times the object written member by member. The text and
/// the schema are those `Codable` gave (the schema of `host.describe` is pinned by the conformance
/// transcripts).
extension ProductCell: JSONEncodable {
    public var json: JSON {
        // The members as one array (a dictionary literal makes an array of pairs, then this one).
        .object(JSONObject(members: [
            .init(key: "id", value: .string(id)), .init(key: "name", value: .string(name)),
            .init(key: "bank", value: .string(bank)), .init(key: "profit", value: .string(profit)),
            .init(key: "saleStatus", value: .string(saleStatus)),
            .init(key: "saleStatusCode", value: .string(saleStatusCode.rawValue)),
            .init(key: "term", value: .string(term)), .init(key: "amount", value: .string(amount)),
        ]))
    }

    public static var jsonSchema: JSON {
        let text: JSON = ["type": "string"]
        let names = ["id", "name", "bank", "profit", "saleStatus", "saleStatusCode", "term", "amount"]
        var properties = JSONObject()
        for name in names {
            properties.append(name, name == "saleStatusCode" ? ["type": "string", "enum": .array(SaleStatus.allCases.map { .string($0.rawValue) })] : text)
        }
        return ["type": "object", "properties": .object(properties), "required": .array(names.map { .string($0) }), "additionalProperties": false]
    }
}
